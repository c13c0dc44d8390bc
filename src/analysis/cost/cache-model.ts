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
 * Both models read each request from the earlier request the capture found it shares the most with
 * among those still cached (the record's `prefix.from`, capture/cache-reader.ts), whatever its
 * conversation: a side call between two turns leaves the second turn its read. Anthropic's entries
 * are followed along those links: a request can read an entry of the request it reads from, or one
 * that request could read, up to the tokens they share, at a block boundary within about 20 blocks
 * before one of its own breakpoints (Anthropic, "Prompt caching" → "Automatic prefix checking").
 * Records written before `from` are read as before: against the previous loop request, other kinds
 * reading nothing.
 */
import {
  anthropicMinCacheTokens,
  geminiMinCacheTokens,
  OPENAI_IDLE_MS,
  openaiCachedTokens,
} from "../../providers/cache-rules.js";

export { anthropicMinCacheTokens, geminiMinCacheTokens };

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
  /** Tokens shared with request `from` (the record's `prefix.sharedTokens`); null when unknown. */
  sharedTokens: number | null;
  /** The request read from (the record's `prefix.from`): null none; undefined, a record from before it (the previous loop request). */
  from?: number | null;
  /**
   * Anthropic: prefix tokens up to and including each breakpoint's segment, in cache order, its
   * lifetime, and its block's place among the request's content blocks (tools, system parts, message blocks).
   */
  breakpoints?: CacheBreakpointAt[];
  /** Gemini: the request names an explicit cache (`cachedContent`), whose tokens are not in its body. */
  explicitCache?: boolean;
}

export interface CacheBreakpointAt {
  tokens: number;
  ttl: string;
  /** The block's place in cache order, counted from 0; absent when not known (then no look-back limit). */
  block?: number;
}

/**
 * A lookup at a breakpoint checks the block boundaries up to about 20 blocks before it (Anthropic,
 * "Prompt caching" → "Automatic prefix checking"); an entry further back is not found.
 */
const ANTHROPIC_LOOKBACK_BLOCKS = 20;

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

/** Resolves `from` for a record from before it: the previous loop request; other kinds read nothing. */
function sourceResolver(): (r: CacheInput) => number | null {
  let lastLoop: number | null = null;
  return (r) => {
    const from = r.from === undefined ? (r.kind === "loop" ? lastLoop : null) : r.from;
    if (r.kind === "loop") lastLoop = r.seq;
    return from;
  };
}

/** A request later ones may read from: any since `from` was recorded; before it, only a loop request. */
const isSource = (r: CacheInput) => r.from !== undefined || r.kind === "loop";

/**
 * A cache the provider keeps on its own (OpenAI, Gemini's implicit one): a request reads what it
 * shares with the request it reads from, as `cached` rounds it (the capture only names a request
 * still cached; a record from before `from` checks the idle time itself). A request naming an
 * explicit cache (Gemini) is predicted to read nothing implicitly.
 */
function automaticCache(cached: (shared: number) => number): CacheModel {
  const sourceOf = sourceResolver();
  const seen = new Map<number, { atMs: number; inputTokens: number }>();
  let unbroken = 0;
  return {
    next(r) {
      const from = sourceOf(r);
      const source = from === null ? undefined : seen.get(from);
      if (isSource(r)) seen.set(r.seq, { atMs: r.atMs, inputTokens: r.inputTokens });
      const alive = source !== undefined && !r.explicitCache && r.atMs - source.atMs <= OPENAI_IDLE_MS;
      unbroken = alive ? cached(Math.min(source.inputTokens, r.inputTokens)) : 0;
      return split(r.inputTokens, alive ? cached(Math.min(r.sharedTokens ?? 0, r.inputTokens)) : 0);
    },
    unbrokenRead: () => unbroken,
  };
}

interface Entry {
  /** Prefix tokens the entry holds. */
  tokens: number;
  /** The block it ends at (undefined: not known). */
  block?: number;
  ttlMs: number;
  lastUsedMs: number;
}

/**
 * Anthropic: each request keeps the entries that are a prefix of it — those it wrote, and those of the
 * request it read from up to what the two share — so a later request reading from it finds them.
 */
function anthropicCache(minCacheTokens: number): CacheModel {
  const sourceOf = sourceResolver();
  const prefixEntries = new Map<number, Entry[]>();
  let unbroken = 0;
  return {
    next(r) {
      const from = sourceOf(r);
      const breakpoints = r.breakpoints ?? [];
      const alive = (from === null ? [] : (prefixEntries.get(from) ?? [])).filter(
        (e) => r.atMs - e.lastUsedMs <= e.ttlMs && reachable(e, breakpoints),
      );
      const longest = (list: Entry[]) => Math.max(0, ...list.map((e) => e.tokens));
      unbroken = Math.min(longest(alive), r.inputTokens);
      const shared = r.sharedTokens ?? 0;
      const kept = alive.filter((e) => e.tokens <= shared);
      const read = Math.min(longest(kept), r.inputTokens);
      for (const e of kept) if (e.tokens <= read) e.lastUsedMs = r.atMs;
      const written = writes(r, breakpoints, read, minCacheTokens);
      if (isSource(r))
        prefixEntries.set(r.seq, [
          ...kept.filter((e) => !written.entries.some((w) => w.tokens === e.tokens)),
          ...written.entries,
        ]);
      return written.split;
    },
    unbrokenRead: () => unbroken,
  };
}

/** An entry a lookup finds: one at or before a breakpoint, within the look-back of one. */
function reachable(entry: Entry, breakpoints: CacheBreakpointAt[]): boolean {
  return breakpoints.some(
    (b) =>
      entry.tokens <= b.tokens &&
      (entry.block === undefined || b.block === undefined || b.block - entry.block <= ANTHROPIC_LOOKBACK_BLOCKS),
  );
}

/** The tokens past `read` that qualifying breakpoints write, each stretch at its breakpoint's lifetime. */
function writes(
  r: CacheInput,
  breakpoints: CacheBreakpointAt[],
  read: number,
  minCacheTokens: number,
): { split: CacheSplit; entries: Entry[] } {
  const entries: Entry[] = [];
  let end = read;
  let w5m = 0;
  let w1h = 0;
  for (const b of breakpoints) {
    // A breakpoint's tokens are the prefix counted on its own, which can split a few tokens more than
    // the same text inside the whole prompt: a prompt never caches more than it holds.
    const tokens = Math.min(b.tokens, r.inputTokens);
    // A breakpoint before the minimum caches nothing; its tokens fall to the next one that qualifies.
    if (tokens <= end || tokens < minCacheTokens) continue;
    const ttlMs = TTL_MS[b.ttl] ?? TTL_MS["5m"]!;
    if (ttlMs === TTL_MS["1h"]) w1h += tokens - end;
    else w5m += tokens - end;
    end = tokens;
    entries.push({ tokens, ...(b.block === undefined ? {} : { block: b.block }), ttlMs, lastUsedMs: r.atMs });
  }
  return { split: split(r.inputTokens, read, w5m, w1h), entries };
}
