/**
 * Price facts: what the pricing table answered for one model id, kept in the user's cache, so a
 * later run prices that model without loading `@pydantic/genai-prices` (compiling its half megabyte
 * of price data was about 0.1 s of `run p1`).
 *
 * A fact holds the model the id was priced as (its id, provider and prices per million tokens) and
 * the dollars the library gave for each token split it priced. Both depend on nothing but the id, the
 * provider hint, the library's release and data date, and this build's pricing code, which together
 * name the fact. A fact is only ever replayed, never worked from: a figure read from it is the
 * library's own figure, to the last bit. A split not priced before loads the library, and its dollars
 * join the fact when the process ends. Only a model whose prices carry no dates gets a fact (a dated
 * price also depends on the request's time), and a user's pricing file bypasses facts (pricing.ts).
 * Only from the bundle, as the probe memos (files/build-memo.ts).
 */
import { readFileSync } from "node:fs";
import type { Provider } from "@pydantic/genai-prices";
import { bundleBuildIds, memoKey, memoPath, storeMemo } from "../../files/build-memo.js";
import { PROJECT_ROOT } from "../../project-root.js";
import type { CacheSplit } from "./cache-model.js";

/** Raised when the key or the stored form changes. */
const FACT_FORMAT = 1;
/** Dollar figures one fact keeps, the newest first: a long run's splits do not grow it without end. */
const MAX_FIGURES = 512;

/** The table's release, as pricing.ts names it: another version or data date is another fact. */
export interface PriceTableRelease {
  version: string;
  date: string;
}

/**
 * pricing.ts's ModelPrice as this module sees it (pricing.ts imports this module, so it is not
 * imported back): the table's model id, the provider and the prices, which a fact keeps as they are,
 * and the library's entry, which it never keeps.
 */
interface ModelPrice {
  model: string;
  provider: string;
  minCacheTokens?: number;
  readonly entry: { provider: Provider; id: string };
}

type FactPrice = Omit<ModelPrice, "entry" | "minCacheTokens">;

/** The stored form: JSON, whose numbers read back as the same doubles. */
interface StoredFact {
  price: FactPrice;
  /** Dollars by split (`splitKey`). */
  dollars: Record<string, number>;
}

interface OpenFact {
  path: string;
  stored: StoredFact;
  /** Figures this process priced with the library, to join the fact at exit. */
  fresh: Map<string, number>;
}

const factOf = new WeakMap<ModelPrice, OpenFact>();
const unsaved = new Set<OpenFact>();

/** Where the fact of `modelId` (asked with `hint`) is kept for `build` and the table's release. */
export function priceFactPath(
  build: string,
  table: PriceTableRelease,
  modelId: string,
  hint: string | undefined,
): string {
  const made = [FACT_FORMAT, table.version, table.date, hint ?? "", modelId].join("\0");
  return memoPath("price-fact", memoKey(build, made), "json");
}

/**
 * `modelId`'s price from its fact; without one, from `library`, and a fact is started for it. Run
 * from outside the bundle, always from `library`.
 */
export function priceWithFact<Price extends ModelPrice>(
  table: PriceTableRelease,
  modelId: string,
  hint: string | undefined,
  library: () => Price | null,
): Price | null {
  const build = bundleBuildIds(PROJECT_ROOT)?.["dist/cli/main.js"]?.build;
  if (!build) return library();
  const path = priceFactPath(build, table, modelId, hint);
  const stored = readFact(path);
  if (stored) {
    const price = recalledPrice(stored.price, modelId, library);
    factOf.set(price, { path, stored, fresh: new Map() });
    return price;
  }
  const price = library();
  if (price && undated(price)) {
    const { entry: _entry, minCacheTokens: _min, ...fields } = price;
    const fact = { path, stored: { price: fields, dollars: {} }, fresh: new Map() };
    factOf.set(price, fact);
    saveAtExit(fact);
  }
  return price;
}

/** The dollars the library gave for this split of `price`'s model before, if its fact has them. */
export function recalledDollars(price: ModelPrice, split: CacheSplit, outputTokens: number): number | undefined {
  const fact = factOf.get(price);
  if (!fact) return undefined;
  const key = splitKey(split, outputTokens);
  return fact.fresh.get(key) ?? (Object.hasOwn(fact.stored.dollars, key) ? fact.stored.dollars[key] : undefined);
}

/** Keeps the library's dollars for this split in `price`'s fact (when it has one). */
export function rememberDollars(price: ModelPrice, split: CacheSplit, outputTokens: number, dollars: number): void {
  const fact = factOf.get(price);
  if (!fact || fact.fresh.size >= MAX_FIGURES) return;
  fact.fresh.set(splitKey(split, outputTokens), dollars);
  saveAtExit(fact);
}

/** Every token count the library's usage is made of (`requestDollars`); the uncached share follows from them. */
const splitKey = (split: CacheSplit, outputTokens: number) =>
  [split.inputTokens, split.cacheRead, split.cacheWrite5m, split.cacheWrite1h, outputTokens].join(",");

/** Its library entry is found only when a split the fact lacks must be priced. */
function recalledPrice<Price extends ModelPrice>(
  fields: FactPrice,
  modelId: string,
  library: () => Price | null,
): Price {
  let entry: ModelPrice["entry"] | undefined;
  // The fields are the library's price as it was stored, all but its entry: a Price again.
  return {
    ...fields,
    get entry() {
      entry ??= library()?.entry;
      if (!entry) throw new Error(`the price fact of ${modelId} names a model the price table lacks`);
      return entry;
    },
  } as Price;
}

/** Prices that depend on nothing but the tokens: no start dates, no hours of the day. */
function undated(price: ModelPrice): boolean {
  const models = price.entry.provider.models.filter((m) => m.id === price.model);
  return models.length > 0 && models.every((m) => !Array.isArray(m.prices));
}

function readFact(path: string): StoredFact | null {
  try {
    const fact = JSON.parse(readFileSync(path, "utf8")) as StoredFact;
    // Its names are strings and every other figure a number, as a fact was written.
    const named = (key: string) => key === "model" || key === "provider";
    const price = Object.entries(fact.price).every(([key, v]) => typeof v === (named(key) ? "string" : "number"));
    const dollars = Object.values(fact.dollars).every((n) => typeof n === "number");
    return price && dollars && typeof fact.price.model === "string" ? fact : null;
  } catch {
    return null; // not there yet, or not a fact: the library answers, and the fact is written again
  }
}

/**
 * Pricing is asked row by row, by several commands: the facts it added to are written once, when
 * the process ends, so a long run's report does not rewrite a file for each of its requests.
 */
function saveAtExit(fact: OpenFact): void {
  if (unsaved.size === 0) process.once("exit", saveFacts);
  unsaved.add(fact);
}

function saveFacts(): void {
  for (const { path, stored, fresh } of unsaved) {
    const older = Object.entries(stored.dollars).filter(([key]) => !fresh.has(key));
    const dollars = Object.fromEntries([...fresh, ...older].slice(0, MAX_FIGURES));
    storeMemo(path, JSON.stringify({ price: stored.price, dollars }));
  }
  unsaved.clear();
}
