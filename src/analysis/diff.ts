/**
 * `diff <runA> <runB>`: what one configuration sends that the other does not, request by request.
 *
 * Requests are aligned by seq when both runs have as many; otherwise by user turn (the number of
 * user messages a loop request carries), then by position inside the turn, so one extra request
 * in a turn shifts nothing after it. Both runs are read as streams and only one user turn of each
 * is held at a time.
 */
import type { RequestRecord } from "../capture/types.js";
import { partSizes, prefixSummary } from "./format.js";

export type Part = "tools" | "system" | "messages";
export const PARTS: Part[] = ["tools", "system", "messages"];

/** A number on each side; null where a side has no request at this position. */
export interface Pair {
  a: number | null;
  b: number | null;
}

export interface RequestDiff {
  /** seq on each side (aligned by seq both are equal). */
  seqA: number | null;
  seqB: number | null;
  /** The user turn both requests belong to (1-based). */
  turn: number;
  identical: boolean;
  toolsA: string[] | null;
  toolsB: string[] | null;
  /** Names in B's tools that A's lacks, and the reverse. */
  toolsAdded: string[];
  toolsRemoved: string[];
  /** Same names, other order. */
  toolsReordered: boolean;
  bytes: Record<Part | "body", Pair>;
  tokens: Record<Part | "total", Pair>;
  /** Set when the roles differ. */
  roles: { a: string; b: string } | null;
  /** Markers whose counts differ. */
  markers: { name: string; a: number | null; b: number | null }[];
  /** Each side's prefix against its own previous loop request. */
  prefixA: string | null;
  prefixB: string | null;
  breakA: RequestRecord["prefix"];
  breakB: RequestRecord["prefix"];
  /** The first part, in cache order, where the two requests differ. */
  divergesIn: Part | "body" | null;
}

export interface SideSummary {
  requests: number;
  tokens: number;
  bytes: number;
  /** Loop requests whose prefix broke: seq, part and the phrase. */
  breaks: { seq: number; at: Part; detail: string }[];
}

export interface DiffSummary {
  alignedBy: "seq" | "turn";
  a: SideSummary;
  b: SideSummary;
  /** Requests that differ, and the first of them. */
  differing: number;
  firstDivergence: { seqA: number | null; seqB: number | null; part: Part | "body" | "missing" } | null;
}

function pair(a: RequestRecord | null, b: RequestRecord | null, value: (r: RequestRecord) => number | null | undefined): Pair {
  return { a: a ? (value(a) ?? null) : null, b: b ? (value(b) ?? null) : null };
}

function divergence(a: RequestRecord, b: RequestRecord): Part | "body" | null {
  if (a.hashes.body === b.hashes.body) return null;
  if (a.hashes.tools !== b.hashes.tools) return "tools";
  if (a.hashes.system !== b.hashes.system) return "system";
  // Records hash no messages: the body differs elsewhere when messages agree in size and roles.
  if (a.messagesBytes !== b.messagesBytes || a.roles.join(">") !== b.roles.join(">")) return "messages";
  return "body";
}

function setDifference(from: string[], minus: string[]): string[] {
  const taken = new Set(minus);
  return from.filter((name) => !taken.has(name));
}

export function diffRequests(a: RequestRecord | null, b: RequestRecord | null, turn: number): RequestDiff {
  const toolsA = a?.tools ?? [];
  const toolsB = b?.tools ?? [];
  const toolsAdded = a && b ? setDifference(toolsB, toolsA) : [];
  const toolsRemoved = a && b ? setDifference(toolsA, toolsB) : [];
  const markerNames = [...new Set([...Object.keys(a?.markers ?? {}), ...Object.keys(b?.markers ?? {})])];
  const bytes = (r: RequestRecord) => partSizes(r, "bytes");
  return {
    seqA: a?.seq ?? null,
    seqB: b?.seq ?? null,
    turn,
    identical: a !== null && b !== null && a.hashes.body === b.hashes.body,
    toolsA: a?.tools ?? null,
    toolsB: b?.tools ?? null,
    toolsAdded,
    toolsRemoved,
    toolsReordered: toolsAdded.length === 0 && toolsRemoved.length === 0 && toolsA.join() !== toolsB.join() && a !== null && b !== null,
    bytes: {
      tools: pair(a, b, (r) => bytes(r).tools),
      system: pair(a, b, (r) => bytes(r).system),
      messages: pair(a, b, (r) => bytes(r).messages),
      body: pair(a, b, (r) => bytes(r).body),
    },
    tokens: {
      tools: pair(a, b, (r) => r.tokens?.tools),
      system: pair(a, b, (r) => r.tokens?.system),
      messages: pair(a, b, (r) => r.tokens?.messages),
      total: pair(a, b, (r) => r.tokens?.total),
    },
    roles: a && b && a.roles.join(">") !== b.roles.join(">") ? { a: a.roles.join(">"), b: b.roles.join(">") } : null,
    markers: a && b
      ? markerNames.filter((name) => a.markers[name] !== b.markers[name]).map((name) => ({ name, a: a.markers[name] ?? null, b: b.markers[name] ?? null }))
      : [],
    prefixA: a ? prefixSummary(a) : null,
    prefixB: b ? prefixSummary(b) : null,
    breakA: a?.prefix ?? null,
    breakB: b?.prefix ?? null,
    divergesIn: a && b ? divergence(a, b) : null,
  };
}

/** The user turn a request belongs to; a sampling or side request belongs to the turn it interrupts. */
function turnTracker(): (r: RequestRecord) => number {
  let current = 0;
  return (r) => {
    if (r.kind === "loop") current = r.roles.filter((role) => role === "user").length;
    return current;
  };
}

interface Turn {
  turn: number;
  records: RequestRecord[];
}

/** Consecutive records of one user turn, one group at a time. */
async function* turns(records: AsyncIterable<RequestRecord>): AsyncGenerator<Turn> {
  const turnOf = turnTracker();
  let group: Turn | null = null;
  for await (const record of records) {
    const turn = turnOf(record);
    if (group && group.turn !== turn) {
      yield group;
      group = null;
    }
    group ??= { turn, records: [] };
    group.records.push(record);
  }
  if (group) yield group;
}

async function* bySeq(a: AsyncIterable<RequestRecord>, b: AsyncIterable<RequestRecord>): AsyncGenerator<[RequestRecord | null, RequestRecord | null, number]> {
  const ia = a[Symbol.asyncIterator]();
  const ib = b[Symbol.asyncIterator]();
  const turnOf = turnTracker();
  for (;;) {
    const [x, y] = await Promise.all([ia.next(), ib.next()]);
    if (x.done && y.done) return;
    const ra = x.done ? null : x.value;
    const rb = y.done ? null : y.value;
    yield [ra, rb, turnOf((ra ?? rb)!)];
  }
}

async function* byTurn(a: AsyncIterable<RequestRecord>, b: AsyncIterable<RequestRecord>): AsyncGenerator<[RequestRecord | null, RequestRecord | null, number]> {
  const ta = turns(a);
  const tb = turns(b);
  let x = await ta.next();
  let y = await tb.next();
  while (!x.done || !y.done) {
    // The side whose next turn comes first has no counterpart for it.
    const turn = Math.min(x.done ? Infinity : x.value.turn, y.done ? Infinity : y.value.turn);
    const ga = !x.done && x.value.turn === turn ? x.value.records : [];
    const gb = !y.done && y.value.turn === turn ? y.value.records : [];
    for (let i = 0; i < Math.max(ga.length, gb.length); i++) yield [ga[i] ?? null, gb[i] ?? null, turn];
    if (ga.length > 0) x = await ta.next();
    if (gb.length > 0) y = await tb.next();
  }
}

function emptySide(): SideSummary {
  return { requests: 0, tokens: 0, bytes: 0, breaks: [] };
}

function tally(side: SideSummary, r: RequestRecord | null): void {
  if (!r) return;
  side.requests++;
  side.tokens += r.tokens?.total ?? 0;
  side.bytes += r.bodyBytes;
  if (r.prefix?.breakAt) side.breaks.push({ seq: r.seq, at: r.prefix.breakAt, detail: r.prefix.breakDetail ?? "" });
}

/**
 * Every aligned pair as it is read, then the summary. `counts` (the number of requests of each run)
 * decides the alignment before anything is read.
 */
export async function* diffRuns(
  a: AsyncIterable<RequestRecord>,
  b: AsyncIterable<RequestRecord>,
  counts: { a: number; b: number },
): AsyncGenerator<RequestDiff, DiffSummary> {
  const alignedBy = counts.a === counts.b ? "seq" : "turn";
  const summary: DiffSummary = { alignedBy, a: emptySide(), b: emptySide(), differing: 0, firstDivergence: null };
  for await (const [ra, rb, turn] of alignedBy === "seq" ? bySeq(a, b) : byTurn(a, b)) {
    tally(summary.a, ra);
    tally(summary.b, rb);
    const d = diffRequests(ra, rb, turn);
    if (!d.identical) {
      summary.differing++;
      summary.firstDivergence ??= { seqA: d.seqA, seqB: d.seqB, part: d.divergesIn ?? "missing" };
    }
    yield d;
  }
  return summary;
}
