/**
 * Price facts (src/analysis/cost/price-fact.ts) as the built CLI uses them: `report --cost` of a real
 * p1 run, in processes of their own with a cache folder of the test's own. Whether the price library
 * was loaded is read from Node's own module log (NODE_DEBUG=module), which names every file it loads.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { priceFactPath } from "../../../src/analysis/cost/price-fact.js";
import { PRICE_TABLE } from "../../../src/analysis/cost/pricing.js";
import { defaultTokenCachePath } from "../../../src/capture/token-count-cache.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { MAIN } from "../../cli/scratch-cli.js";
import { runProbesInto } from "../view/view-runs.js";

let base: string;
let runs: string;
beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["p1", "seq-namespace"]));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const LIBRARY_LOADED = /load "[^"]*@pydantic\/genai-prices\//;

/** `report --cost <args>` with `cache` as the user's cache: its output, and whether it loaded the library. */
function reportCost(cache: string, ...args: string[]) {
  const child = spawnSync(process.execPath, [MAIN, "report", "--cost", "--runs", runs, ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, XDG_CACHE_HOME: cache, NODE_DEBUG: "module", PAYLOAD_PROBE_PRICING: "" },
  });
  expect(child.status, child.stderr.slice(-2000)).toBe(0);
  return { out: child.stdout, loaded: LIBRARY_LOADED.test(child.stderr) };
}

let caches = 0;
const freshCache = () => join(base, `cache-${++caches}`);

/** p1 is priced as gpt-4.1 (its `model.priceAs`), through OpenAI's list: where the CLI keeps that fact. */
function p1FactPath(cache: string, table: { version: string; date: string } = PRICE_TABLE): string {
  const ids = JSON.parse(readFileSync(join(PROJECT_ROOT, "dist/build-id.json"), "utf8"));
  const saved = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cache;
  try {
    return priceFactPath(ids["dist/cli/main.js"].build, table, "gpt-4.1", "openai");
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  }
}

interface Fact {
  price: { model: string };
  dollars: Record<string, number>;
}
const readFact = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Fact;
/** The same fact with every dollar figure set to one dollar: printed, it can only have come from the fact. */
const oneDollarEach = (fact: Fact): Fact => ({
  ...fact,
  dollars: Object.fromEntries(Object.keys(fact.dollars).map((key) => [key, 1])),
});
const predictedTotal = (json: string) => (JSON.parse(json) as { total: { predicted: number } }).total.predicted;

describe("a model priced once is priced again from its fact", () => {
  it("prints the same figures, text and JSON, without loading the library the second time", () => {
    const cache = freshCache();
    const first = reportCost(cache, "p1");
    expect(first.loaded).toBe(true);
    const fact = readFact(p1FactPath(cache));
    expect(fact.price.model).toBe("gpt-4.1");
    // p1's four requests, each its own split.
    expect(Object.keys(fact.dollars)).toHaveLength(4);

    const second = reportCost(cache, "p1");
    expect(second.loaded).toBe(false);
    expect(second.out).toBe(first.out);

    const withoutFact = reportCost(freshCache(), "p1", "--json");
    const withFact = reportCost(cache, "p1", "--json");
    expect(withoutFact.loaded).toBe(true);
    expect(withFact.loaded).toBe(false);
    expect(withFact.out).toBe(withoutFact.out);
  });

  it("prices a split the fact lacks with the library, and keeps it beside the others", () => {
    const cache = freshCache();
    reportCost(cache, "p1");
    const p1Figures = Object.keys(readFact(p1FactPath(cache)).dollars);
    // Another run priced as the same model through the same list: the same fact, other splits.
    const other = ["seq-namespace", "--model", "gpt-4.1"];
    const withFact = reportCost(cache, ...other);
    expect(withFact.loaded).toBe(true);
    expect(withFact.out).toBe(reportCost(freshCache(), ...other).out);
    const figures = Object.keys(readFact(p1FactPath(cache)).dollars);
    expect(figures.length).toBeGreaterThan(p1Figures.length);
    expect(figures).toEqual(expect.arrayContaining(p1Figures));
    expect(reportCost(cache, ...other)).toEqual({ ...withFact, loaded: false });
  });

  it("run p1 prints the same cost line from the fact, without loading the library", () => {
    const cache = freshCache();
    const runP1 = () => {
      const child = spawnSync(process.execPath, [MAIN, "run", "p1", "--runs", join(cache, "runs"), "--no-db"], {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
        timeout: 120_000,
        env: {
          ...process.env,
          XDG_CACHE_HOME: cache,
          NODE_DEBUG: "module",
          // The machine's token facts, so these runs need no tokenizer.
          PAYLOAD_PROBE_TOKEN_CACHE: defaultTokenCachePath() ?? "off",
          PAYLOAD_PROBE_WORKSPACE: join(cache, "ws"),
        },
      });
      expect(child.status, child.stderr.slice(-2000)).toBe(0);
      const costLine = child.stdout.split("\n").find((line) => line.startsWith("cost: "));
      return { costLine, loaded: LIBRARY_LOADED.test(child.stderr) };
    };
    const first = runP1();
    expect(first).toMatchObject({ loaded: true, costLine: expect.stringContaining("as gpt-4.1") });
    expect(runP1()).toEqual({ ...first, loaded: false });
  });

  it("uses what the fact says, and a pricing file bypasses it", () => {
    const cache = freshCache();
    const real = predictedTotal(reportCost(cache, "p1", "--json").out);
    const path = p1FactPath(cache);
    writeFileSync(path, JSON.stringify(oneDollarEach(readFact(path))));
    expect(predictedTotal(reportCost(cache, "p1", "--json").out)).toBe(4);

    const file = join(base, "other-model.yaml");
    writeFileSync(
      file,
      "version: 1\nmodels:\n  other-model: { provider: openai, input: 1, cachedInput: 0.5, output: 2 }\n",
    );
    const bypassed = reportCost(cache, "p1", "--json", "--pricing", file);
    expect(bypassed.loaded).toBe(true);
    expect(predictedTotal(bypassed.out)).toBe(real);
  });

  it("never reads the fact of another library version or data date, nor one that is not a fact", () => {
    const cache = freshCache();
    const first = reportCost(cache, "p1");
    const path = p1FactPath(cache);
    const altered = JSON.stringify(oneDollarEach(readFact(path)));
    for (const table of [
      { ...PRICE_TABLE, version: "0.1.7" },
      { ...PRICE_TABLE, date: "2026-01-01" },
    ]) {
      const other = p1FactPath(cache, table);
      expect(other).not.toBe(path);
      mkdirSync(dirname(other), { recursive: true });
      writeFileSync(other, altered);
    }
    renameSync(path, `${path}.away`);
    const again = reportCost(cache, "p1");
    expect(again.loaded).toBe(true);
    expect(again.out).toBe(first.out);
    expect(existsSync(path)).toBe(true);

    writeFileSync(path, '{"price": {"model": "gpt-4.1"}, "dollars": {"1282,0,0,0,0": "one"}}');
    const notAFact = reportCost(cache, "p1");
    expect(notAFact.loaded).toBe(true);
    expect(notAFact.out).toBe(first.out);
    // Written afresh: the library's figures, as the fact of the first report held them.
    expect(readFact(path)).toEqual(readFact(`${path}.away`));
  });
});
