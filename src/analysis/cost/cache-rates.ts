/**
 * Two figures of a run's prompt cache: the hit rate (prompt tokens read from the cache over all prompt
 * tokens sent) and the write amplification (tokens written to the cache that no later request of the
 * run read, over all tokens written). Each request is counted by the provider's usage where it
 * reported one, else by the cache model's prediction (cache-model.ts), and says which.
 */
import type { RequestCost, RunCost } from "./run-cost.js";

/** Whose figures a request was counted by: the provider's usage, or our cache model. */
export type CacheBasis = "provider" | "model";

export interface RequestCacheRate {
  seq: number;
  basis: CacheBasis;
  /** Prompt tokens sent, read from the cache, and written to it. */
  input: number;
  read: number;
  written: number;
  /** Of `written`, the tokens no later request of the same model read back. */
  unread: number;
  hitRate: number | null;
}

/** A run's figures, summed over its requests. */
export interface RunCacheTotals {
  /** `mixed` when some requests had provider usage and some did not. */
  basis: CacheBasis | "mixed";
  input: number;
  read: number;
  written: number;
  unread: number;
  hitRate: number | null;
  /** null when nothing was written (OpenAI reports no writes and charges none). */
  writeAmplification: number | null;
}

export interface RunCacheRates extends RunCacheTotals {
  requests: RequestCacheRate[];
}

function requestRate(r: RequestCost): RequestCacheRate {
  const basis: CacheBasis = r.reported?.source === "provider" ? "provider" : "model";
  const split = basis === "provider" ? r.reported! : r.predicted;
  const written = split.cacheWrite5m + split.cacheWrite1h;
  const input = split.inputTokens;
  return {
    seq: r.seq,
    basis,
    input,
    read: split.cacheRead,
    written,
    unread: written,
    hitRate: ratio(split.cacheRead, input),
  };
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/**
 * Of each request's `written`, what no later read reached. A request writes the prefix from where its
 * read ended to where its write ends. A later request reads what it shares with the request it reads
 * from (`from`, and what that one read from in turn), so a read past a position there has read what
 * was written. Records from before `from` (no request has one) count any later read of the same
 * model (its `lane`), as the chain of loop requests did.
 */
function unreadOf(
  read: number[],
  written: number[],
  lanes: string[],
  from: (number | null)[],
  seqs: number[],
): number[] {
  const furthest = from.some((f) => typeof f === "number")
    ? furthestReadsByLink(read, from, seqs)
    : furthestReadsByLane(read, lanes);
  return written.map((w, i) => w - Math.min(Math.max(furthest[i]! - read[i]!, 0), w));
}

/** Each request's furthest later read along its own lane. */
function furthestReadsByLane(read: number[], lanes: string[]): number[] {
  const furthest = new Array<number>(read.length);
  const byLane = new Map<string, number>();
  for (let i = read.length - 1; i >= 0; i--) {
    furthest[i] = byLane.get(lanes[i]!) ?? 0;
    byLane.set(lanes[i]!, Math.max(furthest[i]!, read[i]!));
  }
  return furthest;
}

/** How many links back a read is credited: entries older than this chain are seldom still alive. */
const LINKS_FOLLOWED = 64;

/** Each request's furthest later read by a request reading from it, directly or through the requests between. */
function furthestReadsByLink(read: number[], from: (number | null)[], seqs: number[]): number[] {
  const index = new Map(seqs.map((seq, i) => [seq, i]));
  const furthest = read.map(() => 0);
  for (let j = 0; j < read.length; j++) {
    let a = typeof from[j] === "number" ? index.get(from[j]!) : undefined;
    for (let steps = 0; a !== undefined && steps < LINKS_FOLLOWED; steps++) {
      furthest[a] = Math.max(furthest[a]!, read[j]!);
      a = typeof from[a] === "number" ? index.get(from[a]!) : undefined;
    }
  }
  return furthest;
}

const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);

function totalsOf(
  bases: Set<CacheBasis>,
  input: number,
  { read, written, unread }: { read: number[]; written: number[]; unread: number[] },
): RunCacheTotals {
  const [readSum, writtenSum, unreadSum] = [sum(read), sum(written), sum(unread)];
  return {
    basis: bases.size > 1 ? "mixed" : bases.has("provider") ? "provider" : "model",
    input,
    read: readSum,
    written: writtenSum,
    unread: unreadSum,
    hitRate: ratio(readSum, input),
    writeAmplification: ratio(unreadSum, writtenSum),
  };
}

export function cacheRates(cost: RunCost): RunCacheRates {
  const requests = cost.requests.map(requestRate);
  const read = requests.map((r) => r.read);
  const written = requests.map((r) => r.written);
  const unread = unreadOf(
    read,
    written,
    cost.requests.map((r) => r.sent),
    cost.requests.map((r) => r.from),
    cost.requests.map((r) => r.seq),
  );
  for (const [i, r] of requests.entries()) r.unread = unread[i]!;
  const bases = new Set(requests.map((r) => r.basis));
  return { ...totalsOf(bases, sum(requests.map((r) => r.input)), { read, written, unread }), requests };
}

/**
 * The run's totals gathered as its requests are priced one by one (RunCosting.observing), keeping
 * three figures of each instead of its whole cost: what report's and diff's summary line needs.
 */
export class CacheRateTally {
  private readonly bases = new Set<CacheBasis>();
  private input = 0;
  private readonly read: number[] = [];
  private readonly written: number[] = [];
  private readonly lanes: string[] = [];
  private readonly from: (number | null)[] = [];
  private readonly seqs: number[] = [];

  add(cost: RequestCost): void {
    const rate = requestRate(cost);
    this.bases.add(rate.basis);
    this.input += rate.input;
    this.read.push(rate.read);
    this.written.push(rate.written);
    this.lanes.push(cost.sent);
    this.from.push(cost.from);
    this.seqs.push(cost.seq);
  }

  totals(): RunCacheTotals {
    const { read, written } = this;
    return totalsOf(this.bases, this.input, {
      read,
      written,
      unread: unreadOf(read, written, this.lanes, this.from, this.seqs),
    });
  }
}

const BASIS_WORDS: Record<RunCacheRates["basis"], string> = {
  provider: "by the provider's usage",
  model: "by our cache model (no provider usage)",
  mixed: "by the provider's usage where reported, else our cache model",
};

export const percentOf = (share: number | null) => (share === null ? "n/a" : `${Math.round(share * 1000) / 10}%`);

/** `cache hit rate 81.2% (…), write amplification 4% (…), by …`: report's summary line. */
export function cacheRatesLine(rates: RunCacheTotals): string {
  const writes =
    rates.written === 0
      ? "no cache writes"
      : `write amplification ${percentOf(rates.writeAmplification)} (${rates.unread} of ${rates.written} written tokens never read)`;
  return `cache: hit rate ${percentOf(rates.hitRate)} (${rates.read} of ${rates.input} prompt tokens read), ${writes}; ${BASIS_WORDS[rates.basis]}`;
}

/** One request's figures for its detail (`view --cost`): `cache: read 1152 of 1458 prompt tokens (79%), wrote 306, 0 never read; by our cache model`. */
export function requestCacheLine(rate: RequestCacheRate): string {
  const basis = rate.basis === "provider" ? "by the provider's usage" : "by our cache model";
  return `cache: read ${rate.read} of ${rate.input} prompt tokens (${percentOf(rate.hitRate)}), wrote ${rate.written}, ${rate.unread} never read; ${basis}`;
}
