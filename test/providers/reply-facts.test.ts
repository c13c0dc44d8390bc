import { describe, expect, it } from "vitest";
import { codecFor } from "../../src/providers/codecs.js";
import { resolveModel } from "../../src/providers/models.js";
import { replyFacts } from "../../src/providers/reply-facts.js";
import { sseEvent } from "../../src/providers/response-body.js";
import { WIRE_APIS, type WireApi } from "../../src/providers/types.js";

/** A request of `api` as the runtime builds it, and a reply rendered by the API's own codec. */
function rendered(api: WireApi, reply: Parameters<ReturnType<typeof codecFor>["renderReply"]>[0]): string {
  const codec = codecFor(api);
  const model = resolveModel("test/mock-model", api, "http://127.0.0.1:9");
  const request = codec.buildRequest(
    model,
    { systemPrompt: "S", messages: [{ role: "user", content: "hi" }], tools: [] },
    "loop",
  );
  return codec.renderReply(reply, request.body, request.url).chunks.join("");
}

describe("replyFacts: the stop reason and thinking of a reply, in the provider's words", () => {
  const stops: Record<WireApi, [string, string]> = {
    "openai-completions": ["stop", "tool_calls"],
    "anthropic-messages": ["end_turn", "tool_use"],
    "openai-responses": ["completed", "completed"],
    "google-generative-ai": ["STOP", "STOP"],
    "bedrock-converse": ["end_turn", "tool_use"],
  };
  it.each(WIRE_APIS)("%s: a text reply and a tool call as the codec renders them", (api) => {
    const text = replyFacts(api, rendered(api, { kind: "text", text: "done" }));
    const calls = replyFacts(
      api,
      rendered(api, { kind: "tool_calls", calls: [{ id: "c1", name: "read", arguments: "{}" }] }),
    );
    expect([text.stopReason, calls.stopReason]).toEqual(stops[api]);
    expect(text.thinkingChars + calls.thinkingChars).toBe(0);
  });

  it("anthropic-messages: thinking deltas counted, redacted blocks counted apart, stop_reason from message_delta", () => {
    const body = [
      sseEvent({ type: "message_start", message: { content: [], usage: { input_tokens: 3 } } }, "message_start"),
      sseEvent({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
      sseEvent({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } }),
      sseEvent({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "see." } }),
      sseEvent({ type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "x" } }),
      sseEvent({ type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 9 } }),
    ].join("");
    expect(replyFacts("anthropic-messages", body)).toEqual({
      stopReason: "max_tokens",
      thinkingChars: 11,
      hiddenThinking: 1,
    });
  });

  it("openai-completions, openai-responses and gemini: reasoning text, summaries and thought parts", () => {
    const completions = JSON.stringify({
      choices: [{ message: { content: "a", reasoning_content: "abcd" }, finish_reason: "length" }],
    });
    expect(replyFacts("openai-completions", completions)).toEqual({
      stopReason: "length",
      thinkingChars: 4,
      hiddenThinking: 0,
    });
    const responses = sseEvent({
      type: "response.incomplete",
      response: {
        object: "response",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [{ type: "reasoning", summary: [{ type: "summary_text", text: "abc" }], encrypted_content: "zz" }],
      },
    });
    expect(replyFacts("openai-responses", responses)).toEqual({
      stopReason: "incomplete (max_output_tokens)",
      thinkingChars: 3,
      hiddenThinking: 1,
    });
    const gemini = JSON.stringify([
      { candidates: [{ content: { parts: [{ text: "hmm", thought: true }] } }] },
      { candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "MAX_TOKENS" }] },
    ]);
    expect(replyFacts("google-generative-ai", gemini)).toEqual({
      stopReason: "MAX_TOKENS",
      thinkingChars: 3,
      hiddenThinking: 0,
    });
  });
});
