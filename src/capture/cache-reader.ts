/**
 * What a provider can read from its prompt cache for each request of a run, by the providers'
 * documented rules: a prompt cache is keyed by the rendered prefix, per model, and any earlier request
 * whose entry is still alive can serve it — not only the previous one. So each request is compared
 * with every earlier live request of its API and model, and the one sharing the most segments is the
 * one it reads from (`prefix.from`); a break is named against that request.
 *
 * Lifetimes:
 * - Anthropic: an entry lives 5 minutes, or 1 hour with `ttl: "1h"`, refreshed each time it is read
 *   (Anthropic, "Prompt caching" → "How prompt caching works", "1-hour cache duration").
 * - OpenAI: a prefix stays cached for 5 to 10 minutes of inactivity, up to an hour off-peak (OpenAI,
 *   "Prompt caching" guide); the shorter end is taken, as the cost model does.
 * - Gemini: implicit caching documents no lifetime; OpenAI's shorter end is assumed (cost/cache-model.ts).
 *
 * Levels (Anthropic, "Prompt caching" → "What invalidates the cache"): a change of `tool_choice` or of
 * the thinking settings, or images added or removed, leaves tools and system readable but not the
 * messages, however alike the messages are.
 */
import { breakpointCache, messageSettingsChanges } from "../providers/cache-rules.js";
import type { WireDissection } from "../providers/types.js";
import { headSegments, type PrefixBreak, PrefixLocator, type ReadLimit, sharedSegments } from "./prefix.js";
import type { TokenMeasure } from "./tokens.js";

const MINUTE = 60_000;
const FIVE_MINUTES = 5 * MINUTE;
const ONE_HOUR = 60 * MINUTE;

/**
 * How many live requests of one API and model a request is compared with, newest first: enough for
 * every conversation an agent interleaves within a cache lifetime, bounded so a long session's
 * capture stays linear.
 */
const CANDIDATES = 32;

interface Cached {
  seq: number;
  conversation: string;
  d: WireDissection;
  lifetimeMs: number;
  /** When the entry was last written or read: its lifetime runs from here. */
  lastUsedMs: number;
}

/** One request as the reader takes it. */
export interface CacheReadInput {
  seq: number;
  api: string;
  atMs: number;
  dissection: WireDissection;
  conversation: string;
  /** The request is its conversation's first. */
  startsConversation: boolean;
  /**
   * The seq of the request whose response this one continues (Responses `previous_response_id`): the
   * provider holds that context and puts the new input after it (OpenAI, "Conversation state").
   */
  chainedTo?: number;
}

export class CacheReader {
  private readonly lanes = new Map<string, Cached[]>();
  private readonly locator = new PrefixLocator();

  /** What the request reads, and from which earlier request; remembers the request for later ones. */
  read(input: CacheReadInput, counter?: TokenMeasure): PrefixBreak {
    const { api, dissection: d, atMs } = input;
    const lane = `${api} ${d.model}`;
    const live = (this.lanes.get(lane) ?? []).filter((c) => atMs - c.lastUsedMs <= c.lifetimeMs);
    const best = bestMatch(live, input);
    const limit = best ? messagesUnreadable(best.d, d) : undefined;
    const found = this.locator.locate(best?.d ?? null, d, counter, limit);
    if (best) best.lastUsedMs = atMs;
    live.push({
      seq: input.seq,
      conversation: input.conversation,
      d,
      lifetimeMs: lifetimeOf(api, d),
      lastUsedMs: atMs,
    });
    this.lanes.set(lane, live.slice(-CANDIDATES));
    if (input.chainedTo !== undefined) return this.chained(input, found.sharedTokens !== undefined);
    const info: PrefixBreak = { ...found, from: best?.seq ?? null, newConversation: input.startsConversation };
    // A conversation's first request starts something new: what it shares is read, the rest is no break.
    if (input.startsConversation) Object.assign(info, { breakAt: null, breakDetail: null });
    return info;
  }

  /**
   * A chained request's body holds only its new input, so its prefix cannot be measured here: it reads
   * the stored context of the request it names, and nothing it sent is a break.
   */
  private chained(input: CacheReadInput, counted: boolean): PrefixBreak {
    return {
      sharedBytes: 0,
      breakAt: null,
      breakDetail: null,
      ...(counted ? { sharedTokens: 0 } : {}),
      from: input.chainedTo ?? null,
      newConversation: input.startsConversation,
    };
  }
}

/**
 * The live request sharing the most leading segments; on a tie, one of the same conversation, then the
 * newest. When none shares a segment, nothing is read: the conversation's own last request still
 * names the break, and a request starting a conversation reads from none.
 */
function bestMatch(live: Cached[], input: CacheReadInput): Cached | null {
  let best: Cached | null = null;
  let bestShared = -1;
  for (let i = live.length - 1; i >= 0; i--) {
    const c = live[i]!;
    const limit = messagesUnreadable(c.d, input.dissection);
    const shared = Math.min(sharedSegments(c.d, input.dissection), limit?.segments ?? Number.POSITIVE_INFINITY);
    const better =
      shared > bestShared || (shared === bestShared && best !== null && isOwn(c, input) && !isOwn(best, input));
    if (better) {
      best = c;
      bestShared = shared;
    }
  }
  if (bestShared > 0) return best;
  return live.findLast((c) => isOwn(c, input)) ?? null;
}

const isOwn = (c: Cached, input: CacheReadInput) => c.conversation === input.conversation;

/** Anthropic: the messages cannot be read when a setting that keys them changed (module comment). */
function messagesUnreadable(before: WireDissection, after: WireDissection): ReadLimit | undefined {
  const changes = messageSettingsChanges(before, after);
  if (changes.length === 0) return undefined;
  return { segments: headSegments(after), at: "messages", detail: `messages not readable: ${changes.join(", ")}` };
}

/** How long a request's cache entries live: Anthropic and Converse by the `ttl` of their breakpoints, others 5 minutes. */
function lifetimeOf(api: string, d: WireDissection): number {
  if (!breakpointCache(api)) return FIVE_MINUTES;
  return (d.cacheBreakpoints ?? []).some((b) => b.ttl === "1h") ? ONE_HOUR : FIVE_MINUTES;
}
