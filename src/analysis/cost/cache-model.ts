/**
 * What a provider's prompt cache does with a run, request by request, from the providers'
 * published rules and the run's prefix analysis (how many tokens each loop request shares with the
 * one before it, and — for Anthropic — where its `cache_control` breakpoints sit).
 *
 * OpenAI (chat completions and Responses): caching is automatic for prompts of 1,024 tokens or
 * more, and a hit covers the longest matching prefix in steps of 128 tokens (OpenAI cookbook,
 * "Prompt Caching 201", 1.1 Basics). No write premium; a cached token costs the cached-input price.
 *
 * Anthropic (Messages): only what ends at a `cache_control` breakpoint is cached, and only when the
 * prefix up to it is at least the model's minimum cacheable length. Writing costs the 5-minute or
 * 1-hour write price of the breakpoint's `ttl`; a later request whose prefix matches an entry
 * still alive reads it at the cache-read price, and the read restarts the entry's lifetime
 * (Anthropic, "Prompt caching"). A lookup at a breakpoint also finds entries at earlier block
 * boundaries; the model lets it find any live entry before the request's last breakpoint (the
 * documented look-back of about 20 blocks is not limited).
 *
 * Both models follow one chain of loop requests, as the capture's prefix analysis does: a prefix
 * is matched against the previous loop request only, so a prefix that comes back after a detour
 * is predicted uncached although a provider might still hold it. Sampling and side requests are
 * predicted on their own (no read; Anthropic writes what their breakpoints qualify for).
 */
/** Whose cache rules apply: OpenAI's or Gemini's automatic prefix cache, or Anthropic's explicit breakpoints. */
export type CacheProvider = "openai" | "anthropic" | "gemini";

/** What the model needs of one request. Token counts are the capture's offline estimate. */
export interface CacheInput {
  seq: number;
  kind: "loop" | "sampling" | "side";
  /** Request time in ms since the epoch (the record's `ts`). */
  atMs: number;
  /** Prompt tokens of the whole request. */
  inputTokens: number;
  /** Tokens shared with the previous loop request (the record's `prefix.sharedTokens`); null when unknown. */
  sharedTokens: number | null;
  /** Anthropic: prefix tokens up to and including each breakpoint's segment, in cache order, and its lifetime. */
  breakpoints?: { tokens: number; ttl: string }[];
  /** Gemini: the request names an explicit cache (`cachedContent`), whose tokens are not in its body. */
  explicitCache?: boolean;
}

/** How a request's prompt tokens are billed: read from the cache, written to it, or neither. */
export interface CacheSplit {
  inputTokens: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  uncached: number;
}

export interface CacheRules {
  provider: CacheProvider;
  /** Anthropic and Gemini: the model's minimum cacheable prefix. */
  minCacheTokens?: number;
}

/** OpenAI: a prompt shorter than this is never cached. */
export const OPENAI_MIN_CACHE_TOKENS = 1024;
/** OpenAI: cache hits grow in steps of this many tokens. */
export const OPENAI_CACHE_STEP = 128;
/**
 * OpenAI keeps a prefix for 5 to 10 minutes of inactivity (longer off-peak); the model takes the
 * shorter end, so a gap it predicts as cached is one the provider documents as cached.
 */
export const OPENAI_IDLE_MS = 5 * 60_000;

/**
 * Anthropic: the shortest prefix a breakpoint caches, by model family, newest families first. The
 * prompt caching page ("Cache limitations") could not be read from here; the figures are those
 * gateways' copies of it agree on (orq.ai, nano-gpt, aihubmix: 4,096 for Opus 4.5, Opus 4.6 and
 * Haiku 4.5; 2,048 for the Haiku 3 models) and one article for the newest (512 for Opus 5, 2,048
 * for Opus 4.7, where sources differ on Sonnet 4.6: 2,048 taken). Any other Claude model: 1,024,
 * the documented minimum of Sonnet and Opus 4 and earlier. A user pricing file may name its own.
 */
const ANTHROPIC_MIN_CACHE: [RegExp, number][] = [
  [/(opus|fable|mythos)-5(?![-.]\d)/, 512],
  [/opus-4-[56]|haiku-4-5/, 4096],
  [/opus-4-7|sonnet-4-6|haiku/, 2048],
];

export function anthropicMinCacheTokens(modelId: string): number {
  return ANTHROPIC_MIN_CACHE.find(([pattern]) => pattern.test(modelId))?.[1] ?? 1024;
}

/**
 * Gemini's implicit cache, on by default for Gemini 2.5 and newer (Gemini API, "Context caching" →
 * "Implicit caching", the page of 2026-10-23): a request whose prompt reaches the model's minimum
 * and shares its start with a recent request is billed those tokens at the cached-token price
 * (the price table's `cache_read_mtok`, a tenth of the input price for 2.5 Flash); there is no write
 * premium. The minimums by model, newest first, are that page's table: 4,096 for Gemini 3.1 Pro and
 * the 3.5 to 3.8 Flash and 4 models, 2,048 for 2.5 Flash and 2.5 Pro; the older page of 2026-05-07
 * gave 1,024 for Gemini 3 Flash Preview and 4,096 for 3 Pro Preview. Any other model: 2,048. Google
 * documents neither a step nor a lifetime for implicit hits, so a hit covers the whole shared prefix
 * and lives as long as OpenAI's shorter end (OPENAI_IDLE_MS): both are assumptions, named here.
 * An explicit cache (`cachedContent: "cachedContents/…"`) holds tokens outside the request body,
 * which the capture cannot count: its reads are seen only in the reported `cachedContentTokenCount`.
 */
const GEMINI_MIN_CACHE: [RegExp, number][] = [
  [/gemini-(3\.[1-9]|[4-9])|gemini-3-pro/, 4096],
  [/gemini-3-flash/, 1024],
];

export function geminiMinCacheTokens(modelId: string): number {
  return GEMINI_MIN_CACHE.find(([pattern]) => pattern.test(modelId))?.[1] ?? 2048;
}

function geminiCachedTokens(minCacheTokens: number): (shared: number) => number {
  return (shared) => (shared < minCacheTokens ? 0 : shared);
}

const TTL_MS: Record<string, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

export interface CacheModel {
  next(request: CacheInput): CacheSplit;
  /**
   * What the last request would have read had it kept the whole previous loop request as its
   * prefix: the read a prefix break cost it (equal to its read when nothing broke).
   */
  unbrokenRead(): number;
}

export function cacheModel(rules: CacheRules): CacheModel {
  if (rules.provider === "gemini") return automaticCache(geminiCachedTokens(rules.minCacheTokens ?? 0));
  return rules.provider === "openai" ? automaticCache(openaiCachedTokens) : anthropicCache(rules.minCacheTokens ?? 0);
}

function split(inputTokens: number, cacheRead: number, cacheWrite5m = 0, cacheWrite1h = 0): CacheSplit {
  return {
    inputTokens,
    cacheRead,
    cacheWrite5m,
    cacheWrite1h,
    uncached: inputTokens - cacheRead - cacheWrite5m - cacheWrite1h,
  };
}

/** The tokens an OpenAI hit covers when `shared` prompt tokens match a cached prompt. */
export function openaiCachedTokens(shared: number): number {
  if (shared < OPENAI_MIN_CACHE_TOKENS) return 0;
  return Math.floor(shared / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP;
}

/**
 * A cache the provider keeps on its own (OpenAI, Gemini's implicit one): a loop request reads what
 * it shares with the previous one while that one is recent enough, as `cached` rounds it. A request
 * naming an explicit cache (Gemini) is predicted to read nothing implicitly.
 */
function automaticCache(cached: (shared: number) => number): CacheModel {
  let last: { atMs: number; inputTokens: number } | null = null;
  let unbroken = 0;
  return {
    next(r) {
      if (r.kind !== "loop" || r.explicitCache) {
        unbroken = 0;
        return split(r.inputTokens, 0);
      }
      const alive = last !== null && r.atMs - last.atMs <= OPENAI_IDLE_MS;
      unbroken = alive ? cached(Math.min(last!.inputTokens, r.inputTokens)) : 0;
      last = { atMs: r.atMs, inputTokens: r.inputTokens };
      return split(r.inputTokens, alive ? cached(Math.min(r.sharedTokens ?? 0, r.inputTokens)) : 0);
    },
    unbrokenRead: () => unbroken,
  };
}

interface Entry {
  /** Prefix tokens the entry holds. */
  tokens: number;
  ttlMs: number;
  lastUsedMs: number;
}

function anthropicCache(minCacheTokens: number): CacheModel {
  let entries: Entry[] = [];
  let unbroken = 0;
  return {
    next(r) {
      const breakpoints = r.breakpoints ?? [];
      if (r.kind !== "loop") {
        unbroken = 0;
        return writes(r, breakpoints, 0, minCacheTokens).split;
      }
      const reach = Math.max(0, ...breakpoints.map((b) => b.tokens));
      const longest = (list: Entry[]) =>
        list.reduce((max, e) => (e.tokens <= reach && e.tokens > max ? e.tokens : max), 0);
      entries = entries.filter((e) => r.atMs - e.lastUsedMs <= e.ttlMs);
      unbroken = Math.min(longest(entries), r.inputTokens);
      // An entry matches while the chain of requests since it was written kept its whole prefix.
      const shared = r.sharedTokens ?? 0;
      entries = entries.filter((e) => e.tokens <= shared);
      const read = longest(entries);
      for (const e of entries) if (e.tokens <= read) e.lastUsedMs = r.atMs;
      const written = writes(r, breakpoints, read, minCacheTokens);
      for (const entry of written.entries) {
        entries = entries.filter((e) => e.tokens !== entry.tokens);
        entries.push(entry);
      }
      return written.split;
    },
    unbrokenRead: () => unbroken,
  };
}

/** The tokens past `read` that qualifying breakpoints write, each stretch at its breakpoint's lifetime. */
function writes(
  r: CacheInput,
  breakpoints: { tokens: number; ttl: string }[],
  read: number,
  minCacheTokens: number,
): { split: CacheSplit; entries: Entry[] } {
  const entries: Entry[] = [];
  let end = read;
  let w5m = 0;
  let w1h = 0;
  for (const b of breakpoints) {
    // A breakpoint before the minimum caches nothing; its tokens fall to the next one that qualifies.
    if (b.tokens <= end || b.tokens < minCacheTokens) continue;
    const ttlMs = TTL_MS[b.ttl] ?? TTL_MS["5m"]!;
    if (ttlMs === TTL_MS["1h"]) w1h += b.tokens - end;
    else w5m += b.tokens - end;
    end = b.tokens;
    entries.push({ tokens: b.tokens, ttlMs, lastUsedMs: r.atMs });
  }
  return { split: split(r.inputTokens, read, w5m, w1h), entries };
}
