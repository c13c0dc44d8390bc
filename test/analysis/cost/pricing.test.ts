/**
 * Prices from @pydantic/genai-prices: the figures below are the library's own (its 0.1.8 data,
 * dollars per million tokens), and each request is billed as a hand sum of tokens × those figures.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CacheSplit } from "../../../src/analysis/cost/cache-model.js";
import { dollars, moneyJson, roundDollars } from "../../../src/analysis/cost/money.js";
import {
  loadPricing,
  nearestPriced,
  PRICE_TABLE,
  priceOf,
  requestDollars,
} from "../../../src/analysis/cost/pricing.js";
import { UserError } from "../../../src/errors.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-pricing-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function userFile(name: string, text: string): string {
  const file = join(scratch, name);
  writeFileSync(file, text);
  return file;
}

/** [hint, id asked, the table's id, input, cache read, 5m write, 1h write, output]; null: no such price. */
type Row = [
  "anthropic" | "openai" | undefined,
  string,
  string,
  number,
  number | null,
  number | null,
  number | null,
  number,
];
const LIBRARY: Row[] = [
  ["anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 3, 0.3, 3.75, 6, 15],
  ["anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-0", 3, 0.3, 3.75, 6, 15],
  ["anthropic", "claude-opus-4-1", "claude-opus-4-1", 15, 1.5, 18.75, 30, 75],
  ["anthropic", "claude-opus-4-5-20251101", "claude-opus-4-5", 5, 0.5, 6.25, 10, 25],
  ["anthropic", "claude-haiku-4-5", "claude-haiku-4-5", 1, 0.1, 1.25, 2, 5],
  ["anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku-latest", 0.8, 0.08, 1, 1.6, 4],
  ["anthropic", "claude-3-7-sonnet-latest", "claude-3-7-sonnet-latest", 3, 0.3, 3.75, 6, 15],
  ["anthropic", "claude-3-haiku", "claude-3-haiku", 0.25, 0.03, 0.3, 0.5, 1.25],
  ["openai", "gpt-4.1", "gpt-4.1", 2, 0.5, null, null, 8],
  ["openai", "gpt-4.1-mini", "gpt-4.1-mini", 0.4, 0.1, null, null, 1.6],
  ["openai", "gpt-4.1-nano", "gpt-4.1-nano", 0.1, 0.025, null, null, 0.4],
  ["openai", "gpt-4o", "gpt-4o", 2.5, 1.25, null, null, 10],
  ["openai", "gpt-4o-mini", "gpt-4o-mini", 0.15, 0.075, null, null, 0.6],
  ["openai", "gpt-5", "gpt-5", 1.25, 0.125, null, null, 10],
  ["openai", "gpt-5-mini", "gpt-5-mini", 0.25, 0.025, null, null, 2],
  ["openai", "o4-mini", "o4-mini", 1.1, 0.275, null, null, 4.4],
  // Other providers, reached through an OpenAI-shaped API: found by their names, not the hint.
  ["openai", "gemini-2.5-pro", "gemini-2.5-pro", 1.25, 0.125, null, null, 10],
  ["openai", "gemini-2.5-flash", "gemini-2.5-flash", 0.3, 0.03, null, null, 2.5],
  [undefined, "mistral-large-latest", "mistral-large", 2, null, null, null, 6],
  ["openai", "grok-4", "grok-4-0709", 3, 0.75, null, null, 15],
  [undefined, "kimi-k2", "kimi-k2", 0.57, null, null, null, 2.3],
  // A router's provider/ prefix names the provider.
  ["openai", "anthropic/claude-haiku-4-5", "claude-haiku-4-5", 1, 0.1, 1.25, 2, 5],
];

/** 10,000 prompt tokens: 4,000 in full, 3,000 read, 2,000 written for 5 minutes, 1,000 for an hour. */
const SPLIT: CacheSplit = {
  inputTokens: 10_000,
  uncached: 4_000,
  cacheRead: 3_000,
  cacheWrite5m: 2_000,
  cacheWrite1h: 1_000,
};
const AT = new Date("2026-10-01T12:00:00Z");

describe("prices from @pydantic/genai-prices", () => {
  it("PRICE_TABLE names the installed release (an upgrade must give its date too)", () => {
    const installed = JSON.parse(
      readFileSync(join(PROJECT_ROOT, "node_modules/@pydantic/genai-prices/package.json"), "utf8"),
    ) as { version: string };
    expect(PRICE_TABLE.version).toBe(installed.version);
    const pinned = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(pinned.dependencies["@pydantic/genai-prices"]).toBe(PRICE_TABLE.version);
  });

  it.each(LIBRARY)(
    "%s %s: the library's figures, billed by hand (reads, 5m and 1h writes, output)",
    (hint, id, model, input, read, w5m, w1h, output) => {
      const table = loadPricing(undefined);
      const price = priceOf(table, id, hint)!;
      expect(price).not.toBeNull();
      expect(price.model).toBe(model);
      const readRate = read ?? input;
      const w5mRate = w5m ?? input;
      const w1hRate = w1h ?? w5mRate;
      expect([price.input, price.cachedInput, price.cacheWrite5m, price.cacheWrite1h, price.output]).toEqual([
        input,
        readRate,
        w5mRate,
        w1hRate,
        output,
      ]);
      const byHand = (4_000 * input + 3_000 * readRate + 2_000 * w5mRate + 1_000 * w1hRate + 500 * output) / 1e6;
      expect(requestDollars(price, SPLIT, 500, AT)).toBeCloseTo(byHand, 12);
    },
  );

  it("claude-sonnet-4-5 above 200,000 prompt tokens: the library's long-context tier for every token", () => {
    const price = priceOf(loadPricing(undefined), "claude-sonnet-4-5", "anthropic")!;
    const split = { inputTokens: 250_000, uncached: 250_000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };
    // $6 input and $22.50 output per million past the tier: 1.5 + 0.0225.
    expect(requestDollars(price, split, 1_000, AT)).toBeCloseTo(1.5225, 12);
  });

  it("a Bedrock model id (issue 42) is priced at Bedrock's own prices, the library's aws provider", () => {
    const table = loadPricing(undefined);
    for (const id of ["anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"])
      expect(priceOf(table, id, "anthropic"), id).toMatchObject({ provider: "aws" });
    // Its Anthropic id is still Anthropic's.
    expect(priceOf(table, "claude-sonnet-4-5-20250929", "anthropic")).toMatchObject({ provider: "anthropic" });
  });

  it("a Vertex AI id of Claude (`claude-sonnet-4-5@20250929`) is priced as the model it names", () => {
    const table = loadPricing(undefined);
    const vertex = priceOf(table, "claude-sonnet-4-5@20250929", "anthropic")!;
    const anthropic = priceOf(table, "claude-sonnet-4-5", "anthropic")!;
    expect([vertex.model, vertex.input, vertex.output]).toEqual([anthropic.model, anthropic.input, anthropic.output]);
  });

  it("never a guessed price: an unknown id has none, and says which priced names are nearest", () => {
    const table = loadPricing(undefined);
    expect(priceOf(table, "token-plan/qwen3.8-flash", "openai")).toBeNull();
    expect(priceOf(table, "claude-sonet-4-5", "anthropic")).toBeNull();
    expect(nearestPriced(table, "claude-sonet-4-5")[0]).toBe("claude-sonnet-4-5");
    expect(nearestPriced(table, "gpt-4.2-mini")).toContain("gpt-4.1-mini");
    // A far name is no hint: nothing within half the id's length.
    expect(nearestPriced(table, "qwen9")).toEqual([]);
  });

  it("a user file adds a model and replaces one whole; the library prices the rest", () => {
    const file = userFile(
      "mine.yaml",
      `version: 1
models:
  qwen3.8-flash: { provider: openai, input: 0.1, cachedInput: 0.01, output: 0.4 }
  gpt-4.1: { provider: openai, input: 1, cachedInput: 0.25, output: 4 }
  claude-mine: { provider: anthropic, input: 1, cachedInput: 0.1, cacheWrite5m: 1.25, cacheWrite1h: 2, output: 5, minCacheTokens: 512 }
`,
    );
    const table = loadPricing(file);
    expect(table.source.files).toEqual([file]);
    expect(priceOf(table, "token-plan/qwen3.8-flash")).toMatchObject({
      model: "qwen3.8-flash",
      input: 0.1,
      provider: file,
    });
    const gpt = priceOf(table, "gpt-4.1", "openai")!;
    expect(gpt).toMatchObject({ input: 1, cachedInput: 0.25, output: 4 });
    // 4,000 + 2,000 + 1,000 written tokens at $1 (no write price), 3,000 read at $0.25, 500 out at $4.
    expect(requestDollars(gpt, SPLIT, 500)).toBeCloseTo((7_000 * 1 + 3_000 * 0.25 + 500 * 4) / 1e6, 12);
    expect(priceOf(table, "claude-mine-20260101")?.minCacheTokens).toBe(512);
    expect(priceOf(table, "claude-sonnet-4-5", "anthropic")?.input).toBe(3);
  });

  it("a bad user file is input the command cannot use: the file and the field are named", () => {
    const negative = userFile(
      "neg.yaml",
      "version: 1\nmodels:\n  m: { provider: openai, input: -1, cachedInput: 0, output: 1 }\n",
    );
    expect(() => loadPricing(negative)).toThrow(UserError);
    expect(() => loadPricing(negative)).toThrow(`${negative}: field "models.m.input"`);
    const noWrites = userFile(
      "nowrite.yaml",
      "version: 1\nmodels:\n  c: { provider: anthropic, input: 1, cachedInput: 0.1, output: 5 }\n",
    );
    expect(() => loadPricing(noWrites)).toThrow("expected cacheWrite5m and cacheWrite1h for an anthropic model");
    expect(() => loadPricing(join(scratch, "absent.yaml"))).toThrow("no such pricing file");
  });
});

describe("money reads as money: one rule", () => {
  it("four significant digits under a cent, whole cents from a cent up, the sign kept, never an exponent", () => {
    expect([0.0031, 0.00108, 0.0063599999, 0.0099996, 0.0123, 12.345, -0.0045, 0, 3.36e-8].map(dollars)).toEqual([
      "$0.0031",
      "$0.00108",
      "$0.00636",
      "$0.01",
      "$0.01",
      "$12.35",
      "-$0.0045",
      "$0",
      "$0.0000000336",
    ]);
  });

  it("JSON carries the same rounded numbers, under the fields that hold dollars only", () => {
    const json = JSON.parse(
      JSON.stringify(
        { predictedCost: 0.0063599999, total: { predicted: 12.345 }, inputTokens: 1234, dollars: 0.01234 },
        moneyJson,
      ),
    );
    expect(json).toEqual({ predictedCost: 0.00636, total: { predicted: 12.35 }, inputTokens: 1234, dollars: 0.01 });
    expect(roundDollars(0.0063599999)).toBe(0.00636);
  });
});
