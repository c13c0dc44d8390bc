/**
 * `report --context` as a user runs it, on the shipped probe p2-direct: the table fits 80 columns,
 * --json gives each request's sources adding up to its total, and the tools never called are listed
 * with what they cost over the run.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContextDiff } from "../../src/analysis/context/context-diff.js";
import type { ContextSummary } from "../../src/analysis/context/context-summary.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { jsonl } from "../capture/http-harness.js";
import { cliInProcess, type EnvChanges } from "../fixtures/cli-in-process.js";
import { sharedRun } from "../fixtures/shared-runs.js";

/** `report` or `diff` in this process (test/fixtures/cli-in-process.ts): what it prints is what is tested. */
const cli = (args: string[], env: EnvChanges = {}) => cliInProcess(env, ...args);

/** The built CLI as a child, for the one test of its table as a user's shell gets it (COLUMNS through a pipe). */
function spawned(args: string[], env: Record<string, string> = {}) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

let dir: string;
let records: RequestRecord[];
beforeAll(async () => {
  dir = (await sharedRun("p2-direct")).dir;
  records = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
});

describe("report --context on p2-direct", () => {
  it("--json: each request's sources add up to its record's total", async () => {
    const { code, out } = await cli(["report", dir, "--context", "--json"]);
    expect(code).toBe(0);
    const summary = JSON.parse(out) as ContextSummary;
    expect(summary.requests.map((r) => r.seq)).toEqual(records.map((r) => r.seq));
    for (const [i, request] of summary.requests.entries()) {
      expect(request.total).toBe(records[i]!.tokens!.total);
      expect(Object.values(request.sources).reduce((a, b) => a + b, 0)).toBe(request.total);
    }
    const server = summary.sources.find((s) => s.source === "mcp:probe-stub")!;
    expect(server.last).toBe(records.at(-1)!.sources!["mcp:probe-stub"]);
    expect(server.session).toBe(records.reduce((t, r) => t + r.sources!["mcp:probe-stub"]!, 0));
    expect(summary.sources.reduce((t, s) => t + s.share, 0)).toBeCloseTo(1, 9);
  });

  it("over the session: each source's first and last figure, the history growing, and what dominates at the end", async () => {
    const summary = JSON.parse((await cli(["report", dir, "--context", "--json"])).out) as ContextSummary;
    expect(summary.firstSeq).toBe(records[0]!.seq);
    const history = summary.sources.find((s) => s.source === "history")!;
    expect(history.first).toBe(records[0]!.sources!.history);
    expect(history.last).toBeGreaterThan(history.first);
    // Turn by turn: each request's figure is in --json, in order.
    const growth = summary.requests.map((r) => r.sources.history);
    expect(growth).toEqual(records.map((r) => r.sources!.history));
    const last = records.at(-1)!;
    const top = Object.entries(last.sources!).sort((a, b) => b[1] - a[1])[0]!;
    expect(summary.dominant).toEqual({ source: top[0], tokens: top[1], total: last.tokens!.total });
    const table = (await cli(["report", dir, "--context"], { COLUMNS: "80", NO_COLOR: "1" })).out.replace(/\s+/g, " ");
    expect(table).toContain(`at the end ${top[0]} takes the most: ${top[1]} of ${last.tokens!.total} tokens`);
  });

  it("the direct tools, called only through the gateway, are never called, with their cost over the run", async () => {
    const summary = JSON.parse((await cli(["report", dir, "--context", "--json"])).out) as ContextSummary;
    const echo = summary.unused.find((u) => u.tool === "probe-stub_stub_echo")!;
    const at = records[0]!.tools.indexOf("probe-stub_stub_echo");
    expect(echo).toEqual({
      tool: "probe-stub_stub_echo",
      source: "mcp:probe-stub",
      requests: records.length,
      tokens: records.reduce((t, r) => t + r.toolTokens![at]!, 0),
    });
    expect(summary.unused.map((u) => u.tool)).not.toContain("mcp");
  });

  it("the table fits 80 columns and names every source (the built CLI)", () => {
    const { code, out } = spawned(["report", dir, "--context"], { COLUMNS: "80", NO_COLOR: "1" });
    expect(code).toBe(0);
    for (const line of out.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    for (const source of Object.keys(records.at(-1)!.sources!)) expect(out).toContain(source);
    expect(out).toContain("never called");
  });
});

describe("report --context on records without sources", () => {
  let copy: string;
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "pp-context-"));
    cpSync(dir, copy, { recursive: true });
    // A run written before sources were counted: the same records without them (and no index).
    const old = records.map(({ sources: _s, toolTokens: _t, ...rest }) => JSON.stringify(rest)).join("\n");
    writeFileSync(join(copy, "requests.jsonl"), `${old}\n`);
    rmSync(join(copy, "requests.index.jsonl"), { force: true });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it("says on stderr which requests carry none, and exits 0", async () => {
    const { code, out, err } = await cli(["report", copy, "--context", "--json"]);
    expect(code).toBe(0);
    expect((JSON.parse(out) as ContextSummary).requests).toEqual([]);
    expect(err).toContain(`${records.length} request(s) carry no sources`);
    expect(readFileSync(join(copy, "requests.jsonl"), "utf8")).not.toContain('"sources"');
  });
});

describe("report --context where the provider reported input tokens", () => {
  let copy: string;
  // The provider's counts as a real one gives them: another tokenizer's, a third above ours, one request without.
  const provider = (r: RequestRecord) => Math.round(r.tokens!.total * 1.3) + r.seq;
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "pp-context-scaled-"));
    cpSync(dir, copy, { recursive: true });
    const reported = records.map((r, i) =>
      JSON.stringify(
        i === 0 ? { ...r, usage: null } : { ...r, usage: { source: "provider", inputTokens: provider(r), raw: {} } },
      ),
    );
    writeFileSync(join(copy, "requests.jsonl"), `${reported.join("\n")}\n`);
    rmSync(join(copy, "requests.index.jsonl"), { force: true });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it("--json: each such request's sources scaled add up to the provider's count, beside ours", async () => {
    const { code, out } = await cli(["report", copy, "--context", "--json"]);
    expect(code).toBe(0);
    const summary = JSON.parse(out) as ContextSummary;
    expect(summary.scaledRequests).toBe(records.length - 1);
    expect(summary.requests[0]).toMatchObject({ provider: null, scaled: null });
    for (const [i, request] of summary.requests.entries()) {
      expect(Object.values(request.sources).reduce((a, b) => a + b, 0)).toBe(request.total);
      if (i === 0) continue;
      expect(request.provider).toBe(provider(records[i]!));
      expect(Object.values(request.scaled!).reduce((a, b) => a + b, 0)).toBe(request.provider);
      expect(Object.keys(request.scaled!).sort()).toEqual(Object.keys(request.sources).sort());
      // In proportion to ours: each source within a token of its exact share.
      for (const [source, tokens] of Object.entries(request.sources))
        expect(Math.abs(request.scaled![source]! - (tokens * request.provider!) / request.total)).toBeLessThan(1);
    }
    const server = summary.sources.find((s) => s.source === "mcp:probe-stub")!;
    expect(server.sessionScaled).toBe(summary.requests.slice(1).reduce((t, r) => t + r.scaled!["mcp:probe-stub"]!, 0));
    expect(server.lastScaled).toBe(summary.requests.at(-1)!.scaled!["mcp:probe-stub"]);
  });

  it("the table adds a provider column and says what it is, in 80 columns", async () => {
    const { code, out } = await cli(["report", copy, "--context"], { COLUMNS: "80", NO_COLOR: "1" });
    expect(code).toBe(0);
    for (const line of out.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    expect(out).toMatch(/\bprovider\b/);
    // The legend is folded to the width: read it as one line.
    expect(out.replace(/\s+/g, " ")).toContain(`${records.length - 1} of ${records.length} request(s) reported them`);
  });
});

describe("diff --context: which sources grew or shrank between two runs", () => {
  it("p1 vs p2-direct: adding the server costs its tools' tokens on every request, in one sentence", async () => {
    const [p1, direct] = [await sharedRun("p1"), await sharedRun("p2-direct")];
    const before = jsonl<RequestRecord>(join(p1.dir, "requests.jsonl"));
    expect(before.some((r) => r.sources!["mcp:probe-stub"] !== undefined)).toBe(false);
    const { code, out } = await cli(["diff", p1.dir, direct.dir, "--context", "--json"]);
    expect(code).toBe(0);
    const diff = JSON.parse(out) as ContextDiff;
    // The server's two tools are the same definitions on every request of p2-direct.
    const each = records.map((r) => r.sources!["mcp:probe-stub"]!);
    expect(new Set(each).size).toBe(1);
    const server = diff.changes.find((c) => c.source === "mcp:probe-stub")!;
    expect(server).toMatchObject({ a: null, change: each[0] });
    expect(diff.sentences).toContain(`adding mcp:probe-stub costs ${each[0]} tokens on every request`);
    // Every side's figures add up: per-request figures of all sources are its tokens over its requests.
    const total = (rs: RequestRecord[]) => rs.reduce((t, r) => t + r.tokens!.total, 0);
    expect(diff.changes.reduce((t, c) => t + (c.b?.session ?? 0), 0)).toBe(total(records));
    expect(diff.changes.reduce((t, c) => t + (c.a?.session ?? 0), 0)).toBe(total(before));
  });

  it("p2-direct vs p2-proxy: the same server sent two ways, its change a request; the table in 80 columns", async () => {
    const proxy = await sharedRun("p2-proxy");
    const proxied = jsonl<RequestRecord>(join(proxy.dir, "requests.jsonl"));
    const { code, out } = await cli(["diff", dir, proxy.dir, "--context", "--json"]);
    expect(code).toBe(0);
    const server = (JSON.parse(out) as ContextDiff).changes.find((c) => c.source === "mcp:probe-stub")!;
    const perRequest = (rs: RequestRecord[]) =>
      Math.round(rs.reduce((t, r) => t + r.sources!["mcp:probe-stub"]!, 0) / rs.length);
    expect(server.change).toBe(perRequest(proxied) - perRequest(records));
    const table = await cli(["diff", dir, proxy.dir, "--context"], { COLUMNS: "80", NO_COLOR: "1" });
    expect(table.code).toBe(0);
    for (const line of table.out.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    expect(table.out.replace(/\s+/g, " ")).toContain(
      `mcp:probe-stub ${server.change > 0 ? "grew" : "shrank"} by ${Math.abs(server.change)} tokens on every request`,
    );
    expect((await cli(["diff", dir, proxy.dir, "--context", "--cost"])).code).toBe(2);
  });
});
