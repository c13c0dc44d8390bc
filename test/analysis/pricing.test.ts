import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_PRICING_FILE, dollars, loadPricing, priceOf } from "../../src/analysis/pricing.js";
import { UserError } from "../../src/errors.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-pricing-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function userFile(name: string, text: string): string {
  const file = join(scratch, name);
  writeFileSync(file, text);
  return file;
}

describe("the pricing table", () => {
  it("the repository file loads; an id matches exactly, with a date, with -latest or behind a provider/ prefix", () => {
    const table = loadPricing(undefined);
    expect(table.sources).toEqual([DEFAULT_PRICING_FILE]);
    expect(priceOf(table, "claude-sonnet-4-20250514")?.model).toBe("claude-sonnet-4");
    expect(priceOf(table, "anthropic/claude-3-5-haiku-latest")?.model).toBe("claude-3-5-haiku");
    expect(priceOf(table, "gpt-4.1-mini")?.model).toBe("gpt-4.1-mini");
  });

  it("never a guessed price: a model that is not listed, or only shares a prefix with one, has none", () => {
    const table = loadPricing(undefined);
    expect(priceOf(table, "token-plan/qwen3.8-flash")).toBeNull();
    // Opus 4.5 is a different model at a different price from Opus 4.
    expect(priceOf(table, "claude-opus-4-5-20251101")).toBeNull();
  });

  it("a user file adds a model and replaces one whole", () => {
    const file = userFile(
      "mine.yaml",
      `version: 1
models:
  qwen3.8-flash: { provider: openai, input: 0.1, cachedInput: 0.01, output: 0.4 }
  gpt-4.1: { provider: openai, input: 1, cachedInput: 0.25, output: 4 }
`,
    );
    const table = loadPricing(file);
    expect(table.sources).toEqual([DEFAULT_PRICING_FILE, file]);
    expect(priceOf(table, "token-plan/qwen3.8-flash")).toMatchObject({ input: 0.1, confirmed: true });
    expect(priceOf(table, "gpt-4.1")).toMatchObject({ input: 1, cachedInput: 0.25, output: 4, confirmed: true });
    expect(priceOf(table, "claude-sonnet-4")?.input).toBe(3);
  });

  it("a bad user file is input the command cannot use: the file and the field are named", () => {
    const negative = userFile(
      "neg.yaml",
      "version: 1\nmodels:\n  m: { provider: openai, input: -1, cachedInput: 0, output: 1 }\n",
    );
    expect(() => loadPricing(negative)).toThrow(UserError);
    expect(() => loadPricing(negative)).toThrow(`${negative}: field "models.m.input"`);
    const noMinimum = userFile(
      "nomin.yaml",
      "version: 1\nmodels:\n  c: { provider: anthropic, input: 1, cachedInput: 0.1, cacheWrite5m: 1.25, cacheWrite1h: 2, output: 5 }\n",
    );
    expect(() => loadPricing(noMinimum)).toThrow(`field "models.c.minCacheTokens"`);
    expect(() => loadPricing(join(scratch, "absent.yaml"))).toThrow("no such pricing file");
  });

  it("dollars print four significant digits below a dollar, cents above, and keep the sign", () => {
    expect([dollars(0.0031), dollars(0.00108), dollars(12.345), dollars(-0.0045), dollars(0)]).toEqual([
      "$0.0031",
      "$0.00108",
      "$12.35",
      "-$0.0045",
      "$0",
    ]);
  });
});
