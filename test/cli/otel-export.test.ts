/**
 * OpenTelemetry export end to end: the built CLI sends p1 and seq-search to a real OTLP/HTTP
 * receiver on 127.0.0.1 (`run --otel` in protobuf), `export otel` sends the runs again in JSON (in
 * this process, as `report` reads them), and the spans are checked
 * as they arrived on the wire, decoded with the official protocol definitions: names, parent/child
 * links, attributes against the run's own files. Then an endpoint that is down, and a mock that
 * streams its requests as they are captured.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roundDollars } from "../../src/analysis/cost/money.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from "../analysis/otel/otlp-receiver.js";
import { chatBody, jsonl, parseReply, postChat, startCli, writeTinyProbe } from "../capture/http-harness.js";
import { type EnvChanges, runInProcess } from "../fixtures/cli-in-process.js";
import { closedPort } from "../fixtures/closed-port.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { type CliResult, startCliIn } from "./scratch-cli.js";

const OTEL_ENV = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];
for (const name of OTEL_ENV) delete process.env[name];

let scratch: string;
let runs: string;
let receiver: OtlpReceiver;

/** The CLI in a scratch folder with cwd at the checkout (the probes' MCP configs name their stubs relatively). */
async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const saved = Object.keys(env).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, env);
  try {
    return await startCliIn(scratch, args, PROJECT_ROOT).done;
  } finally {
    // Restored name by name: a new object in process.env's place would no longer be the process's
    // environment, and a worker thread started later in this fork would not see what a test sets.
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * `export otel` or `report` of a run made above, in this process (test/fixtures/cli-in-process.ts):
 * what reached the receiver and what the command printed are what is tested; the runs are the built CLI's.
 */
async function inProcess(args: string[], env: EnvChanges = {}): Promise<CliResult> {
  const { status, stdout, stderr } = await runInProcess(env, ...args);
  return { code: status, signal: null, stdout, stderr };
}

/** `export otel p1 --endpoint <receiver> <flags>` in this process, exit 0, and the spans the receiver took. */
async function exportP1(...flags: string[]): Promise<ReceivedSpan[]> {
  const exported = await inProcess(["export", "otel", "p1", "--runs", runs, "--endpoint", receiver.url, ...flags]);
  expect(exported.code, exported.stderr).toBe(0);
  return receiver.exports.splice(0).flatMap((e) => e.spans);
}

beforeAll(async () => {
  scratch = tempDir("otel-cli-");
  runs = join(scratch, "runs");
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
  removeTempDirs();
});

const records = (probe: string) => jsonl<RequestRecord>(join(runs, probe, "requests.jsonl"));
const ns = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

/** One run's trace out of what arrived: the root named for the probe and every span of its trace id. */
function traceOf(spans: ReceivedSpan[], probe: string) {
  const roots = spans.filter((s) => s.name === `invoke_agent ${probe}`);
  expect(roots).toHaveLength(1);
  const root = roots[0]!;
  const trace = spans.filter((s) => s.traceId === root.traceId);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const parentOf = (s: ReceivedSpan) => byId.get(s.parentSpanId);
  return { root, trace, parentOf };
}

/** What both encodings must show of a run: every request, tool and MCP call where it belongs. */
function checkRun(spans: ReceivedSpan[], probe: string, tools: string[], mcpCalls: Record<string, string>) {
  const { root, trace, parentOf } = traceOf(spans, probe);
  const recs = records(probe);
  // The capture tells a run's conversations apart; the run's agent span carries its main one's id.
  const main = recs.find((r) => r.conversation?.role === "main")!;
  expect(root.parentSpanId).toBe("");
  expect(root.kind).toBe(SPAN_KIND.internal);
  expect(root.attributes).toMatchObject({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": probe,
    "gen_ai.conversation.id": `${main.run}/${main.conversation!.id}`,
    "payload_probe.requests": recs.length,
  });
  expect(root.resource["service.name"]).toBe("payload-probe");

  const chats = trace.filter((s) => s.name.startsWith("chat "));
  expect(chats.map((c) => c.attributes["payload_probe.seq"])).toEqual(recs.map((r) => r.seq));
  for (const chat of chats) {
    const record = recs.find((r) => r.seq === chat.attributes["payload_probe.seq"])!;
    expect(chat.name).toBe(`chat ${record.model}`);
    expect(chat.kind).toBe(SPAN_KIND.client);
    expect(parentOf(chat)).toBe(root);
    expect(chat.startNs).toBe(ns(record.ts));
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": record.model,
      "gen_ai.usage.input_tokens": record.tokens!.total,
      "payload_probe.usage.source": "payload_probe_estimate",
      "gen_ai.response.finish_reasons": [record.response!.kind === "tool_calls" ? "tool_calls" : "stop"],
      "payload_probe.tools.count": record.tools.length,
      "payload_probe.tools.bytes": record.toolsBytes,
      "payload_probe.system.bytes": record.systemBytes,
      "payload_probe.hash.body": record.hashes.body,
    });
    for (const [marker, count] of Object.entries(record.markers))
      expect(chat.attributes[`payload_probe.marker.${marker}`]).toBe(count);
    if (record.prefix?.breakAt) expect(chat.attributes["payload_probe.prefix.break_at"]).toBe(record.prefix.breakAt);
    else expect(chat.attributes["payload_probe.prefix.break_at"]).toBeUndefined();
  }

  const toolSpans = trace.filter((s) => s.name.startsWith("execute_tool "));
  expect(toolSpans.map((t) => t.attributes["gen_ai.tool.name"])).toEqual(tools);
  for (const tool of toolSpans) {
    expect(parentOf(tool)).toBe(root);
    expect(tool.attributes["gen_ai.operation.name"]).toBe("execute_tool");
    // A tool runs between the request that asked for it and the next one.
    const before = chats.filter((c) => c.endNs <= tool.startNs);
    const after = chats.filter((c) => c.startNs >= tool.endNs);
    expect(before.length + after.length).toBe(chats.length);
  }
  for (const [toolName, callName] of Object.entries(mcpCalls)) {
    const call = trace.find((s) => s.name === callName)!;
    expect(call.kind).toBe(SPAN_KIND.client);
    expect(call.attributes["mcp.method.name"]).toBe("tools/call");
    expect(parentOf(call)?.attributes["gen_ai.tool.name"]).toBe(toolName);
  }
  return { root, trace, chats, toolSpans, parentOf };
}

function checkP1(spans: ReceivedSpan[]) {
  const { toolSpans, trace, parentOf } = checkRun(spans, "p1", ["mcp", "mcp", "mcp"], {
    mcp: "tools/call stub_echo",
  });
  // The wrong call's result is an error; the server connects only during the third call.
  expect(toolSpans.map((t) => t.attributes["error.type"])).toEqual([undefined, "tool_error", undefined]);
  expect(toolSpans[1]!.statusCode).toBe(2);
  const initialize = trace.find((s) => s.name === "initialize")!;
  expect(parentOf(initialize)).toBe(toolSpans[2]);
  expect(initialize.attributes["mcp.protocol.version"]).toBeTypeOf("string");
}

function checkSeqSearch(spans: ReceivedSpan[]) {
  const { chats } = checkRun(spans, "seq-search", ["mcp", "a_tool1", "mcp", "b_tool2"], {
    a_tool1: "tools/call tool1",
    b_tool2: "tools/call tool2",
  });
  // Searching activates a direct tool, so `tools` grows at requests 2 and 5: the prefix breaks there.
  expect(chats.map((c) => c.attributes["payload_probe.prefix.break_at"] ?? null)).toEqual([
    null,
    "tools",
    null,
    null,
    "tools",
    null,
  ]);
}

describe("OpenTelemetry export over OTLP/HTTP (a receiver on 127.0.0.1)", () => {
  it("run --otel sends p1 and seq-search as protobuf, each run as one trace", async () => {
    const result = await cli(["run", "p1", "seq-search", "--runs", runs, "--no-db", "--otel", receiver.url]);
    expect(result.stderr).not.toMatch(/OpenTelemetry/);
    expect(result.code).toBe(0);
    const arrived = receiver.exports.splice(0);
    expect(arrived.length).toBeGreaterThan(0);
    for (const e of arrived) expect(e.contentType).toBe("application/x-protobuf");
    const spans = arrived.flatMap((e) => e.spans);
    checkP1(spans);
    checkSeqSearch(spans);
  });

  it("export otel sends the same runs as JSON (OTEL_EXPORTER_OTLP_PROTOCOL), with headers from the environment and --header", async () => {
    const result = await inProcess(
      ["export", "otel", "p1", "seq-search", "--runs", runs, "--endpoint", receiver.url, "--header", "x-team=probe"],
      { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=blue,x-team=env" },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/p1: 12 spans/);
    const arrived = receiver.exports.splice(0);
    for (const e of arrived) {
      expect(e.contentType).toBe("application/json");
      expect(e.headers["x-tenant"]).toBe("blue");
      expect(e.headers["x-team"]).toBe("probe");
    }
    const spans = arrived.flatMap((e) => e.spans);
    checkP1(spans);
    checkSeqSearch(spans);
  });

  it("--content none leaves hashes out; full adds the texts, which JSON-decode to the run's own", async () => {
    const bare = await exportP1("--content", "none");
    expect(bare.some((s) => Object.keys(s.attributes).some((k) => k.includes("hash")))).toBe(false);
    const spans = await exportP1("--content", "full");
    const first = spans.find((s) => s.attributes["payload_probe.seq"] === 1)!;
    const messages = JSON.parse(first.attributes["gen_ai.input.messages"] as string);
    expect(messages[0].role).toBe("user");
    expect(messages[0].parts[0].content).toMatch(/^PROBE-MCP/);
    const tools = JSON.parse(first.attributes["gen_ai.tool.definitions"] as string);
    expect(tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["read", "mcp"]);
    const wrong = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "call_2_1")!;
    expect(wrong.attributes["gen_ai.tool.call.result"]).toMatch(/not found/);
  });

  it("a priced model puts each request's predicted dollars on its chat span, as report --cost has them, and the sum on invoke_agent", async () => {
    const report = await inProcess(["report", "p1", "--runs", runs, "--cost", "--model", "gpt-4.1", "--json"]);
    expect(report.code).toBe(0);
    const predicted = new Map(
      (JSON.parse(report.stdout).requests as { seq: number; predictedCost: number }[]).map((r) => [
        r.seq,
        r.predictedCost,
      ]),
    );
    expect(predicted.size).toBe(4);
    /** `export otel p1` priced as `model`, and the spans the receiver took. */
    const exportAs = (model: string) => exportP1("--model", model);
    const spans = await exportAs("gpt-4.1");
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats).toHaveLength(4);
    for (const chat of chats)
      expect(chat.attributes["payload_probe.cost.predicted_usd"]).toBe(
        predicted.get(chat.attributes["payload_probe.seq"] as number),
      );
    const agent = spans.find((s) => s.name.startsWith("invoke_agent"))!;
    const sum = [...predicted.values()].reduce((a, b) => a + b, 0);
    expect(agent.attributes["payload_probe.cost.predicted_usd"]).toBe(roundDollars(sum));
    // The cache's figures beside them (issue 27), from the same prediction report --cost shows.
    const splits = new Map(
      (
        JSON.parse(report.stdout).requests as { seq: number; predicted: { inputTokens: number; cacheRead: number } }[]
      ).map((r) => [r.seq, r.predicted]),
    );
    for (const chat of chats) {
      const split = splits.get(chat.attributes["payload_probe.seq"] as number)!;
      expect(chat.attributes["payload_probe.cache.read_tokens"]).toBe(split.cacheRead);
      expect(chat.attributes["payload_probe.cache.hit_rate"]).toBe(split.cacheRead / split.inputTokens);
      expect(chat.attributes["payload_probe.cache.basis"]).toBe("model");
    }
    const all = [...splits.values()];
    const read = all.reduce((a, r) => a + r.cacheRead, 0);
    expect(read).toBeGreaterThan(0);
    expect(agent.attributes["payload_probe.cache.hit_rate"]).toBe(read / all.reduce((a, r) => a + r.inputTokens, 0));
    // A model the table does not know has no price: no figure is guessed.
    const bare = await exportAs("no-such-model-1");
    expect(bare.some((s) => "payload_probe.cost.predicted_usd" in s.attributes)).toBe(false);
  });
});

describe("an endpoint that is down", () => {
  it("run --otel still passes, printing one warning; export otel exits 1 with one warning", async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const run = await cli(["run", "p1", "p7", "--runs", runs, "--no-db", "--otel", down]);
    expect(run.code).toBe(0);
    const warnings = run.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed \(.*ECONNREFUSED/);
    const exported = await inProcess(["export", "otel", "p1", "--runs", runs, "--endpoint", down]);
    expect(exported.code).toBe(1);
    expect(exported.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"))).toHaveLength(1);
  });

  it("bad flags are usage errors: an unknown --content, a --header without =, a gRPC protocol", async () => {
    const content = await inProcess(["export", "otel", "p1", "--runs", runs, "--content", "all"]);
    expect(content.code).toBe(2);
    expect(content.stderr).toMatch(/--content expected one of none, hashes, full, got "all"/);
    const header = await inProcess(["export", "otel", "p1", "--runs", runs, "--header", "x-team"]);
    expect(header.code).toBe(2);
    const grpc = await inProcess(["export", "otel", "p1", "--runs", runs], { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toMatch(/expected http\/protobuf or http\/json/);
  });
});

describe("mock --otel", () => {
  it("sends each request as it is captured, under the run's invoke_agent span ended on SIGTERM", async () => {
    const dir = tempDir("otel-mock-");
    const { file } = await writeTinyProbe(dir);
    // Each span sent as it ends (OTEL_BSP_SCHEDULE_DELAY, 1 s by default): the test waits for it to arrive.
    const mock = await startCli(["mock", file, "--runs", dir, "--no-db", "--otel", receiver.url], {
      ...process.env,
      OTEL_BSP_SCHEDULE_DELAY: "0",
    });
    await parseReply(await postChat(`${mock.url}/chat/completions`, chatBody("read notes.txt")));
    const [chat] = await receiver.waitForSpans(1);
    expect(chat!.name).toBe("chat mock-model");
    expect(chat!.attributes["payload_probe.marker.notes"]).toBe(1);
    expect(await mock.stop()).toBe(0);
    const spans = await receiver.waitForSpans(2);
    receiver.exports.splice(0);
    const root = spans.find((s) => s.name === "invoke_agent tiny-mock")!;
    expect(chat!.parentSpanId).toBe(root.spanId);
    const record = jsonl<RequestRecord>(join(dir, "tiny-mock", "requests.jsonl"))[0]!;
    expect(root.attributes["payload_probe.run.id"]).toBe(record.run);
    expect(root.attributes["payload_probe.requests"]).toBe(1);
    expect(root.startNs).toBeLessThanOrEqual(chat!.startNs);
    expect(root.endNs).toBeGreaterThanOrEqual(chat!.endNs);
  });
  it("groups a subagent's requests under an invoke_agent span of its own, as the whole run's export does", async () => {
    const dir = tempDir("otel-mock-subagent-");
    const script = join(PROJECT_ROOT, "test/fixtures/interactive-subagent-session.yaml");
    const mock = await startCli(["mock", script, "--runs", dir, "--no-db", "--otel", receiver.url]);
    // What the real interactive Claude Code sent (a title call, main turns, a subagent), with its session header.
    const rows = jsonl<{ body: string }>(
      join(PROJECT_ROOT, "test/fixtures/conversations/claude-code-2.1.328-interactive.jsonl"),
    );
    for (const { body } of rows) {
      const session = JSON.parse(JSON.parse(body).metadata.user_id).session_id as string;
      const response = await fetch(`${new URL(mock.url).origin}/v1/messages`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "x-claude-code-session-id": session },
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    expect(await mock.stop()).toBe(0);
    // Six chat spans, the subagent's invoke_agent span and the run's.
    const spans = await receiver.waitForSpans(8);
    receiver.exports.splice(0);
    const root = spans.find((s) => s.name === "invoke_agent interactive-subagent-session-mock")!;
    const subagents = spans.filter((s) => s.name === "invoke_agent");
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    const records = jsonl<RequestRecord>(join(dir, "interactive-subagent-session-mock", "requests.jsonl"));
    expect(records.map((r) => r.conversation?.role)).toEqual(["side", "main", "main", "main", "subagent", "main"]);
    expect(subagents).toHaveLength(1);
    const [subagent] = subagents;
    expect(subagent!.parentSpanId).toBe(root.spanId);
    expect(subagent!.attributes).toMatchObject({
      "gen_ai.conversation.id": `${records[0]!.run}/c3`,
      "payload_probe.conversation.parent": `${records[0]!.run}/c2`,
      "payload_probe.requests": 1,
    });
    // The subagent's request under its span; the title call and the main turns under the run's.
    const run = records[0]!.run;
    expect(
      chats.filter((c) => c.parentSpanId === subagent!.spanId).map((c) => c.attributes["gen_ai.conversation.id"]),
    ).toEqual([`${run}/c3`]);
    expect(chats.filter((c) => c.parentSpanId === root.spanId)).toHaveLength(5);
    expect(subagent!.startNs).toBeLessThanOrEqual(subagent!.endNs);
  });
});
