/**
 * The mock's cache diagnostics (providers/cache-diagnoser.ts) read back the way the capture reads a
 * provider's (capture/cache-diagnostics.ts): every outcome the two documents describe, for both APIs,
 * from real bodies rendered by the real codecs.
 */
import { describe, expect, it } from "vitest";
import { readCacheDiagnostics } from "../../src/capture/cache-diagnostics.js";
import { CacheDiagnoser, type TextMeasure } from "../../src/providers/cache-diagnoser.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";

type Api = "anthropic-messages" | "openai-responses";

interface Turn {
  model?: string;
  system?: string;
  tools?: string[];
  messages: string[];
  stream?: boolean;
  compareWith?: string | null;
}

/** A request body of the API with the given parts and, when `compareWith` is set, the diagnostics request field. */
function bodyOf(api: Api, turn: Turn): string {
  const model = turn.model ?? "m";
  const texts = turn.messages.map((text, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: text }));
  const asks = turn.compareWith !== undefined;
  if (api === "anthropic-messages")
    return JSON.stringify({
      model,
      max_tokens: 10,
      system: turn.system ?? "S",
      tools: (turn.tools ?? ["read"]).map((name) => ({ name, input_schema: { type: "object" } })),
      messages: texts,
      stream: turn.stream ?? false,
      ...(asks && { diagnostics: { previous_message_id: turn.compareWith } }),
    });
  return JSON.stringify({
    model,
    instructions: turn.system ?? "S",
    tools: (turn.tools ?? ["read"]).map((name) => ({ type: "function", name, parameters: { type: "object" } })),
    input: texts,
    stream: turn.stream ?? false,
    ...(asks && turn.compareWith !== null && { prompt_cache_options: { comparison_response_id: turn.compareWith } }),
  });
}

/** Sends a turn to the diagnoser and reads its reply as the capture would; `send: false` keeps it in flight. */
async function ask(diagnoser: CacheDiagnoser, api: Api, turn: Turn, send = true) {
  const body = bodyOf(api, turn);
  const { chunks } = codecFor(api as WireApi).renderReply({ kind: "text", text: "ok" }, body);
  const reply = await diagnoser.answer(api, body, chunks);
  if (send) reply.sent();
  const text = reply.chunks.join("");
  const id = new RegExp(`"id":"(${api === "anthropic-messages" ? "msg" : "resp"}_mock_\\d+)"`).exec(text)![1]!;
  return { id, said: readCacheDiagnostics(api, body, text), text };
}

const words = (text: string) => text.split(/\s+/).length;
const wordMeasure: TextMeasure = async (use) => use(words);

describe("the mock's cache diagnostics (issue 27)", () => {
  for (const api of ["anthropic-messages", "openai-responses"] as const)
    for (const stream of [false, true])
      it(`${api}${stream ? ", streamed" : ""}: a fresh id per reply, and hit, the change kinds, not found, pending`, async () => {
        const diagnoser = new CacheDiagnoser(codecFor, wordMeasure);
        const first = await ask(diagnoser, api, { messages: ["hello"], stream, compareWith: null });
        const grown = await ask(diagnoser, api, { messages: ["hello", "ok", "more"], stream, compareWith: first.id });
        expect(grown.id).not.toBe(first.id);
        expect(grown.said).toMatchObject({ verdict: "hit", comparedWith: first.id });
        const cases: [Turn, string, string][] = [
          [{ model: "other", messages: ["hello"] }, "model_changed", "model"],
          [{ tools: ["read", "write"], messages: ["hello"] }, "tools_changed", "tools"],
          [
            { system: "T", messages: ["hello"] },
            api === "anthropic-messages" ? "system_changed" : "input_changed",
            "system",
          ],
          [{ messages: ["edited"] }, api === "anthropic-messages" ? "messages_changed" : "input_changed", "messages"],
        ];
        for (const [turn, reason, part] of cases) {
          const { said } = await ask(diagnoser, api, { ...turn, stream, compareWith: first.id });
          expect(said, reason).toMatchObject({ verdict: "miss", reason });
          expect(said!.missedTokens, reason).toBeGreaterThan(0);
          if (part !== "system" || api === "anthropic-messages") expect(said!.part).toBe(part);
        }
        expect((await ask(diagnoser, api, { messages: ["x"], stream, compareWith: "none_such" })).said).toMatchObject({
          verdict: "not-found",
        });
        const inFlight = await ask(diagnoser, api, { messages: ["slow"], stream, compareWith: null }, false);
        const early = await ask(diagnoser, api, { messages: ["slow", "ok", "next"], stream, compareWith: inFlight.id });
        // Anthropic answers a null reason while its comparison runs; OpenAI says `unavailable`.
        expect(early.said!.verdict).toBe(api === "anthropic-messages" ? "pending" : "unavailable");
      });

  it("a first Anthropic turn opts in with a null id and is answered with null diagnostics", async () => {
    const { said } = await ask(new CacheDiagnoser(codecFor, wordMeasure), "anthropic-messages", {
      messages: ["hi"],
      compareWith: null,
    });
    expect(said).toMatchObject({ source: "anthropic", verdict: "first-turn", comparedWith: null, raw: null });
  });

  it("a request that does not ask gets a fresh id and no diagnostics field", async () => {
    const { said, text } = await ask(new CacheDiagnoser(codecFor, wordMeasure), "openai-responses", {
      messages: ["hi"],
    });
    expect(said).toBeNull();
    expect(text).not.toContain("prompt_cache_diagnostics");
  });
});
