/**
 * A run in money: each request's prompt split into cache reads, cache writes and uncached tokens
 * by the cache model of its provider, priced from the pricing table, beside what the provider
 * reported (when a response carried usage) priced the same way.
 *
 * OpenAI rules need only the records (their `prefix.sharedTokens`). Anthropic rules also need where
 * each `cache_control` breakpoint sits in tokens, so the wire bodies are read for those requests
 * and counted with the capture's tokenizer, segment by segment, as the record's totals were.
 */

import { requestFailure } from "../../capture/request-failure.js";
import type { RecordSummary } from "../../capture/run-index.js";
import type { RequestRecord } from "../../capture/types.js";
import { breakpointCache, breakpointMinCacheTokens } from "../../providers/cache-rules.js";
import { codecFor } from "../../providers/codecs.js";
import type { Usage, WireApi } from "../../providers/types.js";
import { bodyElements } from "../body-elements.js";
import { sharedTokensOf } from "../format.js";
import { type LazyPayload, payloadCursor, type RunSource } from "../load-run.js";
import {
  type CacheInput,
  type CacheModel,
  type CacheProvider,
  type CacheSplit,
  cacheModel,
  geminiMinCacheTokens,
} from "./cache-model.js";
import { type PartBreakpoints, partBreakpoints } from "./part-breakpoints.js";
import {
  type ModelPrice,
  nearestPriced,
  type PriceSource,
  type PricingTable,
  type ProviderHint,
  priceOf,
  requestDollars,
} from "./pricing.js";

export interface CostOptions {
  pricing: PricingTable;
  /** Price every request as this model (a run made against a mock carries the mock's model id). */
  model?: string;
  /** The model a request is priced as when `model` is not given (a probe's `model.priceAs`); default its own. */
  priceAs?: (record: RecordSummary) => string | undefined;
}

export interface ReportedSplit extends CacheSplit {
  outputTokens: number | null;
  source: Usage["source"];
}

export interface RequestCost {
  seq: number;
  kind: RequestRecord["kind"];
  /** The request's time (the record's `ts`): dated prices are taken as of then. */
  ts: string;
  /** The model priced: `--model`, else its probe's `priceAs`, else the request's own. */
  model: string;
  /** The table's id of the model priced (null without a price). */
  pricedAs: string | null;
  /** The model the request itself named. */
  sent: string;
  /** null when the model has no price: tokens only, "price unknown". */
  price: ModelPrice | null;
  predicted: CacheSplit;
  /** Dollars of the predicted prompt (null without a price), and of the reported output when there is one. */
  predictedCost: number | null;
  reported: ReportedSplit | null;
  reportedCost: number | null;
  /** Why predicted and reported disagree (provider usage only); null when they agree or nothing was reported. */
  disagreement: string | null;
  /** Tokens shared with the request read from (`from`), and where this request's prefix broke against it. */
  sharedTokens: number | null;
  /** The seq of the request read from (the record's `prefix.from`; null: none, or a record from before it). */
  from: number | null;
  breakDetail: string | null;
  /** Tokens the request would have read from the cache had its prefix not broken, beyond what it read. */
  lostRead: number;
  /** At a prefix break: what it re-billed (null where nothing broke or nothing cached was lost). Always one request (see attributeRebills). */
  rebill: Rebill | null;
  /** Why the request failed (capture/request-failure.ts); null when it did not. A failed request is billed nothing and reads or writes no cache. */
  failure: string | null;
}

/** "this break re-billed `tokens` tokens × `requests` requests = `dollars`". */
export interface Rebill {
  tokens: number;
  requests: number;
  /** Extra dollars over reading those tokens from the cache; null without a price. */
  dollars: number | null;
}

export interface RunCost {
  /** The table and files every figure of the run was priced from. */
  prices: PriceSource;
  requests: RequestCost[];
  /** Models without a price, so a total leaves them out and says so, each with the nearest priced names. */
  unpriced: { model: string; nearest: string[] }[];
  /** Dollars of the priced requests (null when none has a price). */
  total: { predicted: number | null; reported: number | null; inputTokens: number; cacheRead: number };
  /** Requests the run relayed but never recorded (RunSource.lost): the total cannot include them. */
  lost: number;
}

export async function runCost(source: RunSource, options: CostOptions): Promise<RunCost> {
  const costing = new RunCosting(source, options);
  const requests: RequestCost[] = [];
  for (const record of source.summaries()) {
    let cost = costing.next(record);
    if (!cost) {
      await costing.loadCounter();
      cost = costing.next(record)!;
    }
    requests.push(cost);
  }
  attributeRebills(requests);
  return summarize(requests, source.lost?.() ?? 0, options.pricing);
}

/**
 * A run priced one record at a time, in the order of its summaries: for runCost, or on the way
 * through a pass that reads them for something else (report's rows, diff's pairs), so a long run is
 * read once, not once more for its cache rates.
 */
export class RunCosting {
  /** The price and the cache model of each provider and model priced, by `<provider> <model>`. */
  private readonly rules = new Map<string, { price: ModelPrice | null; model: CacheModel }>();
  private readonly payloads: { payloadOf(seq: number): LazyPayload | null };
  /** Counts where Anthropic breakpoints sit; loaded only for a run that has them (it costs a tokenizer). */
  private breakpoints: PartBreakpoints | null = null;
  /** Whether a pass through `observing` priced every record: read to its end, none needing the counter it lacked. */
  private observedAll = { complete: true, exhausted: false };

  constructor(
    source: RunSource,
    private readonly options: CostOptions,
  ) {
    this.payloads = payloadCursor(source);
  }

  /** The next record's cost; null, and nothing changed, when it needs `counter` and there is none. */
  next(record: RecordSummary): RequestCost | null {
    const { options, payloads } = this;
    const modelId = options.model ?? options.priceAs?.(record) ?? record.model;
    const provider = cacheProviderOf(record.api);
    const failure = requestFailure(record);
    if (failure !== null) return failedCost(record, modelId, this.rulesOf(provider, modelId).price, failure);
    let breakpoints: CacheInput["breakpoints"];
    if (provider === "anthropic") {
      const payload = payloads.payloadOf(record.seq);
      if (payload !== null) {
        if (!this.breakpoints) return null;
        // The body as stored, never joined: each distinct part of the run is read once.
        breakpoints = this.breakpoints.of(payload.stored().body, () => payload.load().body, record.api as WireApi);
      }
    }
    const { price, model } = this.rulesOf(provider, modelId);
    const explicitCache = provider === "gemini" && namesExplicitCache(payloads.payloadOf(record.seq));
    const input = { ...cacheInputOf(record, breakpoints), ...(explicitCache && { explicitCache }) };
    const cost = requestCost(record, modelId, price, model.next(input));
    // Only a break loses cached tokens; elsewhere the two reads differ by the reply opener at most.
    if (cost.breakDetail !== null) cost.lostRead = Math.max(model.unbrokenRead() - cost.predicted.cacheRead, 0);
    return cost;
  }

  /** The price and the cache model of one provider and model, made at its first request. */
  private rulesOf(provider: CacheProvider, modelId: string): { price: ModelPrice | null; model: CacheModel } {
    const key = `${provider} ${modelId}`;
    let rules = this.rules.get(key);
    if (!rules) {
      const price = priceOf(this.options.pricing, modelId, PRICE_HINTS[provider]);
      // The wire API says which cache the request met; the priced model gives the minimum prefix.
      rules = { price, model: cacheModel({ provider, minCacheTokens: minCacheTokensOf(provider, price, modelId) }) };
      this.rules.set(key, rules);
    }
    return rules;
  }

  /** Loads the tokenizer that `next` needs for a Messages body (before a pass that cannot wait for it). */
  async loadCounter(): Promise<void> {
    this.breakpoints ??= partBreakpoints(await (await import("../../capture/tokens.js")).loadTokenCounter());
  }

  /** `records` as they are, each priced on its way through and handed to `each` (until one needs the counter). */
  *observing(records: Iterable<RecordSummary>, each: (cost: RequestCost) => void): Generator<RecordSummary> {
    const seen = this.observedAll;
    for (const record of records) {
      const cost = seen.complete ? this.next(record) : null;
      if (cost) each(cost);
      else seen.complete = false;
      yield record;
    }
    seen.exhausted = true;
  }

  /** Whether the pass through `observing` priced every record of the run (else price it with runCost). */
  get pricedAll(): boolean {
    return this.observedAll.complete && this.observedAll.exhausted;
  }
}

/**
 * A Gemini body that reads an explicit cache (`cachedContent`); the cache model predicts no implicit
 * read for it. The field is a top-level one: the fields around the body's arrays are read alone.
 */
function namesExplicitCache(payload: LazyPayload | null): boolean {
  if (payload === null) return false;
  const elements = bodyElements(payload.stored().body);
  const around = elements ? JSON.stringify(elements.top) : payload.load().body;
  return codecFor("google-generative-ai").dissect(around).cachedContent !== undefined;
}

/** Whose cache rules a request met, by its wire API: Bedrock's Converse keeps Anthropic's breakpoints (cache-rules.ts). */
function cacheProviderOf(api: string): CacheProvider {
  if (breakpointCache(api)) return "anthropic";
  return api === "google-generative-ai" ? "gemini" : "openai";
}

/** Which provider's price list to look in first. */
const PRICE_HINTS: Record<CacheProvider, ProviderHint> = { anthropic: "anthropic", openai: "openai", gemini: "google" };

function minCacheTokensOf(provider: CacheProvider, price: ModelPrice | null, modelId: string): number | undefined {
  if (provider === "openai") return undefined;
  const minimum = provider === "anthropic" ? breakpointMinCacheTokens : geminiMinCacheTokens;
  return price?.minCacheTokens ?? minimum(price?.model ?? modelId);
}

function cacheInputOf(record: RecordSummary, breakpoints: CacheInput["breakpoints"]): CacheInput {
  const from = record.prefix?.from;
  return {
    seq: record.seq,
    kind: record.kind,
    atMs: Date.parse(record.ts),
    inputTokens: record.tokens?.total ?? 0,
    sharedTokens: readsCache(record) ? sharedTokensOf(record) : null,
    ...(from === undefined ? {} : { from }),
    ...(breakpoints ? { breakpoints } : {}),
  };
}

/** A record read against an earlier request: any since `prefix.from` was written, else only a loop request. */
function readsCache(record: RecordSummary): boolean {
  return record.prefix?.from !== undefined || record.kind === "loop";
}

/** Which request was priced, as what, and at which price: every cost starts with these. */
function pricedRequest(record: RecordSummary, model: string, price: ModelPrice | null) {
  return {
    seq: record.seq,
    kind: record.kind,
    ts: record.ts,
    model,
    pricedAs: price?.model ?? null,
    sent: record.model,
    price,
  };
}

function requestCost(
  record: RecordSummary,
  model: string,
  price: ModelPrice | null,
  predicted: CacheSplit,
): RequestCost {
  const reported = record.usage ? reportedSplit(record.usage) : null;
  // Output is priced from a provider's own count only: a mock's estimate of its scripted reply is not
  // what anyone is billed for, and a baseline file (one side of a diff) keeps no output figures.
  const output = reported?.source === "provider" ? reported.outputTokens : null;
  const at = new Date(record.ts);
  const cost = (split: CacheSplit) => (price ? requestDollars(price, split, output ?? 0, at) : null);
  return {
    ...pricedRequest(record, model, price),
    predicted,
    predictedCost: cost(predicted),
    reported,
    reportedCost: reported ? cost(reported) : null,
    disagreement: reported?.source === "provider" ? disagreement(predicted, reported) : null,
    sharedTokens: readsCache(record) ? sharedTokensOf(record) : null,
    from: record.prefix?.from ?? null,
    breakDetail: record.prefix?.breakDetail ?? null,
    lostRead: 0,
    rebill: null,
    failure: null,
  };
}

const NOTHING: CacheSplit = { inputTokens: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, uncached: 0 };

/**
 * A request that reached no model (no response, or an error status): nothing billed, no cache read or
 * written, and the cache model never sees it, so the requests after it are predicted as if it had
 * not been sent.
 */
function failedCost(record: RecordSummary, model: string, price: ModelPrice | null, failure: string): RequestCost {
  return {
    ...pricedRequest(record, model, price),
    predicted: NOTHING,
    predictedCost: price ? 0 : null,
    reported: null,
    reportedCost: null,
    disagreement: null,
    sharedTokens: null,
    from: null,
    breakDetail: null,
    lostRead: 0,
    rebill: null,
    failure,
  };
}

/**
 * Each prefix break is charged with the cached tokens its request lost, priced as the difference
 * from reading them. Under both providers' rules the request after it reads the new prefix again
 * (OpenAI caches it automatically, Anthropic wrote it at the break's breakpoints), so a break
 * re-bills its own request: the rest of the run pays nothing more for it.
 */
function attributeRebills(requests: RequestCost[]): void {
  for (const r of requests) {
    if (r.kind !== "loop" || r.breakDetail === null || r.lostRead === 0) continue;
    const dollars = r.price
      ? requestDollars(r.price, r.predicted, 0, new Date(r.ts)) -
        requestDollars(r.price, readInstead(r.predicted, r.lostRead), 0, new Date(r.ts))
      : null;
    r.rebill = { tokens: r.lostRead, requests: 1, dollars };
  }
}

/** The split had `tokens` more been read from the cache: taken from writes first, then from full-price tokens. */
function readInstead(split: CacheSplit, tokens: number): CacheSplit {
  let left = tokens;
  const take = (n: number) => {
    const taken = Math.min(n, left);
    left -= taken;
    return n - taken;
  };
  const cacheWrite5m = take(split.cacheWrite5m);
  const cacheWrite1h = take(split.cacheWrite1h);
  const uncached = take(split.uncached);
  return {
    inputTokens: split.inputTokens,
    cacheRead: split.inputTokens - cacheWrite5m - cacheWrite1h - uncached,
    cacheWrite5m,
    cacheWrite1h,
    uncached,
  };
}

/** The provider's figures in the model's terms: `inputTokens` includes what was read and written. */
export function reportedSplit(usage: Usage): ReportedSplit {
  const input = usage.inputTokens ?? 0;
  const read = usage.cachedInputTokens ?? 0;
  const w1h = usage.cacheWrite1hTokens ?? 0;
  const w5m = usage.cacheWrite5mTokens ?? Math.max((usage.cacheWriteTokens ?? 0) - w1h, 0);
  return {
    inputTokens: input,
    cacheRead: read,
    cacheWrite5m: w5m,
    cacheWrite1h: w1h,
    uncached: Math.max(input - read - w5m - w1h, 0),
    outputTokens: usage.outputTokens ?? null,
    source: usage.source,
  };
}

/**
 * Our tokens are an o200k estimate, not the provider's tokenizer, so counts are compared as shares
 * of the prompt: they disagree when one side has cache reads (or writes) and the other none, or
 * when the shares differ by more than 10 points.
 */
export const SHARE_TOLERANCE = 0.1;

function disagreement(predicted: CacheSplit, reported: CacheSplit): string | null {
  const problems: string[] = [];
  const share = (n: number, of: number) => (of > 0 ? n / of : 0);
  const compare = (what: string, p: number, r: number) => {
    const ps = share(p, predicted.inputTokens);
    const rs = share(r, reported.inputTokens);
    if (p > 0 !== r > 0 || Math.abs(ps - rs) > SHARE_TOLERANCE)
      problems.push(`${what} predicted ${p} (${percent(ps)}), reported ${r} (${percent(rs)})`);
  };
  compare("cache read", predicted.cacheRead, reported.cacheRead);
  compare(
    "cache write",
    predicted.cacheWrite5m + predicted.cacheWrite1h,
    reported.cacheWrite5m + reported.cacheWrite1h,
  );
  return problems.length > 0 ? problems.join("; ") : null;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

function summarize(requests: RequestCost[], lost: number, pricing: PricingTable): RunCost {
  const unpriced = [...new Set(requests.filter((r) => r.price === null).map((r) => r.model))].map((model) => ({
    model,
    nearest: nearestPriced(pricing, model),
  }));
  const anyReported = requests.some((r) => r.reportedCost !== null);
  const anyPriced = requests.some((r) => r.predictedCost !== null);
  return {
    prices: pricing.source,
    requests,
    unpriced,
    total: {
      predicted: anyPriced ? requests.reduce((sum, r) => sum + (r.predictedCost ?? 0), 0) : null,
      reported: anyReported ? requests.reduce((sum, r) => sum + (r.reportedCost ?? 0), 0) : null,
      inputTokens: requests.reduce((sum, r) => sum + r.predicted.inputTokens, 0),
      cacheRead: requests.reduce((sum, r) => sum + r.predicted.cacheRead, 0),
    },
    lost,
  };
}
