import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL_REF, resolveModel } from "../../src/providers/models.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import type { Context, Message } from "../../src/providers/types.js";
import { cut, expectRepliesReadBack, streamOf } from "./wire-streams.js";

const qwen = resolveModel(DEFAULT_MODEL_REF, "openai-completions", "http://127.0.0.1:9/v1");
const tool = {
  name: "read",
  description: "Read a file — fast.",
  parameters: { type: "object", required: ["path"], properties: { path: { type: "string", description: "Path" } } },
};
const history: Message[] = [
  { role: "user", content: "hello" },
  { role: "assistant", text: "", toolCalls: [{ id: "call_1", name: "read", arguments: '{"path":"a.txt"}' }] },
  { role: "tool", toolCallId: "call_1", toolName: "read", content: "", isError: false },
  { role: "assistant", text: "   ", toolCalls: [] },
  { role: "assistant", text: "Looking.", toolCalls: [{ id: "call_2", name: "read", arguments: "{}" }] },
  { role: "tool", toolCallId: "call_2", toolName: "read", content: "text\nback", isError: true },
];
const build = (context: Partial<Context>, model = qwen) =>
  openaiCompletions.buildRequest(
    model,
    { systemPrompt: "SYS", messages: [{ role: "user", content: "hi" }], tools: [tool], ...context },
    "loop",
  );

describe("openai-completions request body (pi-runtime.md §7.1, §8)", () => {
  it("for token-plan/qwen3.8-flash with thinking off, keys are model, messages, stream, stream_options, max_completion_tokens, tools, enable_thinking", () => {
    const request = build({});
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      "model",
      "messages",
      "stream",
      "stream_options",
      "max_completion_tokens",
      "tools",
      "enable_thinking",
    ]);
    expect(body).toMatchObject({
      model: "qwen3.8-flash",
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 131072,
      enable_thinking: false,
    });
    expect(request.url).toBe("http://127.0.0.1:9/v1/chat/completions");
    expect(request.body).toBe(JSON.stringify(body));
  });

  it("a model without reasoning has no enable_thinking key and pi's default max tokens", () => {
    const body = JSON.parse(build({}, resolveModel("mock/mock-model", "openai-completions")).body) as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual([
      "model",
      "messages",
      "stream",
      "stream_options",
      "max_completion_tokens",
      "tools",
    ]);
    expect(body.max_completion_tokens).toBe(16384);
  });

  it("each tool is {type:function, function:{name, description, parameters, strict:false}}", () => {
    const body = JSON.parse(build({}).body) as { tools: unknown[] };
    expect(JSON.stringify(body.tools)).toBe(
      '[{"type":"function","function":{"name":"read","description":"Read a file — fast.","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path"}}},"strict":false}}]',
    );
  });

  it("messages: system text, user content parts, assistant content null or text with tool_calls, tool results with (no tool output); empty assistant turns dropped", () => {
    const body = JSON.parse(build({ messages: history }).body) as { messages: unknown[] };
    expect(body.messages.map((m) => JSON.stringify(m))).toEqual([
      '{"role":"system","content":"SYS"}',
      '{"role":"user","content":[{"type":"text","text":"hello"}]}',
      '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}}]}',
      '{"role":"tool","content":"(no tool output)","tool_call_id":"call_1"}',
      '{"role":"assistant","content":"Looking.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"read","arguments":"{}"}}]}',
      '{"role":"tool","content":"text\\nback","tool_call_id":"call_2"}',
    ]);
  });

  it("tools are omitted when there are none, but sent as [] when the history has tool calls", () => {
    expect(JSON.parse(build({ tools: [] }).body)).not.toHaveProperty("tools");
    expect(JSON.parse(build({ tools: [], messages: history }).body).tools).toEqual([]);
  });
});

describe("openai-completions SSE response (pi-runtime.md §8)", () => {
  const sse = [
    `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}`,
    `data: {"choices":[{"index":0,"delta":{"content":"look."}}]}`,
    `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"re","arguments":""}}]}}]}`,
    `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"ad","arguments":"{\\"pa"}}]}}]}`,
    `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"bash","arguments":"{\\"command\\":"}}]}}]}`,
    `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\\":\\"a.txt\\"}"}}]}}]}`,
    `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\\"ls\\"}"}}]}}]}`,
    `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
    `data: {"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}}`,
    `data: [DONE]`,
    `data: {"choices":[{"index":0,"delta":{"content":"after DONE is ignored"}}]}`,
  ].join("\r\n\r\n");

  it("assembles text and tool calls from deltas however the stream is chunked, across lines and mid-line", async () => {
    for (const size of [1, 7, 64, sse.length]) {
      const response = await openaiCompletions.parseStream(streamOf(cut(sse, size)));
      expect(response.message).toEqual({
        role: "assistant",
        text: "Let me look.",
        toolCalls: [
          { id: "call_a", name: "read", arguments: '{"path":"a.txt"}' },
          { id: "call_b", name: "bash", arguments: '{"command":"ls"}' },
        ],
      });
      expect(response.usage).toMatchObject({ inputTokens: 120, outputTokens: 7, cachedInputTokens: 64 });
    }
  });

  it("a reply rendered by the codec parses back to the same message, streamed or as one JSON body", async () => {
    const streamed = build({}).body;
    const whole = await expectRepliesReadBack(openaiCompletions, streamed, [
      { id: "call_1_1", name: "mcp", arguments: '{"search":"x"}' },
    ]);
    const counted = { kind: "text" as const, text: "DONE", usage: { inputTokens: 9, outputTokens: 1 } };
    const withoutOption = JSON.stringify({ ...JSON.parse(streamed), stream_options: undefined });
    const unasked = openaiCompletions.renderReply(counted, withoutOption).chunks;
    expect((await openaiCompletions.parseStream(streamOf(unasked))).usage).toBeUndefined();
    const sse = openaiCompletions.renderReply({ kind: "text", text: "DONE" }, streamed).chunks;
    expect(sse.at(-1)).toBe("data: [DONE]\n\n");
    const json = JSON.parse(openaiCompletions.renderReply({ kind: "text", text: "DONE" }, whole).chunks.join(""));
    expect(json).toMatchObject({
      object: "chat.completion",
      model: "qwen3.8-flash",
      choices: [{ message: { role: "assistant", content: "DONE" }, finish_reason: "stop" }],
    });
  });

  it("a stream: false answer (one chat.completion object) parses with its usage, cached tokens included", async () => {
    const body = JSON.stringify({
      id: "x",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 50, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 32 } },
    });
    const response = await openaiCompletions.parseStream(streamOf([body.slice(0, 10), body.slice(10)]));
    expect(response.message.toolCalls).toEqual([{ id: "c1", name: "read", arguments: '{"path":"a"}' }]);
    expect(response.usage).toEqual({
      source: "provider",
      inputTokens: 50,
      outputTokens: 4,
      cachedInputTokens: 32,
      raw: JSON.parse(body).usage,
    });
  });

  it("SSE follows the format's rules: a multi-line data field is one payload, event lines and comments are read", async () => {
    const chunk = (content: string) => JSON.stringify({ choices: [{ index: 0, delta: { content } }] });
    // The same JSON payload split over two `data:` lines joins with a line break, which JSON allows.
    const split = chunk("one ").replace('"choices":', '"choices":\ndata: ');
    const sse = `: keep-alive\n\nevent: message\ndata: ${split}\n\nevent: message\r\ndata: ${chunk("two")}\r\n\ndata: [DONE]`;
    for (const size of [1, 5, sse.length]) {
      expect((await openaiCompletions.parseStream(streamOf(cut(sse, size)))).message.text).toBe("one two");
    }
  });
});
