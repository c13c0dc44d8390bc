import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL_REF, resolveModel } from "../../src/providers/models.js";
import { openaiResponses, PROBE_PROMPT_CACHE_KEY } from "../../src/providers/openai-responses.js";
import type { Context, Message } from "../../src/providers/types.js";
import { cut, expectRepliesReadBack, streamOf } from "./wire-streams.js";

const qwen = resolveModel(DEFAULT_MODEL_REF, "openai-responses", "http://127.0.0.1:9/v1");
const read = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", required: ["path"], properties: { path: { type: "string" } } },
};
const history: Message[] = [
  { role: "user", content: "hello" },
  { role: "assistant", text: "", toolCalls: [{ id: "call_1", name: "read", arguments: '{"path":"a"}' }] },
  { role: "tool", toolCallId: "call_1", toolName: "read", content: "A", isError: false },
  { role: "assistant", text: "It says A.", toolCalls: [] },
  { role: "user", content: "thanks" },
];
const build = (context: Partial<Context>, model = qwen) =>
  openaiResponses.buildRequest(
    model,
    { systemPrompt: "SYS", messages: [{ role: "user", content: "hi" }], tools: [read], ...context },
    "loop",
  );
const parse = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe("openai-responses request body (pi-runtime.md §7.2)", () => {
  it("keys are model, input, stream, prompt_cache_key, store, max_output_tokens, tools; POST {baseUrl}/responses", () => {
    const request = build({});
    const body = parse(request.body);
    expect(Object.keys(body)).toEqual([
      "model",
      "input",
      "stream",
      "prompt_cache_key",
      "store",
      "max_output_tokens",
      "tools",
    ]);
    expect(body).toMatchObject({
      stream: true,
      prompt_cache_key: PROBE_PROMPT_CACHE_KEY,
      store: false,
      max_output_tokens: 131072,
    });
    expect(request.url).toBe("http://127.0.0.1:9/v1/responses");
    expect(build({}).body).toBe(request.body);
  });

  it("tools are flat {type, name, description, parameters}; none → no tools key", () => {
    expect(JSON.stringify(parse(build({}).body).tools)).toBe(
      '[{"type":"function","name":"read","description":"Read a file","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}}]',
    );
    expect(Object.keys(parse(build({ tools: [] }).body))).not.toContain("tools");
  });

  it("the system prompt and the environment part are developer items for a reasoning model, system items otherwise", () => {
    const items = (model = qwen) => parse(build({ environment: "ENV" }, model).body).input as unknown[];
    expect(items().slice(0, 2)).toEqual([
      { role: "developer", content: "SYS" },
      { role: "developer", content: "ENV" },
    ]);
    const plain = resolveModel("mock/plain", "openai-responses");
    expect(items(plain).slice(0, 2)).toEqual([
      { role: "system", content: "SYS" },
      { role: "system", content: "ENV" },
    ]);
    expect((parse(build({ systemPrompt: "" }).body).input as unknown[])[0]).toMatchObject({ role: "user" });
  });

  it("items: user input_text parts, function_call, function_call_output, assistant message items with stable ids", () => {
    const input = parse(build({ messages: history }).body).input as unknown[];
    expect(JSON.stringify(input.slice(1))).toBe(
      JSON.stringify([
        { role: "user", content: [{ type: "input_text", text: "hello" }] },
        { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a"}' },
        { type: "function_call_output", call_id: "call_1", output: "A" },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "It says A.", annotations: [] }],
          status: "completed",
          id: "msg_2",
        },
        { role: "user", content: [{ type: "input_text", text: "thanks" }] },
      ]),
    );
  });
});

describe("openai-responses dissection of any client's body", () => {
  it("takes our body apart: developer items are system parts, function_call reads assistant, its output tool", () => {
    const d = openaiResponses.dissect(build({ messages: history, environment: "ENV" }).body);
    expect(d.systemParts).toEqual(["SYS", "ENV"]);
    expect(d.roles).toEqual(["developer", "developer", "user", "assistant", "tool", "assistant", "user"]);
    expect(d.messages.map((m) => m.text)).toEqual(["hello", 'read {"path":"a"}', "A", "It says A.", "thanks"]);
    expect(d.tools.map((t) => t.name)).toEqual(["read"]);
    expect(d.cacheBreakpoints).toEqual([]);
  });

  it("reads the official SDK's shapes: instructions, input as one string, built-in tools, reasoning items", () => {
    const d = openaiResponses.dissect(
      JSON.stringify({ model: "gpt-5", instructions: "Be brief.", input: "Hi there", tools: [{ type: "web_search" }] }),
    );
    expect(d).toMatchObject({ model: "gpt-5", systemParts: ["Be brief."], roles: ["system", "user"] });
    expect(d.messages).toEqual([{ role: "user", json: '{"role":"user","content":"Hi there"}', text: "Hi there" }]);
    expect(d.tools).toEqual([{ name: "web_search", json: '{"type":"web_search"}' }]);
    const items = openaiResponses.dissect(
      JSON.stringify({
        model: "gpt-5",
        instructions: "Be brief.",
        input: [
          { type: "message", role: "system", content: [{ type: "input_text", text: "House rules." }] },
          { type: "message", role: "user", content: "Go" },
          { type: "reasoning", id: "rs_1", summary: [] },
          { type: "function_call", id: "fc_1", call_id: "c1", name: "ls", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "a.txt" }] },
        ],
      }),
    );
    expect(items.systemParts).toEqual(["Be brief.", "House rules."]);
    expect(items.roles).toEqual(["system", "system", "user", "reasoning", "assistant", "tool"]);
    expect(items.messages.map((m) => m.text)).toEqual(["Go", "", "ls {}", "a.txt"]);
  });
});

describe("openai-responses responses", () => {
  const completed = {
    id: "resp_1",
    object: "response",
    status: "completed",
    output: [
      { id: "msg_1", type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
      { id: "fc_1", type: "function_call", call_id: "call_x", name: "read", arguments: '{"path":"b"}' },
    ],
    usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 768 }, output_tokens: 20, total_tokens: 920 },
  };

  it("assembles items from deltas when the stream has no done events, and takes usage from response.completed", async () => {
    const events = [
      { type: "response.created", response: { id: "resp_1", output: [] } },
      { type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", content: [] } },
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "Check" },
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "ing." },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { id: "fc_1", type: "function_call", call_id: "call_x", name: "read", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", output_index: 1, delta: '{"path"' },
      { type: "response.function_call_arguments.delta", output_index: 1, delta: ':"b"}' },
      { type: "response.completed", response: { ...completed, output: [] } },
    ];
    const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
    for (const size of [1, 17, sse.length]) {
      const response = await openaiResponses.parseStream(streamOf(cut(sse, size)));
      expect(response.message).toEqual({
        role: "assistant",
        text: "Checking.",
        toolCalls: [{ id: "call_x", name: "read", arguments: '{"path":"b"}' }],
      });
      expect(response.usage).toEqual({
        source: "provider",
        inputTokens: 900,
        outputTokens: 20,
        cachedInputTokens: 768,
        raw: completed.usage,
      });
    }
  });

  it("reads a non-streamed Response object", async () => {
    const response = await openaiResponses.parseStream(streamOf(cut(JSON.stringify(completed), 9)));
    expect(response.message.text).toBe("Checking.");
    expect(response.message.toolCalls).toEqual([{ id: "call_x", name: "read", arguments: '{"path":"b"}' }]);
    expect(response.usage?.cachedInputTokens).toBe(768);
  });

  it("renders scripted replies as the request asks (numbered SSE events, or one Response) and reads them back", async () => {
    const streamed = build({}).body;
    const whole = await expectRepliesReadBack(openaiResponses, streamed, [
      { id: "call_1_1", name: "read", arguments: '{"path":"a"}' },
    ]);
    expect(
      JSON.parse(openaiResponses.renderReply({ kind: "text", text: "DONE" }, whole).chunks.join("")),
    ).toMatchObject({
      object: "response",
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "DONE" }] }],
    });
    const chunks = openaiResponses.renderReply({ kind: "text", text: "DONE" }, streamed).chunks;
    const numbers = chunks.map(
      (c) => (JSON.parse(c.split("\ndata: ")[1]!) as { sequence_number: number }).sequence_number,
    );
    expect(numbers).toEqual(chunks.map((_, i) => i));
    expect(chunks[0]!.startsWith("event: response.created\n")).toBe(true);
    expect(chunks.at(-1)!.startsWith("event: response.completed\n")).toBe(true);
  });
});
