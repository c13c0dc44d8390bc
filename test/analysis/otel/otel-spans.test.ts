/**
 * The GenAI span of one request, through the real SDK into its in-memory exporter: records made by
 * the capture from provider-shaped replies of each wire API (usage with cache figures), then every
 * attribute the span carries checked. And a run's trace shape for a sampling probe (p7).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRun } from "../../../src/analysis/load-run.js";
import { chatSpan } from "../../../src/analysis/otel/chat-span.js";
import { openOtlpSession } from "../../../src/analysis/otel/otlp-session.js";
import { readRunTraceInput, traceInputFromFolder } from "../../../src/analysis/otel/run-input.js";
import { planRunTrace } from "../../../src/analysis/otel/run-trace.js";
import type { PlanOptions, SpanPlan } from "../../../src/analysis/otel/span-plan.js";
import { openCaptureRun } from "../../../src/capture/capture-run.js";
import type { RequestRecord } from "../../../src/capture/types.js";
import { loadProbeFile, resolveProbePath } from "../../../src/probes/load.js";
import { runProbe } from "../../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { resolveModel } from "../../../src/providers/models.js";
import type { WireApi } from "../../../src/providers/types.js";
import { sharedRecords, sharedRun } from "../../fixtures/shared-runs.js";

const base = mkdtempSync(join(tmpdir(), "pp-otel-spans-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** What each provider answers (non-streamed JSON bodies), with the usage fields each API has for caching. */
const REPLIES: Record<WireApi, unknown> = {
  "openai-completions": {
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: "All done." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 120, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 64 } },
  },
  "anthropic-messages": {
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } }],
    stop_reason: "tool_use",
    usage: { input_tokens: 12, cache_read_input_tokens: 2000, cache_creation_input_tokens: 300, output_tokens: 9 },
  },
  "openai-responses": {
    id: "resp_1",
    object: "response",
    status: "completed",
    output: [{ id: "fc_1", type: "function_call", call_id: "call_x", name: "read", arguments: '{"path":"b"}' }],
    usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 768 }, output_tokens: 20, total_tokens: 920 },
  },
  "google-generative-ai": {
    candidates: [{ content: { role: "model", parts: [{ text: "Read it." }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: 3000,
      cachedContentTokenCount: 2048,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 40,
      totalTokenCount: 3045,
    },
  },
  "bedrock-converse": {
    output: { message: { role: "assistant", content: [{ text: "Read it." }] } },
    stopReason: "end_turn",
    usage: {
      inputTokens: 15,
      outputTokens: 7,
      totalTokens: 2422,
      cacheReadInputTokens: 2048,
      cacheWriteInputTokens: 352,
    },
    metrics: { latencyMs: 12 },
  },
};

const TOOL = {
  name: "read",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** One request per API through a real capture (tokens counted), answered with the API's reply above. */
async function capturedRecords(): Promise<{ records: RequestRecord[]; bodies: Map<string, string> }> {
  const run = openCaptureRun({
    name: "otel-usage",
    runsDir: base,
    database: false,
    markers: { readme: { in: "messages", match: "README" } },
  });
  const bodies = new Map<string, string>();
  for (const api of Object.keys(REPLIES) as WireApi[]) {
    const codec = codecFor(api);
    const request = codec.buildRequest(
      resolveModel(`vendor/model-${api}`, api),
      { systemPrompt: "You help.", messages: [{ role: "user", content: "Open README please." }], tools: [TOOL] },
      "loop",
    );
    bodies.set(api, request.body);
    const transport = run.capture.wrap(async () =>
      (async function* () {
        yield JSON.stringify(REPLIES[api]);
      })(),
    );
    await codec.parseStream(await transport(request));
  }
  run.close();
  return { records: run.capture.records, bodies };
}

/** Plans through the SDK into its in-memory exporter: the spans as the SDK would export them. */
async function throughSdk(plans: SpanPlan[]): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  // The in-memory exporter forgets its spans when shut down, as the session does when it closes.
  const exporter: SpanExporter = { export: (spans, done) => memory.export(spans, done), shutdown: async () => {} };
  const session = openOtlpSession({ exporter, warn: (m) => expect.fail(m) });
  await session.emit(plans);
  await session.close();
  return memory.getFinishedSpans();
}

const hashes = (r: RequestRecord) => ({
  "payload_probe.hash.tools": r.hashes.tools,
  "payload_probe.hash.system": r.hashes.system,
  "payload_probe.hash.body": r.hashes.body,
  ...sourceAttributes(r),
});

/** Each source's tokens (they come with the hashes: `--content none` sends neither). */
const sourceAttributes = (r: RequestRecord) =>
  Object.fromEntries(
    Object.entries(r.sources ?? {}).map(([source, tokens]) => [`payload_probe.context.${source}`, tokens]),
  );

/** The record's own measurements, as the span must carry them under payload_probe.*. */
const measures = (r: RequestRecord) => ({
  "payload_probe.run.id": r.run,
  "payload_probe.probe": "otel-usage",
  "payload_probe.seq": r.seq,
  "payload_probe.request.kind": "loop",
  "payload_probe.api": r.api,
  "payload_probe.tools.count": 1,
  "payload_probe.tools.bytes": r.toolsBytes,
  "payload_probe.system.bytes": r.systemBytes,
  "payload_probe.messages.bytes": r.messagesBytes,
  "payload_probe.body.bytes": r.bodyBytes,
  "payload_probe.tokens.encoding": "o200k_base",
  "payload_probe.tokens.tools": r.tokens!.tools,
  "payload_probe.tokens.system": r.tokens!.system,
  "payload_probe.tokens.messages": r.tokens!.messages,
  "payload_probe.tokens.total": r.tokens!.total,
  "payload_probe.marker.readme": 1,
  "payload_probe.prefix.shared_bytes": r.prefix!.sharedBytes,
});

describe("a chat span per request (GenAI conventions, in-memory exporter)", async () => {
  const { records, bodies } = await capturedRecords();
  const byApi = (api: WireApi) => records.find((r) => r.api === api)!;
  const hashesOnly: PlanOptions = { content: "hashes" };

  it("chat completions: provider usage with cached tokens, finish reason stop, every attribute", async () => {
    const r = byApi("openai-completions");
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.name).toBe("chat model-openai-completions");
    expect(span!.kind).toBe(2 /* SpanKind.CLIENT */);
    expect(span!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "model-openai-completions",
      "gen_ai.conversation.id": `${r.run}/${r.conversation!.id}`,
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 64,
      "payload_probe.usage.source": "provider",
      "gen_ai.response.finish_reasons": ["stop"],
      ...measures(r),
      ...hashes(r),
    });
  });

  it("Anthropic Messages: input includes cache reads and writes, both reported apart, finish reason tool_calls", async () => {
    const r = byApi("anthropic-messages");
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "model-anthropic-messages",
      "gen_ai.conversation.id": `${r.run}/${r.conversation!.id}`,
      "gen_ai.usage.input_tokens": 12 + 2000 + 300,
      "gen_ai.usage.output_tokens": 9,
      "gen_ai.usage.cache_read.input_tokens": 2000,
      "gen_ai.usage.cache_creation.input_tokens": 300,
      "payload_probe.usage.source": "provider",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      // The first request of its API and model in the run (the prefix is compared within one API and
      // model, as a provider caches), so there is no break to report.
      ...measures(r),
      ...hashes(r),
    });
  });

  it("OpenAI Responses: provider usage with cached tokens; the span's times are the record's", async () => {
    const r = byApi("openai-responses");
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "model-openai-responses",
      "gen_ai.conversation.id": `${r.run}/${r.conversation!.id}`,
      "gen_ai.usage.input_tokens": 900,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 768,
      "payload_probe.usage.source": "provider",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      ...measures(r),
      ...hashes(r),
    });
    const startMs = span!.startTime[0] * 1000 + span!.startTime[1] / 1e6;
    const endMs = span!.endTime[0] * 1000 + span!.endTime[1] / 1e6;
    expect(startMs).toBeCloseTo(Date.parse(r.ts), 3);
    expect(endMs - startMs).toBeCloseTo(r.durationMs, 3);
  });

  it("Gemini: provider gcp.gemini, the prompt holds the cached content, thoughts count as output", async () => {
    const r = byApi("google-generative-ai");
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "gcp.gemini",
      "gen_ai.request.model": "model-google-generative-ai",
      "gen_ai.conversation.id": `${r.run}/${r.conversation!.id}`,
      "gen_ai.usage.input_tokens": 3000,
      "gen_ai.usage.output_tokens": 5 + 40,
      "gen_ai.usage.cache_read.input_tokens": 2048,
      "payload_probe.usage.source": "provider",
      "gen_ai.response.finish_reasons": ["stop"],
      ...measures(r),
      ...hashes(r),
    });
  });

  it("Bedrock Converse: provider aws.bedrock, input includes cache reads and writes, both reported apart", async () => {
    const r = byApi("bedrock-converse");
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "aws.bedrock",
      "gen_ai.request.model": "model-bedrock-converse",
      "gen_ai.conversation.id": `${r.run}/${r.conversation!.id}`,
      "gen_ai.usage.input_tokens": 15 + 2048 + 352,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 2048,
      "gen_ai.usage.cache_creation.input_tokens": 352,
      "payload_probe.usage.source": "provider",
      "gen_ai.response.finish_reasons": ["stop"],
      ...measures(r),
      ...hashes(r),
    });
  });

  it("--content none sends no hashes; full adds the texts as the conventions name them", async () => {
    const r = byApi("anthropic-messages");
    const [none, full] = await throughSdk([
      chatSpan(r, null, { content: "none" }),
      chatSpan({ ...r, seq: 99 }, null, { content: "full" }, () => bodies.get("anthropic-messages")),
    ]);
    expect(Object.keys(none!.attributes).filter((k) => k.startsWith("payload_probe.hash."))).toEqual([]);
    expect(Object.keys(none!.attributes).filter((k) => k.startsWith("payload_probe.context."))).toEqual([]);
    // Each source of the request, adding up to its total.
    const sources = Object.entries(full!.attributes).filter(([k]) => k.startsWith("payload_probe.context."));
    expect(sources.map(([k]) => k.slice("payload_probe.context.".length)).sort()).toEqual(
      Object.keys(r.sources!).sort(),
    );
    expect(sources.reduce((t, [, v]) => t + (v as number), 0)).toBe(r.tokens!.total);
    expect(Object.keys(none!.attributes).some((k) => k.startsWith("gen_ai.input"))).toBe(false);
    const texts = full!.attributes;
    expect(JSON.parse(texts["gen_ai.system_instructions"] as string)).toEqual([{ type: "text", content: "You help." }]);
    expect(JSON.parse(texts["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "Open README please." }] },
    ]);
    expect(JSON.parse(texts["gen_ai.tool.definitions"] as string)[0]).toMatchObject({ name: "read" });
    expect(JSON.parse(texts["gen_ai.output.messages"] as string)).toEqual([
      { role: "assistant", parts: [{ type: "tool_call", name: "read" }], finish_reason: "tool_calls" },
    ]);
    expect(texts["payload_probe.tools.names"]).toEqual(["read"]);
    expect(texts["payload_probe.hash.body"]).toBe(r.hashes.body);
  });

  it("a record without provider usage carries our offline input estimate, marked as such", async () => {
    const r = { ...byApi("openai-completions"), usage: null };
    const [span] = await throughSdk([chatSpan(r, null, hashesOnly)]);
    expect(span!.attributes["gen_ai.usage.input_tokens"]).toBe(r.tokens!.total);
    expect(span!.attributes["payload_probe.usage.source"]).toBe("payload_probe_estimate");
    expect(span!.attributes["gen_ai.usage.output_tokens"]).toBeUndefined();
  });

  it("a failed exchange sets error.type and the span status ERROR; a price function fills the cost attribute", async () => {
    const r: RequestRecord = { ...byApi("openai-completions"), status: 529, ending: "complete", response: null };
    const [span] = await throughSdk([chatSpan(r, null, { content: "hashes", price: (x) => x.bodyBytes / 1e6 })]);
    expect(span!.attributes["error.type"]).toBe("529");
    expect(span!.attributes["http.response.status_code"]).toBe(529);
    expect(span!.status.code).toBe(2 /* SpanStatusCode.ERROR */);
    expect(span!.attributes["payload_probe.cost.predicted_usd"]).toBe(r.bodyBytes / 1e6);
    expect(span!.attributes["gen_ai.response.finish_reasons"]).toBeUndefined();
  });
});

describe("a run's trace", () => {
  it("p7: the sampling request is a child of the tool whose MCP server asked for it, inside its window", async () => {
    const { dir } = await sharedRun("p7");
    const spans = await throughSdk(
      planRunTrace(traceInputFromFolder(dir, await sharedRecords("p7"), "p7"), { content: "hashes" }),
    );
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [agent] = byName("invoke_agent p7");
    const [tool] = byName("execute_tool mcp");
    const chats = byName("chat qwen3.8-flash");
    expect(chats.map((c) => c.attributes["payload_probe.request.kind"])).toEqual(["loop", "sampling", "loop"]);
    const sampling = chats[1]!;
    expect(sampling.parentSpanContext?.spanId).toBe(tool!.spanContext().spanId);
    expect(tool!.parentSpanContext?.spanId).toBe(agent!.spanContext().spanId);
    expect(chats[0]!.parentSpanContext?.spanId).toBe(agent!.spanContext().spanId);
    const ns = (t: [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
    expect(ns(sampling.startTime)).toBeGreaterThanOrEqual(ns(tool!.startTime));
    expect(ns(sampling.endTime)).toBeLessThanOrEqual(ns(tool!.endTime));
    const call = spans.find((s) => s.name === "tools/call ask_model");
    expect(call?.parentSpanContext?.spanId).toBe(tool!.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it("a run read from the database alone keeps its tool spans: its events are stored there too", async () => {
    // The shared runs keep no database: this one does.
    const probe = await loadProbeFile(resolveProbePath("p7", PROJECT_ROOT), PROJECT_ROOT);
    const run = await runProbe(probe, { runsDir: join(base, "p7-db"), workspaceRoot: join(base, "p7-ws") });
    const source = resolveRun(run.runId, { runsDir: dirname(run.dir) });
    expect(source.recordsFile).toBeNull();
    const spans = await throughSdk(planRunTrace(readRunTraceInput(source, "hashes"), { content: "hashes" }));
    const tools = spans.filter((s) => s.name === "execute_tool mcp");
    expect(tools).toHaveLength(1);
    expect(tools[0]!.attributes["gen_ai.tool.call.id"]).toBeTruthy();
  });
});

describe("conversations in a run's trace (issue 34)", () => {
  /** Six requests through a real capture, each then given its conversation as the capture tells them apart. */
  async function conversationRecords(): Promise<RequestRecord[]> {
    const run = openCaptureRun({ name: "otel-conversations", runsDir: base, database: false, markers: {} });
    const codec = codecFor("openai-completions");
    const model = resolveModel("token-plan/qwen3.8-flash", "openai-completions", "http://127.0.0.1:9");
    for (const text of ["main 1", "main 2", "subagent 1", "title", "nested 1", "main 3"]) {
      const request = codec.buildRequest(
        model,
        { systemPrompt: "S", messages: [{ role: "user", content: text }], tools: [] },
        "loop",
      );
      const transport = run.capture.wrap(async () =>
        (async function* () {
          yield JSON.stringify(REPLIES["openai-completions"]);
        })(),
      );
      await codec.parseStream(await transport(request));
    }
    run.close();
    const conversations: RequestRecord["conversation"][] = [
      { id: "c1", role: "main", by: "content" },
      { id: "c1", role: "main", by: "content" },
      { id: "c2", role: "subagent", parent: "c1", by: "content" },
      { id: "c3", role: "side", parent: "c1", by: "content" },
      { id: "c4", role: "subagent", parent: "c2", by: "content" },
      { id: "c1", role: "main", by: "content" },
    ];
    return run.capture.records.map((record, i) => ({ ...record, conversation: conversations[i] }));
  }

  it("each chat span names its conversation; a subagent is an invoke_agent span holding its chats, under its parent agent", async () => {
    const records = await conversationRecords();
    const run = records[0]!.run;
    const input = { run, probe: "otel-conversations", records, events: [], wire: [] };
    const spans = await throughSdk(planRunTrace(input, { content: "hashes" }));
    const [root] = spans.filter((s) => s.name === "invoke_agent otel-conversations");
    const subagents = spans.filter((s) => s.name === "invoke_agent");
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    const id = (s: ReadableSpan | undefined) => s!.spanContext().spanId;
    expect(root!.attributes["gen_ai.conversation.id"]).toBe(`${run}/c1`);
    expect(chats.map((c) => c.attributes["gen_ai.conversation.id"])).toEqual(
      ["c1", "c1", "c2", "c3", "c4", "c1"].map((c) => `${run}/${c}`),
    );
    expect(subagents.map((s) => s.attributes)).toEqual([
      expect.objectContaining({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "qwen3.8-flash",
        "gen_ai.conversation.id": `${run}/c2`,
        "payload_probe.conversation.role": "subagent",
        "payload_probe.conversation.parent": `${run}/c1`,
        "payload_probe.requests": 1,
      }),
      expect.objectContaining({
        "gen_ai.conversation.id": `${run}/c4`,
        "payload_probe.conversation.parent": `${run}/c2`,
      }),
    ]);
    const [c2, c4] = subagents;
    expect(subagents.map((s) => s.kind)).toEqual([0, 0]); // INTERNAL
    expect(c2!.parentSpanContext?.spanId).toBe(id(root));
    expect(c4!.parentSpanContext?.spanId).toBe(id(c2));
    // The main conversation's requests and the side call stay under the run's agent.
    expect(chats.map((c) => c.parentSpanContext?.spanId)).toEqual([
      id(root),
      id(root),
      id(c2),
      id(root),
      id(c4),
      id(root),
    ]);
    // A subagent's span lasts from its first request's start to its last request's end.
    expect(c2!.startTime).toEqual(chats[2]!.startTime);
    expect(c2!.endTime).toEqual(chats[2]!.endTime);
  });
});
