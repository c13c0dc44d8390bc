/**
 * Issue 27's "done when": the official Anthropic and OpenAI clients talk to the capture proxy with
 * `cacheDiagnostics` on, in front of the mock. The proxy chains each request to the previous response
 * of its conversation, the mock answers from its comparison of the two bodies, the client sees the
 * provider's answer, and the record keeps it beside our prefix locator's, agreeing.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheAgreement } from "../../src/analysis/cache-agreement.js";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { baseUrlFor } from "../../src/providers/models.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl, MAIN } from "./http-harness.js";

let mock: MockServer;
let proxy: CaptureProxy;
let anthropic: Anthropic;
let openai: OpenAI;
/** Each body the mock received: what went upstream, with the fields the proxy added. */
const upstream: string[] = [];

beforeAll(async () => {
  const runs = tempDir("cache-diagnostics-sdk-");
  const script = Array.from({ length: 16 }, (_, i) => ({ text: `Reply ${i + 1}.` }));
  mock = await startMockServer(
    { name: "diag", markers: {}, script, modelId: "mock-model" },
    { runsDir: runs, onRequest: (body) => upstream.push(body) },
  );
  proxy = await startCaptureProxy({ upstream: mock.baseUrl, runsDir: runs, name: "diag", cacheDiagnostics: true });
  anthropic = new Anthropic({
    apiKey: "sk-ant-test",
    baseURL: baseUrlFor("anthropic-messages", proxy.url),
    maxRetries: 0,
  });
  openai = new OpenAI({ apiKey: "sk-test", baseURL: proxy.url, maxRetries: 0 });
});

afterAll(async () => {
  await proxy?.close();
  await mock?.close();
  removeTempDirs();
});

const records = () => jsonl<RequestRecord>(join(proxy.liveDir, "requests.jsonl"));
const payloadBodies = () =>
  jsonl<{ type: string; body: string }>(join(proxy.liveDir, "payloads.jsonl"))
    .filter((row) => row.type === "request")
    .map((row) => row.body);

const TOOL = { name: "read", description: "Reads a file.", input_schema: { type: "object" as const, properties: {} } };
const OTHER_TOOL = { ...TOOL, name: "write", description: "Writes a file." };

describe("proxy --cache-diagnostics in front of mock, Anthropic Messages (official client)", () => {
  it("chains each turn to the last response, shows the provider's verdict after the first, and agrees", async () => {
    const first = await anthropic.messages.create({
      model: "mock-model",
      max_tokens: 64,
      system: "Be brief.",
      tools: [TOOL],
      messages: [{ role: "user", content: "Anthropic conversation." }],
    });
    expect(first.id).toMatch(/^msg_mock_/);
    const history = [
      { role: "user" as const, content: "Anthropic conversation." },
      { role: "assistant" as const, content: "Reply 1." },
      { role: "user" as const, content: "Go on." },
    ];
    const second = await anthropic.messages.create({
      model: "mock-model",
      max_tokens: 64,
      system: "Be brief.",
      tools: [TOOL],
      messages: history,
    });
    expect(second.diagnostics).toBeNull();
    const stream = await anthropic.messages.create({
      model: "mock-model",
      max_tokens: 64,
      system: "Be brief.",
      tools: [TOOL, OTHER_TOOL],
      messages: [...history, { role: "assistant", content: "Reply 2." }, { role: "user", content: "More." }],
      stream: true,
    });
    let said: unknown;
    for await (const event of stream) if (event.type === "message_start") said = event.message.diagnostics;
    expect(said).toMatchObject({ cache_miss_reason: { type: "tools_changed" } });

    await untilInFolder(proxy.liveDir, () => records().length >= 3);
    expect(records()).toHaveLength(3);
    const [r1, r2, r3] = records();
    expect(upstream.slice(-3).map((body) => JSON.parse(body).diagnostics)).toEqual([
      { previous_message_id: null },
      { previous_message_id: first.id },
      { previous_message_id: second.id },
    ]);
    // The run keeps the bodies as the client sent them, and says what the proxy added.
    expect(payloadBodies().every((body) => !body.includes('"diagnostics"'))).toBe(true);
    expect(r1!.cacheDiagnostics).toMatchObject({ verdict: "first-turn", added: ["diagnostics.previous_message_id"] });
    expect(r2!.cacheDiagnostics).toMatchObject({ source: "anthropic", verdict: "hit", comparedWith: first.id });
    expect(r3!.cacheDiagnostics).toMatchObject({ verdict: "miss", reason: "tools_changed", part: "tools" });
    expect(r3!.cacheDiagnostics!.missedTokens).toBeGreaterThan(0);
    expect([r2, r3].map((r) => cacheAgreement(r!))).toEqual(["agree", "agree"]);
  });

  it("leaves an agent that asks for diagnostics itself alone", async () => {
    const before = records().length;
    const body = {
      model: "mock-model",
      max_tokens: 64,
      messages: [{ role: "user" as const, content: "My own chain." }],
      diagnostics: { previous_message_id: "msg_never_issued" },
    };
    const reply = await anthropic.messages.create(body);
    expect(reply.diagnostics).toEqual({ cache_miss_reason: { type: "previous_message_not_found" } });
    await untilInFolder(proxy.liveDir, () => records().length >= before + 1);
    expect(records()).toHaveLength(before + 1);
    const record = records().at(-1)!;
    expect(record.cacheDiagnostics).toMatchObject({ verdict: "not-found", comparedWith: "msg_never_issued" });
    expect(record.cacheDiagnostics!.added).toBeUndefined();
    expect(JSON.parse(upstream.at(-1)!)).toEqual(JSON.parse(payloadBodies().at(-1)!));
  });
});

describe("proxy --cache-diagnostics in front of mock, OpenAI Responses (official client)", () => {
  const input = (texts: string[]) =>
    texts.map((text, i) => ({ role: i % 2 === 0 ? ("user" as const) : ("assistant" as const), content: text }));
  const diagnosticsOf = (response: unknown) =>
    (response as { prompt_cache_diagnostics?: unknown }).prompt_cache_diagnostics;

  it("interleaved conversations each compare with their own previous response", async () => {
    const before = records().length;
    const a1 = await openai.responses.create({
      model: "mock-model",
      instructions: "A",
      input: input(["Conversation A."]),
    });
    const b1 = await openai.responses.create({
      model: "mock-model",
      instructions: "B",
      input: input(["Conversation B."]),
    });
    const a2 = await openai.responses.create({
      model: "mock-model",
      instructions: "A",
      input: input(["Conversation A.", "Reply.", "Next."]),
    });
    const b2 = await openai.responses.create({
      model: "mock-model",
      instructions: "B changed",
      input: input(["Conversation B.", "Reply.", "Next."]),
      stream: false,
    });
    expect(diagnosticsOf(a1)).toBeUndefined();
    expect(diagnosticsOf(a2)).toEqual({ type: "cache_hit" });
    expect(diagnosticsOf(b2)).toMatchObject({ type: "cache_miss", reason: "input_changed" });
    await untilInFolder(proxy.liveDir, () => records().length >= before + 4);
    expect(records()).toHaveLength(before + 4);
    const [ra1, rb1, ra2, rb2] = records().slice(before);
    expect(ra1!.cacheDiagnostics).toBeUndefined();
    expect(rb1!.cacheDiagnostics).toBeUndefined();
    expect(ra2!.cacheDiagnostics).toMatchObject({ source: "openai", verdict: "hit", comparedWith: a1.id });
    expect(rb2!.cacheDiagnostics).toMatchObject({
      verdict: "miss",
      reason: "input_changed",
      comparedWith: b1.id,
      added: ["prompt_cache_options.comparison_response_id"],
    });
    // Our reader reads a2 from a1, the earlier request it shares the most with, though b1 came between:
    // interleaved conversations read as the provider compares them (issue 34).
    expect(ra2!.prefix).toMatchObject({ breakAt: null, from: ra1!.seq });
    expect([ra2!.conversation!.id, rb2!.conversation!.id]).toEqual([ra1!.conversation!.id, rb1!.conversation!.id]);
    expect([ra2, rb2].map((r) => cacheAgreement(r!))).toEqual(["agree", "agree"]);
  });

  it("a streamed turn gets the verdict on its response events", async () => {
    const before = records().length;
    await openai.responses.create({ model: "mock-model", input: input(["Streamed conversation."]) });
    const stream = await openai.responses.create({
      model: "mock-model",
      input: input(["Streamed conversation.", "Reply.", "Again."]),
      stream: true,
    });
    let said: unknown;
    for await (const event of stream) if (event.type === "response.completed") said = diagnosticsOf(event.response);
    expect(said).toEqual({ type: "cache_hit" });
    await untilInFolder(proxy.liveDir, () => records().length >= before + 2);
    expect(records()).toHaveLength(before + 2);
    expect(records().at(-1)!.cacheDiagnostics).toMatchObject({ verdict: "hit" });
  });
});

describe("report and show hold the provider's word beside ours", () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8" });

  it("report --json carries both and the agreement; report and show name the provider's verdict", async () => {
    await proxy.close();
    const report = cli("report", proxy.dir, "--json");
    expect(report.status, report.stderr).toBe(0);
    const rows = JSON.parse(report.stdout) as {
      seq: number;
      prefix: unknown;
      cacheDiagnostics?: { verdict: string; reason: string | null };
      cacheAgreement?: string;
    }[];
    const asked = rows.filter((row) => row.cacheDiagnostics);
    expect(asked.map((row) => row.cacheDiagnostics!.verdict)).toEqual([
      "first-turn",
      "hit",
      "miss",
      "not-found",
      "hit",
      "miss",
      "hit",
    ]);
    expect(asked.map((row) => row.cacheAgreement)).toEqual(["n/a", "agree", "agree", "n/a", "agree", "agree", "agree"]);
    const table = cli("report", proxy.dir);
    expect(table.stdout).toContain("provider (anthropic): miss: tools_changed, agrees");
    // The interleaved conversations, which disagreed while ours compared with the previous request, agree.
    expect(table.stdout).not.toContain("DISAGREES");
    expect(table.stdout).toMatch(/cache: hit rate \d+(\.\d)?% \(\d+ of \d+ prompt tokens read\)/);
    const show = cli("show", proxy.dir, "3");
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(
      /cache prefix: c1: breaks in tools \(vs #\d+\): .*; provider \(anthropic\): miss: tools_changed, agrees/,
    );
  });
});
