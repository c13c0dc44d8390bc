/**
 * The pricing table: what a model's tokens cost, per million, as its provider bills them.
 *
 * The table is data — `pricing/models.yaml`, dated and versioned, each figure with the page it was
 * read from — and a user file (`--pricing FILE`, or `PAYLOAD_PROBE_PRICING`) adds models or
 * replaces them whole. A model found in neither is never priced: callers get null and say "price
 * unknown", so no figure is ever guessed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { inputError } from "../errors.js";
import { readInputFile } from "../input-file.js";
import { PROJECT_ROOT } from "../project-root.js";
import { parseInput, strictMapping } from "../validate.js";
import type { CacheProvider, CacheSplit } from "./cache-model.js";

/** Dollars per million tokens. */
export interface ModelPrice {
  model: string;
  provider: CacheProvider;
  input: number;
  /** A token read from the provider's prompt cache. */
  cachedInput: number;
  /** Anthropic: a token written to a 5-minute / 1-hour cache entry. */
  cacheWrite5m?: number;
  cacheWrite1h?: number;
  output: number;
  /** Anthropic: the shortest prefix a breakpoint caches. */
  minCacheTokens?: number;
  /** False when a figure could not be read on the provider's own page (the file says which). */
  confirmed: boolean;
}

export interface PricingTable {
  /** Where the figures came from: the repository file, then the user's file when there is one. */
  sources: string[];
  models: Map<string, ModelPrice>;
}

export const DEFAULT_PRICING_FILE = join(PROJECT_ROOT, "pricing", "models.yaml");
export const PRICING_ENV = "PAYLOAD_PROBE_PRICING";

const price = (what: string) => z.number({ error: `expected ${what} in dollars per million tokens` }).min(0);

const modelSchema = strictMapping(
  {
    provider: z.enum(["openai", "anthropic"], { error: "expected openai or anthropic" }),
    input: price("the input price"),
    cachedInput: price("the cache read price"),
    cacheWrite5m: price("the 5-minute cache write price").optional(),
    cacheWrite1h: price("the 1-hour cache write price").optional(),
    output: price("the output price"),
    minCacheTokens: z.number({ error: "expected a token count" }).int().min(0).optional(),
    confirmed: z.boolean({ error: "expected true or false" }).optional(),
  },
  "expected a mapping of prices",
);

const fileSchema = strictMapping(
  {
    version: z.literal(1, { error: "expected 1" }),
    date: z.union([z.string(), z.date()], { error: "expected a date" }).optional(),
    models: z.record(z.string(), modelSchema, { error: "expected a mapping of model id → prices" }),
  },
  "expected a mapping with version and models",
);

/** The repository's table, overridden model by model by the user's file when one is named. */
export function loadPricing(userFile: string | undefined = process.env[PRICING_ENV] || undefined): PricingTable {
  const table: PricingTable = { sources: [], models: new Map() };
  for (const file of userFile ? [DEFAULT_PRICING_FILE, userFile] : [DEFAULT_PRICING_FILE]) {
    for (const entry of readPricingFile(file)) table.models.set(entry.model, entry);
    table.sources.push(file);
  }
  return table;
}

function readPricingFile(file: string): ModelPrice[] {
  if (!existsSync(file)) throw inputError(file, undefined, "no such pricing file");
  const text = readInputFile(file, "pricing file").toString("utf8");
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw inputError(file, undefined, `expected YAML (${(error as Error).message})`);
  }
  const parsed = parseInput(fileSchema, doc, file);
  return Object.entries(parsed.models).map(([model, p]) => {
    if (p.provider === "anthropic" && (p.cacheWrite5m === undefined || p.cacheWrite1h === undefined))
      throw inputError(file, `models.${model}`, "expected cacheWrite5m and cacheWrite1h for an anthropic model");
    if (p.provider === "anthropic" && p.minCacheTokens === undefined)
      throw inputError(
        file,
        `models.${model}.minCacheTokens`,
        "expected the minimum cacheable prefix of an anthropic model",
      );
    return { model, ...p, confirmed: p.confirmed ?? true };
  });
}

/**
 * A request's model id priced by the table: the id as sent, without a `provider/` prefix a router
 * adds, exactly or followed by a date (`-20250514`) or `-latest`. No looser match: `claude-opus-4`
 * must not price `claude-opus-4-5`, a different model at a different price.
 */
export function priceOf(table: PricingTable, modelId: string): ModelPrice | null {
  const id = modelId.includes("/") ? modelId.slice(modelId.lastIndexOf("/") + 1) : modelId;
  const exact = table.models.get(id);
  if (exact) return exact;
  const base = /^(.*?)(?:-\d{8}|-latest)$/.exec(id)?.[1];
  return (base !== undefined ? table.models.get(base) : undefined) ?? null;
}

const PER_MILLION = 1_000_000;

/** Dollars of a request's prompt, each kind of token at its price (only Anthropic models write, and they have write prices). */
export function inputCost(split: CacheSplit, price: ModelPrice): number {
  return (
    (split.uncached * price.input +
      split.cacheRead * price.cachedInput +
      split.cacheWrite5m * (price.cacheWrite5m ?? price.input) +
      split.cacheWrite1h * (price.cacheWrite1h ?? price.input)) /
    PER_MILLION
  );
}

export function outputCost(outputTokens: number, price: ModelPrice): number {
  return (outputTokens * price.output) / PER_MILLION;
}

/** `$0.0031`: four significant digits below a cent, cents above, so a per-request figure is never `$0.00`. */
export function dollars(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(amount);
  if (abs === 0) return "$0";
  return `${sign}$${
    abs >= 1
      ? abs.toFixed(2)
      : abs
          .toPrecision(4)
          .replace(/(\.\d*?)0+$/, "$1")
          .replace(/\.$/, "")
  }`;
}

export const PRICE_UNKNOWN = "price unknown";

/** Dollars, or "price unknown" for a model the table does not price. */
export function money(amount: number | null): string {
  return amount === null ? PRICE_UNKNOWN : dollars(amount);
}
