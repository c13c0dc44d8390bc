/**
 * The Gemini codec on its own: the body the runtime sends, a client's body taken apart (function
 * declarations and other tools, the system instruction, roles, parts, inline data as a size, the
 * model from the URL), prefix analysis over it, the three response forms read back, usage in our
 * vocabulary, and where a stream counts as ended.
 */
import { describe, expect, it } from "vitest";
import { PrefixLocator } from "../../src/capture/prefix.js";
import { apiForPath, requestProblem, streamReachedEnd } from "../../src/capture/wire-request.js";
import { googleGenerativeAi as codec, geminiEndpoint } from "../../src/providers/google-generative-ai.js";
import { baseUrlFor, resolveModel } from "../../src/providers/models.js";
import type { ScriptedReply } from "../../src/providers/types.js";

const model = resolveModel(
  "google/gemini-2.5-flash",
  "google-generative-ai",
  baseUrlFor("google-generative-ai", "http://h:1/v1"),
);

const stream = (chunks: string[]) =>
  (async function* () {
    yield* chunks;
  })();

describe("the Gemini request", () => {
  it("the runtime's turn: SSE stream URL with the model, contents of user/model turns, results answered together", () => {
    const request = codec.buildRequest(
      model,
      {
        systemPrompt: "Be brief.",
        environment: "cwd: /w",
        tools: [{ name: "read", description: "Reads.", parameters: { type: "object", properties: {} } }],
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            text: "",
            toolCalls: [
              { id: "c1", name: "read", arguments: '{"path":"a"}' },
              { id: "c2", name: "read", arguments: "{}" },
            ],
          },
          { role: "tool", toolCallId: "c1", toolName: "read", content: "A", isError: false },
          { role: "tool", toolCallId: "c2", toolName: "read", content: "nope", isError: true },
        ],
      },
      "loop",
    );
    expect(request.url).toBe("http://h:1/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["contents", "systemInstruction", "tools", "generationConfig"]);
    expect(body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }, { text: "cwd: /w" }] });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "hi" }] },
      {
        role: "model",
        parts: [
          { functionCall: { id: "c1", name: "read", args: { path: "a" } } },
          { functionCall: { id: "c2", name: "read", args: {} } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "c1", name: "read", response: { output: "A" } } },
          { functionResponse: { id: "c2", name: "read", response: { error: "nope" } } },
        ],
      },
    ]);
    const d = codec.dissect(request.body, request.url);
    expect(d.model).toBe("gemini-2.5-flash");
    expect(d.roles).toEqual(["system", "system", "user", "assistant", "tool"]);
  });

  it("a client's body: declarations one tool each, built-in tools kept whole, inline data as a size", () => {
    const body = JSON.stringify({
      contents: [
        {
          role: "user",
          parts: [{ text: "look" }, { inlineData: { mimeType: "image/png", data: "AAAA".repeat(100) } }],
        },
        {
          role: "model",
          parts: [{ text: "thinking", thought: true }, { functionCall: { name: "grep", args: { q: "x" } } }],
        },
      ],
      systemInstruction: { role: "user", parts: [{ text: "S1" }, { text: "S2" }] },
      tools: [{ functionDeclarations: [{ name: "grep" }, { name: "ls" }] }, { googleSearch: {} }],
      generationConfig: { temperature: 0, responseMimeType: "application/json" },
      cachedContent: "cachedContents/abc",
    });
    const d = codec.dissect(body, "https://g/v1beta/models/gemini-2.5-pro:generateContent?key=[redacted]");
    expect(d.model).toBe("gemini-2.5-pro");
    expect(d.tools.map((t) => t.name)).toEqual(["grep", "ls", "googleSearch"]);
    expect(d.tools[2]!.json).toBe('{"googleSearch":{}}');
    expect(d.systemParts).toEqual(["S1", "S2"]);
    expect(d.roles).toEqual(["system", "system", "user", "assistant"]);
    expect(d.messages[0]!.text).toBe("look\n[image/png, 300 bytes]");
    expect(d.messages[1]!.text).toBe('thinking\ngrep {"q":"x"}');
    expect(d.cachedContent).toBe("cachedContents/abc");
    expect(d.settingsJson).toBe('{"temperature":0,"responseMimeType":"application/json"}');
  });

  it("prefix analysis reads Gemini bodies as the others': a turn appended keeps the prefix, a declaration added breaks it in tools", () => {
    const body = (declarations: string[], turns: number) =>
      JSON.stringify({
        contents: Array.from({ length: turns }, (_, i) => ({
          role: i % 2 ? "model" : "user",
          parts: [{ text: `t${i}` }],
        })),
        systemInstruction: { parts: [{ text: "S" }] },
        tools: [{ functionDeclarations: declarations.map((name) => ({ name })) }],
      });
    const locator = new PrefixLocator();
    const first = codec.dissect(body(["a"], 1));
    expect(locator.locate(first, codec.dissect(body(["a"], 3))).breakAt).toBeNull();
    const broken = locator.locate(first, codec.dissect(body(["a", "b"], 3)));
    expect(broken.breakAt).toBe("tools");
    expect(broken.breakDetail).toBe("tools[1] added: b");
  });

  it("paths: the generate methods under v1beta and v1 are the API; countTokens and others are not", () => {
    expect(apiForPath("/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent")).toBe("google-generative-ai");
    expect(apiForPath("/v1/models/gemini-2.5-flash:generateContent")).toBe("google-generative-ai");
    expect(apiForPath("/v1beta/models/gemini-2.5-flash:countTokens")).toBeNull();
    expect(apiForPath("/v1beta/models")).toBeNull();
    // Vertex AI (issue 42): Gemini under publishers/google, and Anthropic's models under publishers/anthropic.
    const vertex = "/v1/projects/p-1/locations/us-central1/publishers";
    expect(apiForPath(`${vertex}/google/models/gemini-2.5-pro:streamGenerateContent`)).toBe("google-generative-ai");
    expect(geminiEndpoint(`http://h${vertex}/google/models/gemini-2.5-pro:generateContent`)?.model).toBe(
      "gemini-2.5-pro",
    );
    expect(apiForPath(`${vertex}/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict`)).toBe(
      "anthropic-messages",
    );
    expect(apiForPath("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke")).toBe("anthropic-messages");
    // Bedrock's Converse is a wire API of its own (bedrock-converse.test.ts).
    expect(apiForPath("/model/x/converse")).toBe("bedrock-converse");
    expect(geminiEndpoint("http://h/v1beta/models/m:streamGenerateContent?alt=sse")).toEqual({
      version: "v1beta",
      model: "m",
      method: "streamGenerateContent",
      sse: true,
    });
  });

  it("bad bodies name the field", () => {
    expect(requestProblem("google-generative-ai", "{}")?.message).toContain("'contents'");
    expect(requestProblem("google-generative-ai", '{"contents":[{"role":"user"}]}')?.message).toContain(
      "contents[0].parts",
    );
    const tools = '{"contents":[],"tools":[{"functionDeclarations":[{"name":3}]}]}';
    expect(requestProblem("google-generative-ai", tools)?.message).toContain("tools[0].functionDeclarations[0].name");
    expect(requestProblem("google-generative-ai", '{"contents":[],"systemInstruction":"be kind"}')).toBeNull();
  });
});

describe("the Gemini response", () => {
  const text: ScriptedReply = { kind: "text", text: "one two three four", usage: { inputTokens: 30, outputTokens: 4 } };
  const url = (form: string) => `http://h/v1beta/models/m:${form}`;

  it.each([
    ["streamGenerateContent?alt=sse", true],
    ["streamGenerateContent", true],
    ["generateContent", false],
  ] as const)("%s: rendered and read back to the same text and usage", async (form, streamed) => {
    const rendered = codec.renderReply(text, "{}", url(form));
    expect(rendered.streamed).toBe(streamed);
    if (streamed) expect(rendered.chunks.length).toBeGreaterThan(1);
    const response = await codec.parseStream(stream(rendered.chunks));
    expect(response.message.text).toBe("one two three four");
    expect(response.usage).toMatchObject({ source: "provider", inputTokens: 30, outputTokens: 4 });
    expect(streamReachedEnd("google-generative-ai", rendered.chunks.join("")).ended).toBe(true);
    // A stream cut before its last chunk lacks the finishReason.
    if (streamed)
      expect(streamReachedEnd("google-generative-ai", rendered.chunks.slice(0, -1).join("")).ended).toBe(false);
  });

  it("an array stream cut part-way still gives the chunks that came whole, braces and quotes in texts included", async () => {
    const reply: ScriptedReply = {
      kind: "text",
      text: 'a {"b": "}" c\\" d e f',
      usage: { inputTokens: 3, outputTokens: 2 },
    };
    const rendered = codec.renderReply(reply, "{}", url("streamGenerateContent"));
    const whole = await codec.parseStream(stream(rendered.chunks));
    expect(whole.message.text).toBe(reply.text);
    const cut = rendered.chunks.join("").slice(0, rendered.chunks.slice(0, -1).join("").length + 20);
    const partial = await codec.parseStream(stream([cut]));
    expect(reply.text.startsWith(partial.message.text)).toBe(true);
    expect(partial.message.text.length).toBeLessThan(reply.text.length);
    expect(partial.usage).toBeUndefined();
  });

  it("a refused prompt (blockReason, no candidate) ends its stream; a candidate without finishReason does not", () => {
    const blocked = `data: ${JSON.stringify({ promptFeedback: { blockReason: "SAFETY" } })}\n\n`;
    expect(streamReachedEnd("google-generative-ai", blocked).ended).toBe(true);
    const open = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: "blockReason" }] } }] })}\n\n`;
    expect(streamReachedEnd("google-generative-ai", open).ended).toBe(false);
  });

  it("calls without ids get one by position; usage keeps cached, thought and tool-use tokens apart from the raw", async () => {
    const body = JSON.stringify({
      candidates: [
        { content: { role: "model", parts: [{ functionCall: { name: "ls", args: {} } }] }, finishReason: "STOP" },
      ],
      usageMetadata: {
        promptTokenCount: 5000,
        cachedContentTokenCount: 4096,
        toolUsePromptTokenCount: 10,
        candidatesTokenCount: 7,
        thoughtsTokenCount: 100,
        totalTokenCount: 5117,
      },
    });
    const response = await codec.parseStream(stream([body]));
    expect(response.message.toolCalls).toEqual([{ id: "call_1", name: "ls", arguments: "{}" }]);
    expect(response.usage).toMatchObject({ inputTokens: 5010, outputTokens: 107, cachedInputTokens: 4096 });
    expect(response.usage?.raw.totalTokenCount).toBe(5117);
  });
});
