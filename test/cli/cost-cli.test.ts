/**
 * `report --cost` and `diff --cost` on real probe runs, each figure worked out by hand from the
 * records (their token totals and shared prefix tokens) and the prices in pricing/models.yaml.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runProbesInto } from "../analysis/view-runs.js";

function cli(...args: string[]) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, PAYLOAD_PROBE_PRICING: "" },
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

let base: string;
let runs: string;
const records = (name: string): RequestRecord[] =>
  readFileSync(join(runs, name, "requests.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RequestRecord);
const shared = (r: RequestRecord) => (r.prefix as unknown as { sharedTokens: number }).sharedTokens;

beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["seq-namespace", "seq-search", "p1-anthropic"]));
}, 120_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** OpenAI's rule by hand: nothing below 1,024 shared tokens, else whole steps of 128. */
const cachedByHand = (tokens: number) => (tokens < 1024 ? 0 : tokens - (tokens % 128));

describe("diff --cost", () => {
  it("seq-namespace vs seq-search priced as gpt-4.1: each of search mode's two breaks in dollars, by hand", () => {
    const { code, out } = cli("diff", "seq-namespace", "seq-search", "--cost", "--model", "gpt-4.1", "--runs", runs);
    expect(code).toBe(0);
    const b = records("seq-search");
    const breaks = b.filter((r) => r.prefix?.breakAt);
    expect(breaks.map((r) => r.seq)).toEqual([2, 5]);
    for (const r of breaks) {
      const before = b[r.seq - 2]!;
      // Had it only appended, the request would have read the whole previous prompt (in steps of 128);
      // the break left it the tokens before the added tool. gpt-4.1: $2.00 input, $0.50 cached.
      const lost = cachedByHand(before.tokens!.total) - cachedByHand(shared(r));
      expect(lost).toBeGreaterThan(0);
      const dollars = (lost * (2 - 0.5)) / 1e6;
      const tokens = lost.toLocaleString("en-US");
      expect(out).toContain(
        `B #${r.seq} ${r.prefix!.breakDetail}: this break re-billed ${tokens} tokens × 1 request = $${Number(dollars.toPrecision(4))}`,
      );
    }
    expect(out).not.toContain("A #");
    // The per-request line of the first break: B pays its whole prompt in full.
    const a2 = records("seq-namespace")[1]!;
    const b2 = b[1]!;
    const aCost = ((a2.tokens!.total - cachedByHand(shared(a2))) * 2 + cachedByHand(shared(a2)) * 0.5) / 1e6;
    const bCost = (b2.tokens!.total * 2) / 1e6;
    expect(out).toContain(`#2  A $${Number(aCost.toPrecision(4))}  B $${Number(bCost.toPrecision(4))}`);
  });

  it("--json prints the comparison as one JSON object; a model without a price says so instead of a figure", () => {
    const json = JSON.parse(
      cli("diff", "seq-namespace", "seq-search", "--cost", "--json", "--model", "gpt-4o", "--runs", runs).out,
    );
    expect(json.breaks.map((x: { seq: number }) => x.seq)).toEqual([2, 5]);
    expect(json.total.delta).toBeCloseTo(json.total.b - json.total.a, 12);
    const unknown = cli("diff", "seq-namespace", "seq-search", "--cost", "--runs", runs);
    expect(unknown.code).toBe(0);
    expect(unknown.out).toContain("price unknown for qwen3.8-flash");
    expect(unknown.out).not.toMatch(/A \$/);
  });
});

describe("report --cost", () => {
  it("OpenAI rules per request: the cached tokens and dollars of every request of seq-search, by hand", () => {
    const { code, out } = cli("report", "seq-search", "--cost", "--plain", "--model", "gpt-4.1-mini", "--runs", runs);
    expect(code).toBe(0);
    for (const r of records("seq-search")) {
      const read = r.seq === 1 ? 0 : cachedByHand(shared(r));
      // gpt-4.1-mini: $0.40 input, $0.10 cached.
      const cost = ((r.tokens!.total - read) * 0.4 + read * 0.1) / 1e6;
      const line = out.split("\n").find((l) => l.startsWith(`seq=${r.seq} `))!;
      expect(line).toContain(`input=${r.tokens!.total} read=${read} write5m=0 write1h=0`);
      expect(Number(/cost=([\d.e-]+)/.exec(line)![1])).toBeCloseTo(cost, 12);
    }
    expect(out).toContain("unconfirmed prices");
  });

  it("Anthropic rules on p1-anthropic: request 1 writes its prefix at the 5m price, each later one reads what the one before wrote", () => {
    const { out } = cli("report", "p1-anthropic", "--cost", "--json", "--model", "claude-sonnet-4", "--runs", runs);
    const cost = JSON.parse(out);
    const [first, ...rest] = cost.requests;
    expect(first.predicted.cacheRead).toBe(0);
    expect(first.predicted.cacheWrite5m).toBeGreaterThan(1024);
    let written = first.predicted.cacheWrite5m;
    for (const r of rest) {
      expect(r.predicted.cacheRead).toBe(written);
      written = r.predicted.cacheRead + r.predicted.cacheWrite5m;
      const p = r.predicted;
      expect(r.predictedCost).toBeCloseTo((p.uncached * 3 + p.cacheRead * 0.3 + p.cacheWrite5m * 3.75) / 1e6, 12);
    }
  });

  it("a pricing file from PAYLOAD_PROBE_PRICING prices the mock's own model; a broken one exits 2 naming file and field", () => {
    const file = join(base, "prices.yaml");
    writeFileSync(
      file,
      "version: 1\nmodels:\n  qwen3.8-flash: { provider: openai, input: 1, cachedInput: 0.1, output: 2 }\n",
    );
    const priced = spawnSync(
      process.execPath,
      [join(PROJECT_ROOT, "dist/cli/main.js"), "report", "seq-search", "--cost", "--runs", runs],
      {
        encoding: "utf8",
        timeout: 120_000,
        env: { ...process.env, PAYLOAD_PROBE_PRICING: file },
      },
    );
    expect(priced.status).toBe(0);
    expect(priced.stdout).not.toContain("price unknown");
    const first = records("seq-search")[0]!;
    expect(priced.stdout).toContain(`$${Number((first.tokens!.total / 1e6).toPrecision(4))}`);
    writeFileSync(file, "version: 1\nmodels:\n  x: { provider: openai, input: cheap, cachedInput: 0, output: 1 }\n");
    const broken = cli("report", "seq-search", "--cost", "--pricing", file, "--runs", runs);
    expect(broken.code).toBe(2);
    expect(broken.err).toContain(`${file}: field "models.x.input"`);
    expect(broken.err).not.toMatch(/\n\s+at /);
  });
});

describe("show --cost", () => {
  it("one request's split and dollars, and what its prefix break re-billed, the same figures as diff --cost", () => {
    const b = records("seq-search");
    const r = b[4]!; // request 5: search mode adds b_tool2
    const { code, out } = cli("show", "seq-search", "5", "--cost", "--model", "gpt-4.1", "--runs", runs);
    expect(code).toBe(0);
    const [first, second] = out.split("\n");
    const read = cachedByHand(shared(r));
    const cost = ((r.tokens!.total - read) * 2 + read * 0.5) / 1e6;
    expect(first).toBe(
      `cost (gpt-4.1): ${r.tokens!.total} prompt tokens — ${read} read from the cache, 0 written for 5m, 0 written for 1h, ` +
        `${r.tokens!.total - read} in full — predicted $${Number(cost.toPrecision(4))}`,
    );
    const lost = cachedByHand(b[3]!.tokens!.total) - read;
    expect(second).toBe(
      `${r.prefix!.breakDetail}: this break re-billed ${lost.toLocaleString("en-US")} tokens × 1 request = $${Number(((lost * 1.5) / 1e6).toPrecision(4))}`,
    );
    const json = JSON.parse(
      cli("show", "seq-search", "5", "--cost", "--json", "--model", "gpt-4.1", "--runs", runs).out,
    );
    expect(json.cost.predicted).toMatchObject({ inputTokens: r.tokens!.total, cacheRead: read });
    expect(json.cost.rebill).toEqual({ tokens: lost, requests: 1, dollars: expect.closeTo((lost * 1.5) / 1e6, 12) });
  });
});

describe("view --cost", () => {
  it("each request's detail in the page carries the same lines show --cost prints", () => {
    const page = join(base, "view.html");
    const { code } = cli("view", "seq-search", "--cost", "--model", "gpt-4.1", "--out", page, "--runs", runs);
    expect(code).toBe(0);
    const html = readFileSync(page, "utf8");
    for (const seq of ["2", "5"]) {
      const lines = cli("show", "seq-search", seq, "--cost", "--model", "gpt-4.1", "--runs", runs).out.split("\n");
      // The first two lines are the cost and the break's re-billing; the page holds them as JSON strings.
      for (const line of lines.slice(0, 2)) expect(html).toContain(JSON.stringify(line));
    }
    const plain = join(base, "plain.html");
    cli("view", "seq-search", "--out", plain, "--runs", runs);
    expect(readFileSync(plain, "utf8")).not.toContain("prompt tokens —");
  });
});

describe("predicted beside reported usage", () => {
  it("a proxied run's provider usage is priced beside the prediction, and a request where they disagree is flagged", () => {
    // seq-search's records as a proxy in front of a real provider would hold them: each response's usage.
    cpSync(join(runs, "seq-search"), join(runs, "reported"), { recursive: true });
    const rs = records("seq-search");
    const usage = (r: RequestRecord, cached: number) => ({
      source: "provider",
      inputTokens: r.tokens!.total + 7, // the provider's tokenizer is not ours
      cachedInputTokens: cached,
      outputTokens: 20,
      raw: {},
    });
    const reported = rs.map((r) => ({
      ...r,
      // Each request read what the model predicts, but request 4 read nothing (evicted, say).
      usage: usage(r, r.seq === 1 || r.seq === 4 ? 0 : cachedByHand(shared(r))),
    }));
    writeFileSync(join(runs, "reported", "requests.jsonl"), `${reported.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const { code, out } = cli("report", "reported", "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
    expect(code).toBe(0);
    const cost = JSON.parse(out);
    const third = cost.requests[2];
    const fourth = cost.requests[3];
    expect(third.disagreement).toBeNull();
    expect(fourth.predicted.cacheRead).toBe(cachedByHand(shared(rs[3]!)));
    expect(fourth.disagreement).toBe(
      `cache read predicted ${fourth.predicted.cacheRead} (${Math.round((fourth.predicted.cacheRead / rs[3]!.tokens!.total) * 100)}%), reported 0 (0%)`,
    );
    // Reported dollars by hand: uncached at $2, cached at $0.50, 20 output tokens at $8.
    const r4 = rs[3]!;
    expect(fourth.reportedCost).toBeCloseTo(((r4.tokens!.total + 7) * 2 + 20 * 8) / 1e6, 12);
    const table = cli("report", "reported", "--cost", "--wide", "--model", "gpt-4.1", "--runs", runs).out;
    expect(table).toContain("1 request(s) where predicted and reported caching disagree");
    expect(table).toMatch(/│\s+4 │.*DISAGREE: cache read predicted/);
    expect(table).toMatch(/│\s+3 │.*agrees/);
  });
});
