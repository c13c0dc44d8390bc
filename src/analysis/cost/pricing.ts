/**
 * The pricing table: what a model's tokens cost, as its provider bills them.
 *
 * Prices come from `@pydantic/genai-prices`, a maintained table of most providers' models with
 * cache-read, cache-write and 1-hour cache-write prices. Its data is the copy bundled with the
 * pinned release: the library's remote update is never switched on, so the same run gives the same
 * dollars on every machine, and each priced figure names the table's release and date. A user file
 * (`--pricing FILE`, or `PAYLOAD_PROBE_PRICING`) adds models or replaces them whole. A model found
 * in neither is never priced: callers get null and say "price unknown", so no figure is guessed.
 *
 * What the provider's cache reads and writes is ours to predict (cache-model.ts): the library only
 * turns a split of tokens into dollars.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type * as GenaiPrices from "@pydantic/genai-prices";
import type { ModelInfo, Provider } from "@pydantic/genai-prices";
import { z } from "zod";
import { inputError } from "../../errors.js";
import { readYamlFile } from "../../files/yaml-file.js";
import { nearestNames } from "../../text/nearest.js";
import { parseInput, strictMapping } from "../../validate.js";
import type { CacheSplit } from "./cache-model.js";
import { priceWithFact, recalledDollars, rememberDollars } from "./price-fact.js";

/**
 * The release of the table, pinned exactly in package.json, and the day it was published (npm's
 * `time` for that version): its data is the providers' prices as of that day. A test holds the
 * version to the installed package, so an upgrade cannot keep the old date.
 */
export const PRICE_TABLE = { library: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" } as const;

/** The table's own name in one line: `@pydantic/genai-prices 0.1.8 (2026-09-23)`. */
export const PRICE_TABLE_NAME = `${PRICE_TABLE.library} ${PRICE_TABLE.version} (${PRICE_TABLE.date})`;

/** Where a priced figure's prices came from: stored beside it in every JSON output. */
export interface PriceSource {
  table: string;
  /** User files that add or override models, in the order they apply. */
  files: string[];
}

/** One model's prices, as found for an id. Dollars per million tokens at its first tier. */
export interface ModelPrice {
  /** The table's id for the model (`claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`). */
  model: string;
  /** The table's provider id, or the user file that gave the price. */
  provider: string;
  input: number;
  cachedInput: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
  /** From a user file only: the shortest prefix an Anthropic breakpoint caches (else cache-model.ts knows it). */
  minCacheTokens?: number;
  /** The library's entry and the id it matched, to bill with (tiers, dated prices, per-request fees). */
  readonly entry: { provider: Provider; id: string };
}

export interface PricingTable {
  source: PriceSource;
  /** The user files' models as one provider of the library's kind; null without a file. */
  user: Provider | null;
  /** A user file's minimum cacheable prefix, by model id. */
  userMinimums: Map<string, number>;
}

export const PRICING_ENV = "PAYLOAD_PROBE_PRICING";

type Library = typeof GenaiPrices;
let library: Library | undefined;
/**
 * The library holds half a megabyte of price data, so it is loaded on the first price asked for,
 * never by a command that prints no money. Required through createRequire, which esbuild leaves as
 * it is: the package stays out of the CLI bundle and loads from node_modules.
 */
function genaiPrices(): Library {
  library ??= createRequire(import.meta.url)("@pydantic/genai-prices") as Library;
  return library;
}

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

/** The library's table, with the user's file on top, model by model, when one is named. */
export function loadPricing(userFile: string | undefined = process.env[PRICING_ENV] || undefined): PricingTable {
  const table: PricingTable = {
    source: { table: PRICE_TABLE_NAME, files: [] },
    user: null,
    userMinimums: new Map(),
  };
  if (!userFile) return table;
  const models = readPricingFile(userFile);
  table.user = { id: "file", name: userFile, api_pattern: "$^", models: models.map((m) => m.info) };
  for (const m of models) if (m.minCacheTokens !== undefined) table.userMinimums.set(m.info.id, m.minCacheTokens);
  table.source.files.push(userFile);
  return table;
}

function readPricingFile(file: string): { info: ModelInfo; minCacheTokens?: number }[] {
  if (!existsSync(file)) throw inputError(file, undefined, "no such pricing file");
  const doc = readYamlFile(file, "pricing file");
  const parsed = parseInput(fileSchema, doc, file);
  return Object.entries(parsed.models).map(([model, p]) => {
    if (p.provider === "anthropic" && (p.cacheWrite5m === undefined || p.cacheWrite1h === undefined))
      throw inputError(file, `models.${model}`, "expected cacheWrite5m and cacheWrite1h for an anthropic model");
    const prices = {
      input_mtok: p.input,
      cache_read_mtok: p.cachedInput,
      output_mtok: p.output,
      ...(p.cacheWrite5m === undefined ? {} : { cache_write_mtok: p.cacheWrite5m }),
      ...(p.cacheWrite1h === undefined ? {} : { cache_write_1h_mtok: p.cacheWrite1h }),
    };
    return { info: { id: model, match: { equals: model }, prices }, minCacheTokens: p.minCacheTokens };
  });
}

/** Which provider's list to look in first, by wire API: a Messages request is most likely Claude. */
export type ProviderHint = "anthropic" | "openai" | "google";

/**
 * A request's model id priced by the table. The user's file wins, by the id exactly or without a
 * date suffix (`-20250514`) or `-latest`. Then the library, in the hinted provider's list first,
 * then in any provider's whose names the id matches; an id behind a router's `provider/` prefix is
 * tried with that provider, then bare. The library's own matching decides the rest (dated ids,
 * aliases): it never prices `claude-opus-4-5` as `claude-opus-4`.
 */
export function priceOf(table: PricingTable, modelId: string, hint?: ProviderHint): ModelPrice | null {
  const slash = modelId.lastIndexOf("/");
  const bare = slash >= 0 ? modelId.slice(slash + 1) : modelId;
  const user = table.user ? userPrice(table, bare) : null;
  if (user) return user;
  // A user's file may price the id differently from one run to the next: only the table's own
  // answers are kept as facts (price-fact.ts), which spare a later run loading the library.
  const fromLibrary = () => libraryPriceOf(modelId, slash, bare, hint);
  return table.user ? fromLibrary() : priceWithFact(PRICE_TABLE, modelId, hint, fromLibrary);
}

/**
 * A model id of Amazon Bedrock (`anthropic.claude-sonnet-4-5-20250929-v1:0`, behind an inference
 * profile's region `us.` or `global.`): the model's publisher, a dot, the model. Bedrock bills its
 * own prices (the library's `aws` provider), not the publisher's.
 */
const BEDROCK_ID = /^(?:[a-z-]+\.)?(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer)\.[^/]+$/;

function libraryPriceOf(modelId: string, slash: number, bare: string, hint?: ProviderHint): ModelPrice | null {
  const router = slash >= 0 ? modelId.slice(0, slash) : undefined;
  const tries: [string, string | undefined][] = [
    ...(BEDROCK_ID.test(modelId) ? ([[modelId, "aws"]] as [string, string][]) : []),
    [modelId, hint],
    ...(router ? ([[bare, router]] as [string, string][]) : []),
    [bare, hint],
    [bare, undefined],
  ];
  for (const [id, providerId] of tries) {
    const found = libraryPrice(id, providerId);
    if (found) return found;
  }
  return null;
}

function userPrice(table: PricingTable, id: string): ModelPrice | null {
  const models = table.user!.models;
  const base = /^(.*?)(?:-\d{8}|-latest)$/.exec(id)?.[1];
  const info = models.find((m) => m.id === id) ?? models.find((m) => m.id === base);
  if (!info) return null;
  return priceFrom({ provider: table.user!, id: info.id }, info, table.user!.name, table.userMinimums.get(info.id));
}

function libraryPrice(id: string, providerId: string | undefined): ModelPrice | null {
  const result = genaiPrices().calcPrice({ input_tokens: 0 }, id, providerId ? { providerId } : {});
  if (!result) return null;
  return priceFrom({ provider: result.provider, id }, result.model, result.provider.id);
}

function priceFrom(entry: ModelPrice["entry"], info: ModelInfo, provider: string, minCacheTokens?: number): ModelPrice {
  const prices = Array.isArray(info.prices) ? info.prices.at(-1)!.prices : info.prices;
  const base = (key: string) => {
    const value = prices[key];
    return typeof value === "number" ? value : (value?.base ?? undefined);
  };
  const input = base("input_mtok") ?? 0;
  const cacheWrite5m = base("cache_write_5m_mtok") ?? base("cache_write_mtok") ?? input;
  return {
    model: info.id,
    provider,
    input,
    cachedInput: base("cache_read_mtok") ?? input,
    cacheWrite5m,
    cacheWrite1h: base("cache_write_1h_mtok") ?? cacheWrite5m,
    output: base("output_mtok") ?? 0,
    ...(minCacheTokens === undefined ? {} : { minCacheTokens }),
    entry,
  };
}

/**
 * Dollars of one request: its prompt split as the cache model (or the provider) says, and its
 * output tokens, billed by the library with the model's tiers and dated prices at `at` (the
 * request's own time, so a run prices the same whenever it is read).
 */
export function requestDollars(price: ModelPrice, split: CacheSplit, outputTokens = 0, at?: Date): number {
  const known = recalledDollars(price, split, outputTokens);
  if (known !== undefined) return known;
  const usage = {
    input_tokens: split.inputTokens,
    cache_read_tokens: split.cacheRead,
    cache_write_tokens: split.cacheWrite5m + split.cacheWrite1h,
    cache_write_5m_tokens: split.cacheWrite5m,
    cache_write_1h_tokens: split.cacheWrite1h,
    output_tokens: outputTokens,
  };
  const options = { provider: price.entry.provider, ...(at && !Number.isNaN(at.getTime()) ? { timestamp: at } : {}) };
  const dollars = genaiPrices().calcPrice(usage, price.entry.id, options)?.total_price ?? 0;
  rememberDollars(price, split, outputTokens, dollars);
  return dollars;
}

/** Providers whose own model names a typo is likeliest to be near. */
const NEAR_PROVIDERS = ["anthropic", "openai", "google", "deepseek", "mistral", "x-ai", "moonshotai", "zai", "minimax"];

/** The priced names nearest to an unknown id, for "price unknown for X (nearest: …)". */
export function nearestPriced(table: PricingTable, modelId: string, count = 3): string[] {
  const lib = genaiPrices();
  const known = [
    ...(table.user?.models ?? []),
    ...NEAR_PROVIDERS.flatMap((id) => lib.findProvider({ providerId: id })?.models ?? []),
  ].map((m) => m.id);
  const bare = modelId.slice(modelId.lastIndexOf("/") + 1);
  return nearestNames(bare, [...new Set(known)], count);
}
