/**
 * The Converse codec on its own: a client's body taken apart (tool specs, system blocks, roles,
 * content blocks, `cachePoint` blocks as breakpoints with their lifetime, the model from the path
 * whatever form its id takes), the body the runtime sends, both response forms read back with
 * Bedrock's usage in our vocabulary, the reply facts, where a stream counts as ended, and p1's
 * conversation run on Converse by the runtime.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { apiForPath, requestProblem, streamReachedEnd } from "../../src/capture/wire-request.js";
import { loadProbeFile, resolveProbePath } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { bedrockConverse as codec } from "../../src/providers/bedrock-converse.js";
import { automaticCacheMinimum, breakpointCache, breakpointMinCacheTokens } from "../../src/providers/cache-rules.js";
import { bedrockConverseEndpoint } from "../../src/providers/cloud-endpoints.js";
import { baseUrlFor, resolveModel } from "../../src/providers/models.js";
import { replyFacts } from "../../src/providers/reply-facts.js";
import { jsonl } from "../capture/http-harness.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { streamOf } from "./wire-streams.js";

afterAll(removeTempDirs);

const PROFILE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const URL = `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(PROFILE)}/converse-stream`;

/** A body as a client of the SDK sends it: two tools and a cache point, system with one, a tool round trip. */
const CLIENT_BODY = {
  messages: [
    { role: "user", content: [{ text: "Read the notes." }] },
    {
      role: "assistant",
      content: [
        { reasoningContent: { reasoningText: { text: "The notes first.", signature: "sig" } } },
        { toolUse: { toolUseId: "tu_1", name: "read", input: { path: "notes.txt" } } },
      ],
    },
    {
      role: "user",
      content: [
        {
          toolResult: { toolUseId: "tu_1", content: [{ text: "buy milk" }, { json: { lines: 1 } }], status: "success" },
        },
        { cachePoint: { type: "default" } },
      ],
    },
  ],
  system: [{ text: "You read files." }, { cachePoint: { type: "default", ttl: "1h" } }, { text: "cwd: /w" }],
  toolConfig: {
    tools: [
      { toolSpec: { name: "read", description: "Reads a file.", inputSchema: { json: { type: "object" } } } },
      { toolSpec: { name: "write", description: "Writes a file.", inputSchema: { json: { type: "object" } } } },
      { cachePoint: { type: "default" } },
    ],
    toolChoice: { auto: {} },
  },
  inferenceConfig: { maxTokens: 512 },
  additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 1024 } },
};

describe("Converse paths", () => {
  it("names the model from the path, percent-decoded, as an id, an inference profile or an ARN; stream by the method", () => {
    expect(bedrockConverseEndpoint(URL)).toEqual({ model: PROFILE, stream: true });
    const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0";
    expect(bedrockConverseEndpoint(`/model/${encodeURIComponent(arn)}/converse?x=1`)).toEqual({
      model: arn,
      stream: false,
    });
    expect(apiForPath(`/model/${encodeURIComponent(PROFILE)}/converse`)).toBe("bedrock-converse");
    expect(apiForPath(`/model/${encodeURIComponent(PROFILE)}/invoke`)).toBe("anthropic-messages");
    expect(bedrockConverseEndpoint("/model/x/converse/extra")).toBeNull();
  });
});

describe("a Converse body taken apart", () => {
  const d = codec.dissect(JSON.stringify(CLIENT_BODY), URL);

  it("tools by spec name, system texts, roles (tool results read as tool), texts of every block kind", () => {
    expect(d.model).toBe(PROFILE);
    expect(d.tools.map((t) => t.name)).toEqual(["read", "write"]);
    expect(JSON.parse(d.tools[1]!.json)).toEqual(CLIENT_BODY.toolConfig.tools[1]);
    expect(JSON.parse(d.toolsJson!)).toEqual(CLIENT_BODY.toolConfig.tools);
    expect(d.systemParts).toEqual(["You read files.", "cwd: /w"]);
    expect(d.roles).toEqual(["system", "system", "user", "assistant", "tool"]);
    expect(d.messages.map((m) => m.text)).toEqual([
      "Read the notes.",
      'The notes first.\nread {"path":"notes.txt"}',
      'buy milk\n{"lines":1}',
    ]);
  });

  it("each cachePoint marks the element before it, with its ttl; the prefix text leaves the cache point out", () => {
    expect(d.cacheBreakpoints).toEqual([
      { part: "tools", index: 1, ttl: "5m" },
      { part: "system", index: 0, ttl: "1h" },
      { part: "messages", index: 2, block: 0, ttl: "5m" },
    ]);
    expect(JSON.parse(d.messages[2]!.prefixJson!).content).toEqual([CLIENT_BODY.messages[2]!.content[0]]);
    expect(d.messages[0]!.prefixJson).toBeUndefined();
    // A cache point opening a message marks the last block of the message before it.
    const leading = {
      messages: [
        { role: "user", content: [{ text: "a" }, { text: "b" }] },
        { role: "user", content: [{ cachePoint: { type: "default" } }, { text: "c" }] },
      ],
    };
    expect(codec.dissect(JSON.stringify(leading), URL).cacheBreakpoints).toEqual([
      { part: "messages", index: 0, block: 1, ttl: "5m" },
    ]);
  });

  it("the settings that key the messages' cache: tool choice, thinking, images", () => {
    expect(JSON.parse(d.messageCacheSettings!)).toEqual({
      tool_choice: { auto: {} },
      thinking: CLIENT_BODY.additionalModelRequestFields.thinking,
      images: 0,
    });
  });

  it("a body the capture cannot read is named by field", () => {
    expect(requestProblem("bedrock-converse", JSON.stringify(CLIENT_BODY))).toBeNull();
    expect(requestProblem("bedrock-converse", '{"messages":[{"role":"user","content":"hi"}]}')?.message).toMatch(
      /messages\[0\]\.content/,
    );
    expect(requestProblem("bedrock-converse", '{"toolConfig":{"tools":{}}}')?.message).toMatch(/toolConfig\.tools/);
  });
});

describe("the runtime's Converse request", () => {
  const model = resolveModel(`bedrock/${PROFILE}`, "bedrock-converse", baseUrlFor("bedrock-converse", "http://h:1/v1"));
  const request = codec.buildRequest(
    model,
    {
      systemPrompt: "Be brief.",
      tools: [{ name: "read", description: "Reads.", parameters: { type: "object", properties: {} } }],
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a"}' }] },
        { role: "tool", toolCallId: "c1", toolName: "read", content: "A", isError: false },
      ],
    },
    "loop",
  );

  it("goes to the stream path of its model, with cache points after tools, system and the last user turn", () => {
    expect(request.url).toBe(`http://h:1/model/${encodeURIComponent(PROFILE)}/converse-stream`);
    const d = codec.dissect(request.body, request.url);
    expect(d.model).toBe(PROFILE);
    expect(d.roles).toEqual(["system", "user", "assistant", "tool"]);
    expect(d.cacheBreakpoints?.map((b) => b.part)).toEqual(["tools", "system", "messages"]);
    expect(requestProblem("bedrock-converse", request.body)).toBeNull();
  });

  it("a scripted reply renders and reads back, streamed by the path, whole otherwise", async () => {
    const calls = [{ id: "c2", name: "read", arguments: '{"path":"b"}' }];
    for (const url of [request.url, request.url.replace(/-stream$/, "")]) {
      const rendered = codec.renderReply(
        { kind: "tool_calls", calls, usage: { inputTokens: 9, outputTokens: 3 } },
        "",
        url,
      );
      expect(rendered.streamed).toBe(url.endsWith("-stream"));
      const read = await codec.parseStream(streamOf(rendered.chunks));
      expect(read.message).toEqual({ role: "assistant", text: "", toolCalls: calls });
      expect(read.usage).toMatchObject({ source: "provider", inputTokens: 9, outputTokens: 3 });
      const text = rendered.chunks.join("");
      expect(replyFacts("bedrock-converse", text).stopReason).toBe("tool_use");
      if (rendered.streamed) expect(streamReachedEnd("bedrock-converse", text).ended).toBe(true);
    }
  });
});

describe("Bedrock's replies read", () => {
  it("a stream in the stored form: text in pieces, a tool use, reasoning, usage with cache reads and writes by lifetime", async () => {
    const event = (type: string, payload: unknown) =>
      `event: ${type}\ndata: ${JSON.stringify({ [type]: payload })}\n\n`;
    const usage = {
      inputTokens: 12,
      outputTokens: 7,
      totalTokens: 2067,
      cacheReadInputTokens: 1024,
      cacheWriteInputTokens: 1024,
      cacheDetails: [{ ttl: "1h", inputTokens: 1024 }],
    };
    const text = [
      event("messageStart", { role: "assistant", p: "abc" }),
      event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Think." } } }),
      event("contentBlockStop", { contentBlockIndex: 0 }),
      event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "Hel" } }),
      event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "lo." } }),
      event("contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: "t9", name: "read" } } }),
      event("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: '{"pa' } } }),
      event("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: 'th":"x"}' } } }),
      event("messageStop", { stopReason: "tool_use" }),
      event("metadata", { usage, metrics: { latencyMs: 40 } }),
    ].join("");
    const read = await codec.parseStream(streamOf([text]));
    expect(read.message).toEqual({
      role: "assistant",
      text: "Hello.",
      toolCalls: [{ id: "t9", name: "read", arguments: '{"path":"x"}' }],
    });
    expect(read.usage).toEqual({
      source: "provider",
      inputTokens: 2060,
      outputTokens: 7,
      cachedInputTokens: 1024,
      cacheWriteTokens: 1024,
      cacheWrite5mTokens: undefined,
      cacheWrite1hTokens: 1024,
      raw: usage,
    });
    expect(replyFacts("bedrock-converse", text)).toEqual({
      stopReason: "tool_use",
      thinkingChars: 6,
      hiddenThinking: 0,
    });
    expect(streamReachedEnd("bedrock-converse", text).ended).toBe(true);
    expect(streamReachedEnd("bedrock-converse", text.slice(0, text.indexOf("event: metadata")))).toEqual({
      ended: false,
      expected: "a metadata event",
    });
  });
});

describe("Converse's cache rules", () => {
  it("breakpoints as Anthropic's, no automatic minimum, Claude's minimums by family and Nova's 1,000", () => {
    expect(breakpointCache("bedrock-converse")).toBe(true);
    expect(automaticCacheMinimum("bedrock-converse", PROFILE)).toBeNull();
    expect(breakpointMinCacheTokens(PROFILE)).toBe(1024);
    expect(breakpointMinCacheTokens("anthropic.claude-3-5-haiku-20241022-v1:0")).toBe(2048);
    expect(breakpointMinCacheTokens("us.amazon.nova-pro-v1:0")).toBe(1000);
  });
});

describe("p1 on Converse", () => {
  it("the runtime holds p1's expectations speaking Converse: every request a Converse record, each keeping the one before as its prefix", async () => {
    const probe = await loadProbeFile(resolveProbePath("p1-anthropic", PROJECT_ROOT), PROJECT_ROOT);
    const onConverse = {
      ...probe,
      model: { ...probe.model, api: "bedrock-converse" as const, cacheDiagnostics: false },
    };
    const base = tempDir("p1-converse-");
    const result = await runProbe(onConverse, {
      runsDir: join(base, "runs"),
      workspaceRoot: join(base, "ws"),
      database: false,
    });
    expect(result.failures).toEqual([]);
    const records = jsonl<RequestRecord>(join(result.dir, "requests.jsonl"));
    expect(records.length).toBeGreaterThan(1);
    for (const record of records) expect(record.api).toBe("bedrock-converse");
    for (const record of records.slice(1)) expect(record.prefix).toMatchObject({ from: record.seq - 1, breakAt: null });
  });
});
