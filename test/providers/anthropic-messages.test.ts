import { describe, expect, it } from "vitest";
import { locatePrefixBreak } from "../../src/capture/prefix.js";
import { anthropicMessages } from "../../src/providers/anthropic-messages.js";
import { DEFAULT_MODEL_REF, resolveModel } from "../../src/providers/models.js";
import type { Context, Message } from "../../src/providers/types.js";
import { cut, expectRepliesReadBack, streamOf } from "./wire-streams.js";

const model = resolveModel(DEFAULT_MODEL_REF, "anthropic-messages", "http://127.0.0.1:9");
const read = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", required: ["path"], properties: { path: { type: "string" } } },
};
const ls = { name: "ls", description: "List", parameters: { type: "object", properties: {} } };
const history: Message[] = [
  { role: "user", content: "hello" },
  {
    role: "assistant",
    text: "Two reads.",
    toolCalls: [
      { id: "call_1", name: "read", arguments: '{"path":"a"}' },
      { id: "call_2", name: "read", arguments: "not json" },
    ],
  },
  { role: "tool", toolCallId: "call_1", toolName: "read", content: "A", isError: false },
  { role: "tool", toolCallId: "call_2", toolName: "read", content: "no such file", isError: true },
  { role: "assistant", text: "  ", toolCalls: [] },
];
const build = (context: Partial<Context>) =>
  anthropicMessages.buildRequest(
    model,
    { systemPrompt: "SYS", messages: [{ role: "user", content: "hi" }], tools: [read, ls], ...context },
    "loop",
  );
const parse = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe("anthropic-messages request body (pi-runtime.md §7.2)", () => {
  it("keys are model, messages, max_tokens, stream, system, tools; the URL adds /v1/messages?beta=true to a base without /v1", () => {
    const request = build({});
    expect(Object.keys(parse(request.body))).toEqual(["model", "messages", "max_tokens", "stream", "system", "tools"]);
    expect(parse(request.body)).toMatchObject({ model: "qwen3.8-flash", max_tokens: 131072, stream: true });
    expect(request.url).toBe("http://127.0.0.1:9/v1/messages?beta=true");
    expect(resolveModel(DEFAULT_MODEL_REF, "anthropic-messages").baseUrl).toBe("http://127.0.0.1");
  });

  it("the system prompt is one text block with a breakpoint; the environment part follows without one", () => {
    expect(JSON.stringify(parse(build({ environment: "ENV" }).body).system)).toBe(
      '[{"type":"text","text":"SYS","cache_control":{"type":"ephemeral"}},{"type":"text","text":"ENV"}]',
    );
    expect(Object.keys(parse(build({ systemPrompt: "" }).body))).not.toContain("system");
    expect(Object.keys(parse(build({ tools: [] }).body))).not.toContain("tools");
  });

  it("tools are {name, description, eager_input_streaming, input_schema}; only the last has cache_control", () => {
    expect(JSON.stringify(parse(build({}).body).tools)).toBe(
      '[{"name":"read","description":"Read a file","eager_input_streaming":true,"input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},' +
        '{"name":"ls","description":"List","eager_input_streaming":true,"input_schema":{"type":"object","properties":{},"required":[]},"cache_control":{"type":"ephemeral"}}]',
    );
  });

  it("consecutive tool results are one user message of tool_result blocks; the last user block carries the breakpoint", () => {
    const messages = parse(build({ messages: history }).body).messages;
    expect(JSON.stringify(messages)).toBe(
      JSON.stringify([
        { role: "user", content: [{ type: "text", text: "hello" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Two reads." },
            { type: "tool_use", id: "call_1", name: "read", input: { path: "a" } },
            { type: "tool_use", id: "call_2", name: "read", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "A", is_error: false },
            {
              type: "tool_result",
              tool_use_id: "call_2",
              content: "no such file",
              is_error: true,
              cache_control: { type: "ephemeral" },
            },
          ],
        },
      ]),
    );
  });

  it("a growing conversation has no prefix break, though the breakpoint moves to the newest user block", () => {
    const first = anthropicMessages.dissect(build({ messages: history.slice(0, 1) }).body);
    const second = anthropicMessages.dissect(build({ messages: history.slice(0, 4) }).body);
    expect(first.messages[0]!.json).toContain("cache_control");
    expect(second.messages[0]!.json).not.toContain("cache_control");
    expect(locatePrefixBreak(first, second)).toMatchObject({ breakAt: null, breakDetail: null });
    const edited = anthropicMessages.dissect(
      build({ messages: [{ role: "user", content: "HELLO" }, ...history.slice(1, 4)] }).body,
    );
    expect(locatePrefixBreak(second, edited).breakDetail).toMatch(/^messages\[0\] edited \(user\)/);
  });
});

describe("anthropic-messages dissection of any client's body", () => {
  it("takes our body apart: tools, system blocks, roles (tool results read `tool`) and every breakpoint", () => {
    const d = anthropicMessages.dissect(build({ messages: history, environment: "ENV" }).body);
    expect(d.tools.map((t) => t.name)).toEqual(["read", "ls"]);
    expect(d.systemParts).toEqual(["SYS", "ENV"]);
    expect(d.roles).toEqual(["system", "system", "user", "assistant", "tool"]);
    expect(d.messages[1]!.text).toBe('Two reads.\nread {"path":"a"}\nread {}');
    expect(d.messages[2]!.text).toBe("A\nno such file");
    expect(d.cacheBreakpoints).toEqual([
      { part: "tools", index: 1, ttl: "5m" },
      { part: "system", index: 0, ttl: "5m" },
      { part: "messages", index: 2, block: 1, ttl: "5m" },
    ]);
    expect(d.tools[1]!.prefixJson).not.toContain("cache_control");
    expect(d.tools[0]!.prefixJson).toBeUndefined();
  });

  it("reads the official SDK's shapes: system and content as strings, tool_result content as blocks, a 1h ttl", () => {
    const body = JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      system: "You are terse.",
      messages: [
        { role: "user", content: "What is in a.txt?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "text", text: "ALPHA", cache_control: { type: "ephemeral", ttl: "1h" } }],
            },
            { type: "text", text: "Summarise it." },
          ],
        },
      ],
    });
    const d = anthropicMessages.dissect(body);
    expect(d).toMatchObject({
      model: "claude-sonnet-4-5",
      tools: [],
      toolsJson: null,
      systemParts: ["You are terse."],
    });
    expect(d.roles).toEqual(["system", "user", "assistant", "user"]);
    expect(d.messages.map((m) => m.text)).toEqual([
      "What is in a.txt?",
      'read {"path":"a.txt"}',
      "ALPHA\nSummarise it.",
    ]);
    expect(d.messages[0]!.json).toBe('{"role":"user","content":"What is in a.txt?"}');
    expect(d.cacheBreakpoints).toEqual([{ part: "messages", index: 2, block: 0, ttl: "1h" }]);
    expect(d.messages[2]!.prefixJson).not.toContain("cache_control");
  });

  it("tolerates a body with no system, messages or tools at all", () => {
    expect(anthropicMessages.dissect('{"model":"m"}')).toEqual({
      model: "m",
      tools: [],
      toolsJson: null,
      systemParts: [],
      messages: [],
      roles: [],
      cacheBreakpoints: [],
      messageCacheSettings: '{"tool_choice":null,"thinking":null,"images":0}',
    });
  });

  it("a string content and one text block share one prefix text; a top-level cache_control is a breakpoint on the last block (automatic caching)", () => {
    const asString = anthropicMessages.dissect(
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], cache_control: { type: "ephemeral" } }),
    );
    const asBlock = anthropicMessages.dissect(
      JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      }),
    );
    expect(asString.messages[0]!.prefixJson).toBe(asBlock.messages[0]!.prefixJson);
    expect(asString.cacheBreakpoints).toEqual([{ part: "messages", index: 0, block: 0, ttl: "5m" }]);
  });
});

describe("anthropic-messages responses", () => {
  const events = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          content: [],
          usage: {
            input_tokens: 12,
            cache_read_input_tokens: 2000,
            cache_creation_input_tokens: 300,
            cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
            output_tokens: 1,
          },
        },
      },
    ],
    ["ping", { type: "ping" }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Reading " } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "now." } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "content_block_start",
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_9", name: "read", input: {} },
      },
    ],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"pa' } },
    ],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'th":"a"}' } },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use" },
        usage: { output_tokens: 42, input_tokens: null },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ] as const;
  const sse = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");

  it("assembles text and tool_use blocks from SSE however it is chunked, with usage from message_start and message_delta", async () => {
    for (const size of [1, 13, sse.length]) {
      const response = await anthropicMessages.parseStream(streamOf(cut(sse, size)));
      expect(response.message).toEqual({
        role: "assistant",
        text: "Reading now.",
        toolCalls: [{ id: "toolu_9", name: "read", arguments: '{"path":"a"}' }],
      });
      expect(response.usage).toMatchObject({
        source: "provider",
        inputTokens: 2312,
        outputTokens: 42,
        cachedInputTokens: 2000,
        cacheWriteTokens: 300,
        cacheWrite5mTokens: 100,
        cacheWrite1hTokens: 200,
      });
      expect(response.usage?.raw).toMatchObject({ input_tokens: 12, output_tokens: 42 });
    }
  });

  it("reads a non-streamed Message object, tool input as parsed JSON", async () => {
    const body = JSON.stringify({
      id: "msg_2",
      type: "message",
      role: "assistant",
      content: [
        { type: "text", text: "Sure." },
        { type: "tool_use", id: "toolu_1", name: "ls", input: { dir: "." } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 30, output_tokens: 5 },
    });
    const response = await anthropicMessages.parseStream(streamOf(cut(body, 7)));
    expect(response.message).toEqual({
      role: "assistant",
      text: "Sure.",
      toolCalls: [{ id: "toolu_1", name: "ls", arguments: '{"dir":"."}' }],
    });
    expect(response.usage).toEqual({
      source: "provider",
      inputTokens: 30,
      outputTokens: 5,
      raw: { input_tokens: 30, output_tokens: 5 },
    });
  });

  it("renders scripted replies as the request asks (SSE with event lines, or one Message) and reads them back", async () => {
    const streamed = build({}).body;
    const calls = [
      { id: "call_1_1", name: "read", arguments: '{"path":"a"}' },
      { id: "call_1_2", name: "ls", arguments: "{}" },
    ];
    const whole = await expectRepliesReadBack(anthropicMessages, streamed, calls);
    const sseText = anthropicMessages.renderReply({ kind: "text", text: "DONE" }, streamed).chunks.join("");
    expect(sseText.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(sseText.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
    const json = parse(anthropicMessages.renderReply({ kind: "tool_calls", calls }, whole).chunks.join(""));
    expect(json).toMatchObject({ type: "message", model: "qwen3.8-flash", stop_reason: "tool_use" });
  });
});
