/**
 * `report --cost` and `diff --cost` on real probe runs, each figure worked out by hand from the
 * records (their token totals and shared prefix tokens) and the models' prices in
 * @pydantic/genai-prices (held to the library in test/analysis/cost/pricing.test.ts), printed by the one
 * money rule (dollars()).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// cli-table3 measures display width with it, as the tables are drawn.
import { strlen } from "cli-table3/src/utils.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheRates, cacheRatesLine } from "../../src/analysis/cost/cache-rates.js";
import { dollars, dollarsSideBySide, roundDollars } from "../../src/analysis/cost/money.js";
import { resolveRun } from "../../src/analysis/load-run.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { runPricer } from "../../src/cli/run-pricer.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { savedPageData } from "../analysis/view/saved-page.js";
import { runProbesInto } from "../analysis/view/view-runs.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { expectDollars } from "../fixtures/expect-dollars.js";

/**
 * The command in this process (test/fixtures/cli-in-process.ts), priced from the library alone; a
 * pricing file's prices are checked through the built CLI below.
 */
async function cli(...args: string[]) {
  const { status, stdout, stderr } = await runInProcess({ PAYLOAD_PROBE_PRICING: "" }, ...args);
  return { code: status, out: stdout, err: stderr };
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
  ({ base, runs } = await runProbesInto(["seq-namespace", "seq-search", "p1-anthropic", "p1"]));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** OpenAI's rule by hand: nothing below 1,024 shared tokens, else whole steps of 128. */
const cachedByHand = (tokens: number) => (tokens < 1024 ? 0 : tokens - (tokens % 128));

describe("diff --cost", () => {
  it("seq-namespace vs seq-search priced as gpt-4.1: each of search mode's two breaks in dollars, by hand", async () => {
    const { code, out } = await cli(
      "diff",
      "seq-namespace",
      "seq-search",
      "--cost",
      "--model",
      "gpt-4.1",
      "--runs",
      runs,
    );
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
      const rebilled = (lost * (2 - 0.5)) / 1e6;
      const tokens = lost.toLocaleString("en-US");
      expect(out.replace(/\n {4}/g, " ")).toContain(
        `B #${r.seq} ${r.prefix!.breakDetail}: this break re-billed ${tokens} tokens × 1 request = ${dollars(rebilled)}`,
      );
    }
    expect(out).not.toContain("A #");
    // The per-request line of the first break: B pays its whole prompt in full.
    const a2 = records("seq-namespace")[1]!;
    const b2 = b[1]!;
    const aCost = ((a2.tokens!.total - cachedByHand(shared(a2))) * 2 + cachedByHand(shared(a2)) * 0.5) / 1e6;
    const bCost = (b2.tokens!.total * 2) / 1e6;
    // Both at the places the finer needs, and the Δ their difference as printed.
    const [shownA, shownB] = [aCost, bCost].map((x) => x.toFixed(6));
    const delta = (Number(shownB) - Number(shownA)).toFixed(6);
    expect(out).toContain(`#2  A $${shownA}  B $${shownB}  (+$${delta})`);
  });

  it("--json prints the comparison as one JSON object; a model without a price says so instead of a figure", async () => {
    const json = JSON.parse(
      (await cli("diff", "seq-namespace", "seq-search", "--cost", "--json", "--model", "gpt-4o", "--runs", runs)).out,
    );
    expect(json.breaks.map((x: { seq: number }) => x.seq)).toEqual([2, 5]);
    expect(json.total.delta).toBe(roundDollars(json.total.delta));
    expect(json.prices.table).toBe("@pydantic/genai-prices 0.1.8 (2026-09-23)");
    const unknown = await cli(
      "diff",
      "seq-namespace",
      "seq-search",
      "--cost",
      "--model",
      "qwen3.8-flash",
      "--runs",
      runs,
    );
    expect(unknown.code).toBe(0);
    expect(unknown.out).toContain("price unknown for qwen3.8-flash");
    expect(unknown.out.match(/price unknown for/g)).toHaveLength(1);
    expect(unknown.out).not.toMatch(/A \$/);
  });
});

describe("report --cost", () => {
  it("OpenAI rules per request: the cached tokens and dollars of every request of seq-search, by hand", async () => {
    const { code, out } = await cli(
      "report",
      "seq-search",
      "--cost",
      "--plain",
      "--model",
      "gpt-4.1-mini",
      "--runs",
      runs,
    );
    expect(code).toBe(0);
    for (const r of records("seq-search")) {
      const read = r.seq === 1 ? 0 : cachedByHand(shared(r));
      // gpt-4.1-mini: $0.40 input, $0.10 cached.
      const cost = ((r.tokens!.total - read) * 0.4 + read * 0.1) / 1e6;
      const line = out.split("\n").find((l) => l.startsWith(`seq=${r.seq} `))!;
      expect(line).toContain(`input=${r.tokens!.total} read=${read} write5m=0 write1h=0`);
      expectDollars(Number(/cost=([\d.e-]+)/.exec(line)![1]), cost);
    }
    expect(out).toContain("prices: @pydantic/genai-prices 0.1.8 (2026-09-23)");
  });

  it("Anthropic rules on p1-anthropic: request 1 writes its prefix at the 5m price, each later one reads what the one before wrote", async () => {
    const { out } = await cli(
      "report",
      "p1-anthropic",
      "--cost",
      "--json",
      "--model",
      "claude-sonnet-4",
      "--runs",
      runs,
    );
    const cost = JSON.parse(out);
    const [first, ...rest] = cost.requests;
    expect(first.predicted.cacheRead).toBe(0);
    expect(first.predicted.cacheWrite5m).toBeGreaterThan(1024);
    let written = first.predicted.cacheWrite5m;
    for (const r of rest) {
      expect(r.predicted.cacheRead).toBe(written);
      written = r.predicted.cacheRead + r.predicted.cacheWrite5m;
      const p = r.predicted;
      expectDollars(r.predictedCost, (p.uncached * 3 + p.cacheRead * 0.3 + p.cacheWrite5m * 3.75) / 1e6);
    }
  });

  it("a pricing file from PAYLOAD_PROBE_PRICING prices the mock's own model; a broken one exits 2 naming file and field", async () => {
    const file = join(base, "prices.yaml");
    writeFileSync(
      file,
      "version: 1\nmodels:\n  gpt-4.1: { provider: openai, input: 1, cachedInput: 0.1, output: 2 }\n",
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
    // The probe prices its model as gpt-4.1 (its model.priceAs default), which the file overrides: $1 a million.
    expect(priced.stdout).toContain(dollars(first.tokens!.total / 1e6));
    expect(priced.stdout).toContain(`prices: @pydantic/genai-prices 0.1.8 (2026-09-23), then ${file}`);
    writeFileSync(file, "version: 1\nmodels:\n  x: { provider: openai, input: cheap, cachedInput: 0, output: 1 }\n");
    const broken = await cli("report", "seq-search", "--cost", "--pricing", file, "--runs", runs);
    expect(broken.code).toBe(2);
    expect(broken.err).toContain(`${file}: field "models.x.input"`);
    expect(broken.err).not.toMatch(/\n\s+at /);
  });
});

describe("show --cost", () => {
  it("one request's split and dollars, and what its prefix break re-billed, the same figures as diff --cost", async () => {
    const b = records("seq-search");
    const r = b[4]!; // request 5: search mode adds b_tool2
    const { code, out } = await cli("show", "seq-search", "5", "--cost", "--model", "gpt-4.1", "--runs", runs);
    expect(code).toBe(0);
    const [first, second] = out.split("\n");
    const read = cachedByHand(shared(r));
    const cost = ((r.tokens!.total - read) * 2 + read * 0.5) / 1e6;
    expect(first).toBe(
      `cost (gpt-4.1): predicted ${dollars(cost)} for ${r.tokens!.total} prompt tokens — ${read} read from the cache, ` +
        `0 written for 5m, 0 for 1h, ${r.tokens!.total - read} in full`,
    );
    const lost = cachedByHand(b[3]!.tokens!.total) - read;
    expect(second).toBe(
      `${r.prefix!.breakDetail}: this break re-billed ${lost.toLocaleString("en-US")} tokens × 1 request = ${dollars((lost * 1.5) / 1e6)}`,
    );
    const json = JSON.parse(
      (await cli("show", "seq-search", "5", "--cost", "--json", "--model", "gpt-4.1", "--runs", runs)).out,
    );
    expect(json.cost.predicted).toMatchObject({ inputTokens: r.tokens!.total, cacheRead: read });
    expect(json.cost.rebill).toEqual({ tokens: lost, requests: 1, dollars: roundDollars((lost * 1.5) / 1e6) });
    expect(json.cost.prices.table).toBe("@pydantic/genai-prices 0.1.8 (2026-09-23)");
  });
});

describe("view --cost", () => {
  it("each request's detail in the page carries the same lines show --cost prints", async () => {
    const page = join(base, "view.html");
    const { code } = await cli("view", "seq-search", "--cost", "--model", "gpt-4.1", "--out", page, "--runs", runs);
    expect(code).toBe(0);
    const { items: html } = savedPageData(readFileSync(page, "utf8"));
    for (const seq of ["2", "5"]) {
      const lines = (await cli("show", "seq-search", seq, "--cost", "--model", "gpt-4.1", "--runs", runs)).out.split(
        "\n",
      );
      // The first two lines are the cost and the break's re-billing; the page holds them as JSON strings.
      for (const line of lines.slice(0, 2)) expect(html).toContain(JSON.stringify(line));
    }
    // With the request's cache figures (issue 27): request 2 reads request 1's prefix.
    expect(html).toMatch(
      /"cache: read [1-9]\d* of \d+ prompt tokens \([\d.]+%\), wrote 0, 0 never read; by our cache model"/,
    );
    const plain = join(base, "plain.html");
    await cli("view", "seq-search", "--out", plain, "--runs", runs);
    expect(savedPageData(readFileSync(plain, "utf8")).items).not.toContain("prompt tokens —");
  });
});

describe("predicted beside reported usage", () => {
  it("a proxied run's provider usage is priced beside the prediction, and a request where they disagree is flagged", async () => {
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
    const { code, out } = await cli("report", "reported", "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
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
    expectDollars(fourth.reportedCost, ((r4.tokens!.total + 7) * 2 + 20 * 8) / 1e6);
    const table = (await cli("report", "reported", "--cost", "--wide", "--model", "gpt-4.1", "--runs", runs)).out;
    expect(table).toContain("1 request(s) where predicted and reported caching disagree");
    // Each total says where it comes from: the provider's usage here is what it bills. Both at one
    // precision, so each reads as its column's sum.
    const totals = dollarsSideBySide(cost.total.predicted, cost.total.reported);
    expect(table).toContain(
      `total: predicted ${totals.a} (our cache model), reported ${totals.b} (the provider's usage: what it bills, trust it first)`,
    );
    const estimated = rs.map((r) => ({ ...r, usage: { ...usage(r, 0), source: "estimate" } }));
    writeFileSync(join(runs, "reported", "requests.jsonl"), `${estimated.map((r) => JSON.stringify(r)).join("\n")}\n`);
    rmSync(join(runs, "reported", "requests.index.jsonl"), { force: true });
    const mock = (await cli("report", "reported", "--cost", "--wide", "--model", "gpt-4.1", "--runs", runs)).out;
    expect(mock).toMatch(
      /reported \$[\d.]+ \(a mock's estimated usage, not a bill: the predicted figure is the one to read\)/,
    );
    // The check column: the reported split beside the row's predicted read and write, and the
    // provider's prompt count where it is not ours.
    expect(table).toMatch(new RegExp(`│\\s+4 │.*│ DISAGREE: read 0, write 0 of ${r4.tokens!.total + 7} +│`));
    expect(table).toMatch(/│\s+3 │.*│ agrees: read \d+, write 0 of \d+ +│/);
  });
});

describe("a captured Claude Code–shaped session", () => {
  it("Messages requests with cache_control breakpoints from claude-sonnet-4-5-20250929 are priced with no flag", async () => {
    // p1-anthropic's wire bodies (breakpoints on the system prompt and the newest message), recorded
    // as a proxy in front of Anthropic records them: the agent's own dated model id, no probe behind it.
    cpSync(join(runs, "p1-anthropic"), join(runs, "claude-session"), { recursive: true });
    const session = records("p1-anthropic").map((r) => ({
      ...r,
      probe: "claude-session",
      model: "claude-sonnet-4-5-20250929",
    }));
    writeFileSync(
      join(runs, "claude-session", "requests.jsonl"),
      `${session.map((r) => JSON.stringify(r)).join("\n")}\n`,
    );
    const cost = JSON.parse((await cli("report", "claude-session", "--cost", "--json", "--runs", runs)).out);
    expect(cost.unpriced).toEqual([]);
    expect(cost.prices).toEqual({ table: "@pydantic/genai-prices 0.1.8 (2026-09-23)", files: [] });
    for (const r of cost.requests) {
      expect(r).toMatchObject({ model: "claude-sonnet-4-5-20250929", pricedAs: "claude-sonnet-4-5" });
      const p = r.predicted;
      // Sonnet 4.5: $3 input, $0.30 read, $3.75 5m write, $6 1h write.
      const byHand = (p.uncached * 3 + p.cacheRead * 0.3 + p.cacheWrite5m * 3.75 + p.cacheWrite1h * 6) / 1e6;
      expectDollars(r.predictedCost, byHand);
    }
    expect(cost.requests[0].predicted.cacheWrite5m).toBeGreaterThan(1024);
    expect(cost.requests[1].predicted.cacheRead).toBe(cost.requests[0].predicted.cacheWrite5m);
  });
});

describe("80 columns (COLUMNS=80, as a terminal of 80 columns)", () => {
  /**
   * The command's output at COLUMNS=80; every line of its money part is at most 80 display columns
   * (`part` picks it: diff's and show's request tables are held to 80 columns by their own tests).
   */
  const at80 = async (args: string[], part: (lines: string[]) => string[] = (lines) => lines) => {
    const child = await runInProcess({ PAYLOAD_PROBE_PRICING: "", COLUMNS: "80" }, ...args, "--runs", runs);
    expect(child.status).toBe(0);
    const lines = part(child.stdout.split("\n"));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(strlen(line), line).toBeLessThanOrEqual(80);
    return lines.join("\n");
  };
  const json = async (...args: string[]) => JSON.parse((await cli(...args, "--json", "--runs", runs)).out);

  it("report --cost of every priced probe here fits, with every request's dollars and the total visible, no flag", async () => {
    for (const probe of ["p1", "p1-anthropic", "seq-search"]) {
      const out = await at80(["report", probe, "--cost"]);
      const cost = await json("report", probe, "--cost");
      expect(cost.unpriced).toEqual([]);
      expect(out).toContain("prices: @pydantic/genai-prices 0.1.8 (2026-09-23)");
      for (const r of cost.requests)
        expect(out).toMatch(new RegExp(`│\\s+${r.seq} │.*${dollars(r.predictedCost).replace("$", "\\$")}`));
      expect(out).toContain(`total: predicted ${dollars(cost.total.predicted)}`);
    }
  });

  it("diff p1 p1-anthropic --cost prices each side as its own model and fits; --model-a/--model-b override", async () => {
    const out = await at80(["diff", "p1", "p1-anthropic", "--cost"], (lines) =>
      lines.slice(lines.findIndex((l) => l.startsWith("cost (predicted"))),
    );
    expect(out).toContain("A priced as gpt-4.1; B as claude-sonnet-4-5");
    const [a, b] = [await json("report", "p1", "--cost"), await json("report", "p1-anthropic", "--cost")];
    expect(out).toContain(`total  A ${dollars(a.total.predicted)}  B ${dollars(b.total.predicted)}`);
    const both = await json(
      "diff",
      "p1",
      "p1-anthropic",
      "--cost",
      "--model-a",
      "claude-haiku-4-5",
      "--model-b",
      "gpt-4o",
    );
    expect(both.models).toEqual({ a: ["claude-haiku-4-5"], b: ["gpt-4o"] });
  });

  it("show --cost fits, the predicted dollars whole", async () => {
    const out = await at80(["show", "p1-anthropic", "2", "--cost"], (lines) =>
      lines.slice(0, lines.findIndex((l) => l.startsWith("prices: ")) + 1),
    );
    const cost = await json("report", "p1-anthropic", "--cost");
    expect(out).toContain(`cost (claude-sonnet-4-5): predicted ${dollars(cost.requests[1].predictedCost)}`);
  });
});

describe("the cache rates under report's table and diff's text", () => {
  /**
   * p1's requests, then p1-anthropic's after them with their bodies: the pass meets Messages bodies
   * (breakpoints to count) only after it started without the tokenizer.
   */
  function writeMixedRun(): void {
    const dir = join(runs, "mixed");
    mkdirSync(dir, { recursive: true });
    const renumbered = (name: string, file: string, by: number) =>
      readFileSync(join(runs, name, file), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const row = JSON.parse(line) as { seq: number };
          return JSON.stringify({ ...row, seq: row.seq + by });
        });
    for (const file of ["requests.jsonl", "payloads.jsonl"])
      writeFileSync(
        join(dir, file),
        `${[...renumbered("p1", file, 0), ...renumbered("p1-anthropic", file, 4)].join("\n")}\n`,
      );
  }

  it("are the rates of the run priced whole, on each path: tallied in the table's own pass (seq-search), with the tokenizer loaded first (p1-anthropic), or priced apart when the pass met bodies it could not count (mixed)", async () => {
    writeMixedRun();
    const price = await runPricer({});
    const whole = async (name: string) => cacheRatesLine(cacheRates(await price(resolveRun(name, { runsDir: runs }))));
    const cacheLines = (out: string) => out.split("\n").filter((line) => /^([AB] )?cache:/.test(line));
    for (const name of ["seq-search", "p1-anthropic", "mixed"]) {
      const report = await cli("report", name, "--wide", "--runs", runs);
      expect(report.code).toBe(0);
      expect(cacheLines(report.out)).toEqual([await whole(name)]);
    }
    const diff = await cli("diff", "p1-anthropic", "mixed", "--wide", "--runs", runs);
    expect(diff.code).toBe(0);
    expect(cacheLines(diff.out)).toEqual([`A ${await whole("p1-anthropic")}`, `B ${await whole("mixed")}`]);
    // The mixed run's Messages requests wrote and read at breakpoints: what the tokenizer was needed for.
    expect(await whole("mixed")).toMatch(/write amplification/);
  });
});
