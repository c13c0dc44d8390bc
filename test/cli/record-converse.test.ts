/**
 * Bedrock's Converse API recorded end to end: the official client (@aws-sdk/client-bedrock-runtime)
 * with made-up AWS keys runs under `record --forward`, which stands in for Bedrock's host and sends
 * its requests to a local Bedrock mock (test/fixtures/bedrock-mock.ts) that checks every SigV4
 * signature with the same keys and answers `Converse` with JSON and `ConverseStream` with AWS
 * EventStream frames, its usage following a cache kept as Bedrock keeps one. Then `show` and
 * `report --cost` read the run with Bedrock's prices. Every process is real; nothing waits on a clock.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import { filesContaining, jsonl } from "../capture/http-harness.js";
import { startBedrockMock } from "../fixtures/bedrock-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { MAIN, scratchEnv, startCliIn } from "./scratch-cli.js";

const CLIENT = join(PROJECT_ROOT, "test", "fixtures", "record", "converse-client.mjs");
const KEYS = { accessKeyId: "AKIAPAYLOADPROBE8CNV", secretAccessKey: "pp/made-up+converse/Zr41nQxWvT2Lm9Ks7Ud3Bf" };
const HOST = "bedrock-runtime.us-east-1.amazonaws.com";
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const ANSWER = "Your notes say: buy milk.";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

interface Printed {
  first: { stopReason: string; call: string; usage: Record<string, number> };
  second: { text: string; usage: Record<string, number> };
}

/** The client under `record --forward` to the mock: what it printed, what the mock saw, the run's records. */
async function recordClient() {
  const scratch = tempDir("record-converse-");
  const runs = join(scratch, "runs");
  const mock = await startBedrockMock(KEYS, ANSWER);
  closers.push(() => mock.close());
  const args = ["--forward", "--forward-to", `${HOST}=${mock.origin}`, "--runs", runs, "--name", "converse"];
  const { done } = startCliIn(scratch, ["record", ...args, "--", "node", CLIENT], scratch, {
    HOME: join(scratch, "home"),
    XDG_CACHE_HOME: join(scratch, "cache"),
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: KEYS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: "true",
  });
  const result = await done;
  expect(result.code, result.stderr).toBe(0);
  const printed = JSON.parse(result.stdout) as Printed;
  const records = jsonl<RequestRecord>(join(runs, "converse", "requests.jsonl"));
  const payloads = jsonl<{ seq: number; type: string; body: string; url?: string }>(
    join(runs, "converse", "payloads.jsonl"),
  );
  return { scratch, runs, mock, printed, records, payloads };
}

const cli = (runs: string, ...args: string[]) =>
  spawnSync(process.execPath, [MAIN, ...args, "--runs", runs], {
    encoding: "utf8",
    env: { ...scratchEnv(runs), PAYLOAD_PROBE_PRICING: "", COLUMNS: "80" },
  });

describe("record --forward: Bedrock's Converse API through the official client", () => {
  it("records Converse and ConverseStream in full, signatures valid at the mock, the second reading the first's cache; priced at Bedrock's prices; no key in any file", async () => {
    const { scratch, runs, mock, printed, records, payloads } = await recordClient();
    // The client read both replies through the proxy: the call, then the streamed answer.
    expect(printed.first).toMatchObject({ stopReason: "tool_use", call: "read" });
    expect(printed.second.text).toBe(ANSWER);
    const path = `/model/${encodeURIComponent(MODEL)}`;
    expect(mock.seen).toEqual([
      { path: `${path}/converse`, signatureValid: true },
      { path: `${path}/converse-stream`, signatureValid: true },
    ]);

    expect(records.map((r) => [r.seq, r.kind, r.api, r.model, r.status, r.ending])).toEqual([
      [1, "loop", "bedrock-converse", MODEL, 200, "complete"],
      [2, "loop", "bedrock-converse", MODEL, 200, "complete"],
    ]);
    const [first, second] = records as [RequestRecord, RequestRecord];
    for (const record of records) expect(record.tools).toEqual(["read", "write"]);
    expect(first.roles).toEqual(["system", "user"]);
    expect(second.roles).toEqual(["system", "user", "assistant", "tool"]);
    expect(first.response).toMatchObject({ kind: "tool_calls", calls: ["read"] });
    expect(second.response).toMatchObject({ kind: "text", text: ANSWER });
    expect(first.tokens!.total).toBeGreaterThan(1024);
    expect(first.systemChars).toBeGreaterThan(4000);

    // The usage as Bedrock's client read it, in the record's vocabulary: the prompt is all three parts.
    for (const [record, usage] of [
      [first, printed.first.usage],
      [second, printed.second.usage],
    ] as const) {
      const whole = usage.inputTokens! + (usage.cacheReadInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0);
      expect(record.usage).toMatchObject({
        source: "provider",
        inputTokens: whole,
        outputTokens: usage.outputTokens,
        cachedInputTokens: usage.cacheReadInputTokens,
        cacheWriteTokens: usage.cacheWriteInputTokens,
      });
    }
    expect(printed.first.usage.cacheWriteInputTokens).toBeGreaterThan(1024);
    expect(printed.second.usage.cacheReadInputTokens).toBeGreaterThan(1024);
    // The capture found the same: the second request reads the first's prefix (tools and system at least).
    expect(second.prefix).toMatchObject({ from: 1 });
    expect(second.prefix!.sharedTokens).toBeGreaterThan(1024);

    // The cache points, read back from the stored bodies: after the tools, the system and the last user turn.
    const bodies = payloads.filter((p) => p.type === "request");
    expect(bodies.map((p) => p.url)).toEqual([
      `${mock.origin}${path}/converse`,
      `${mock.origin}${path}/converse-stream`,
    ]);
    const points = bodies.map((p) => codecFor("bedrock-converse").dissect(p.body, p.url).cacheBreakpoints);
    expect(points).toEqual([
      [
        { part: "tools", index: 1, ttl: "5m" },
        { part: "system", index: 0, ttl: "5m" },
        { part: "messages", index: 0, block: 0, ttl: "5m" },
      ],
      [
        { part: "tools", index: 1, ttl: "5m" },
        { part: "system", index: 0, ttl: "5m" },
        { part: "messages", index: 2, block: 0, ttl: "5m" },
      ],
    ]);
    // The stream is stored as the events it carried.
    const reply = payloads.find((p) => p.seq === 2 && p.type === "response")!.body;
    expect(reply).toMatch(/^event: messageStart\ndata: \{"messageStart":/);
    expect(reply).toContain("event: metadata\n");

    await expectBedrockPrices(runs, printed);
    for (const secret of [KEYS.secretAccessKey, KEYS.accessKeyId]) expect(filesContaining(scratch, secret)).toEqual([]);
  });
});

/**
 * `report --cost` and `show --cost` price the run with the price table's Bedrock (`aws`) entry:
 * Sonnet 4.5 behind a regional profile at $3.30 a million input tokens, $4.125 written to the cache,
 * $0.33 read, $16.50 output (Anthropic's own: $3, $3.75, $0.30, $15).
 */
async function expectBedrockPrices(runs: string, printed: Printed): Promise<void> {
  const report = cli(runs, "report", "converse", "--cost", "--json");
  expect(report.status, report.stderr).toBe(0);
  type Split = { uncached: number; cacheRead: number; cacheWrite5m: number; outputTokens?: number };
  const cost = JSON.parse(report.stdout) as {
    unpriced: unknown[];
    requests: { pricedAs: string; predicted: Split; predictedCost: number; reported: Split | null }[];
  };
  expect(cost.unpriced).toEqual([]);
  for (const { pricedAs, predicted, predictedCost, reported } of cost.requests) {
    expect(pricedAs).toBe("regional.anthropic.claude-sonnet-4-5-20250929-v1:0");
    // The prompt as predicted, and the output as reported ($16.50 a million).
    const prompt = predicted.uncached * 3.3 + predicted.cacheWrite5m * 4.125 + predicted.cacheRead * 0.33;
    const dollars = (prompt + reported!.outputTokens! * 16.5) / 1e6;
    expect(predictedCost).toBeCloseTo(dollars, 5);
  }
  expect(cost.requests[0]!.reported).toMatchObject({
    cacheRead: 0,
    cacheWrite5m: printed.first.usage.cacheWriteInputTokens,
  });
  expect(cost.requests[1]!.reported).toMatchObject({ cacheRead: printed.second.usage.cacheReadInputTokens });
  // The cost model reads the first request's cached tools and system too.
  expect(cost.requests[0]!.predicted.cacheWrite5m).toBeGreaterThan(1024);
  expect(cost.requests[1]!.predicted.cacheRead).toBeGreaterThan(1024);
  const text = cli(runs, "report", "converse", "--cost");
  expect(text.stdout).toMatch(/priced: us\.anthropic\.claude-sonnet-4-5-20250929-v1:0 as\s+regional\.\S+ \(aws\)/);

  const show = cli(runs, "show", "converse", "2", "--cost");
  expect(show.status, show.stderr).toBe(0);
  expect(show.stdout).toContain(ANSWER);
  // Priced as Bedrock's entry, and Bedrock's own figures beside the prediction.
  expect(show.stdout).toMatch(/^cost \(us\.anthropic\.claude-sonnet-4-5-20250929-v1:0 as\s+regional\./);
  expect(show.stdout).toContain(`— ${printed.second.usage.cacheReadInputTokens} read,`);
}
