/**
 * `diff <runA> <runB>`: what one configuration sends that the other does not, request by request.
 *
 * Requests are aligned by seq when both runs have as many; otherwise by user turn (the number of
 * user messages a loop request carries), then by position inside the turn, so one extra request
 * in a turn shifts nothing after it. Both runs are read as streams and only one user turn of each
 * is held at a time.
 */
import { changedToolKeys } from "../../capture/prefix.js";
import type { RecordSummary } from "../../capture/run-index.js";
import type { Part, RequestRecord } from "../../capture/types.js";
import type { PartedBody, RunSource } from "../load-run.js";
import { type PromptParts, PromptReader } from "../prompt-parts.js";
import { bodyFieldChanges, FIELDS_LISTED, type FieldChange, type FieldFilter, fieldFilter } from "./body-fields.js";
import { type DiffRecord, diffRecordProjector, shallowEqual } from "./diff-record.js";

/** The parts in cache order, as diffs list them. */
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
  /** Tools on both sides whose definitions differ, and in which keys (needs the wire bodies). */
  toolsChanged: { name: string; keys: string }[];
  /**
   * System lines only in B (added) or only in A (removed) (needs the wire bodies). Lines that differ
   * only by the probe's own name in a path (its workspace, `…/payload-probe/<probe>/cwd`) are not
   * listed but counted: two probes always run in two workspaces.
   */
  systemLines: { added: string[]; removed: string[]; workspaceOnly: number } | null;
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
  /**
   * Fields of the bodies outside tools, system and messages that differ, with both values (the first
   * FIELDS_LISTED; `moreFields` counts the rest); null when the bodies were not compared.
   */
  bodyFields: FieldChange[] | null;
  moreFields: number;
  /** Paths that differ but were set apart (`--ignore`); a pair that differs in those alone is `identical`. */
  ignoredFields: string[];
}

/**
 * A record, and when the run kept its wire body, a way to read that body's tools and system parts:
 * records say that a system prompt or a tool definition changed; only the bodies say which lines and
 * which keys.
 */
export interface DiffItem {
  record: DiffRecord;
  /** The body's tools and system parts, read part by part (prompt-parts.ts). */
  prompt: (() => PromptParts) | null;
  /** The wire body as stored (in parts where the run stored it so); null when the run kept none. */
  body: (() => string | PartedBody) | null;
}

/** How a diff compares bodies: field paths set apart as changing every run (`--ignore`). */
export interface DiffOptions {
  ignore?: string[];
}

export interface SideSummary {
  requests: number;
  tokens: number;
  bytes: number;
  /** How many loop requests' prefixes broke. */
  breakCount: number;
  /** The first of them (at most BREAKS_LISTED): seq, part, the phrase, the bytes still shared. */
  breaks: { seq: number; at: Part; detail: string; sharedBytes: number }[];
}

export interface DiffSummary {
  alignedBy: "seq" | "turn";
  a: SideSummary;
  b: SideSummary;
  /** Requests that differ, and the first of them. */
  differing: number;
  firstDivergence: { seqA: number | null; seqB: number | null; part: Part | "body" | "missing" } | null;
}

function pair(a: DiffRecord | null, b: DiffRecord | null, value: (r: DiffRecord) => number | null | undefined): Pair {
  return { a: a ? (value(a) ?? null) : null, b: b ? (value(b) ?? null) : null };
}

function divergence(a: DiffRecord, b: DiffRecord): Part | "body" | null {
  if (a.hashes.body === b.hashes.body) return null;
  if (a.hashes.tools !== b.hashes.tools) return "tools";
  if (a.hashes.system !== b.hashes.system) return "system";
  // Records hash no messages: the body differs elsewhere when messages agree in size and roles.
  if (a.bytes.messages !== b.bytes.messages || a.roles !== b.roles) return "messages";
  return "body";
}

/** Names in B's tool list that A's lacks (added), and the reverse (removed). */
type ToolsChange = (a: string[], b: string[]) => { added: string[]; removed: string[] };

/**
 * ToolsChange for the requests of one diff. Consecutive requests of a run share one list object
 * while their tools do not change (diffRecordProjector), so the last answer is kept — by the diff
 * that asked, so two diffs in one process never share it.
 */
function toolsChangeOfOneDiff(): ToolsChange {
  let last: { a: string[]; b: string[]; added: string[]; removed: string[] } | null = null;
  return (a, b) => {
    if (last?.a !== a || last.b !== b) last = { a, b, added: setDifference(b, a), removed: setDifference(a, b) };
    return last;
  };
}

function setDifference(from: string[], minus: string[]): string[] {
  const taken = new Set(minus);
  return from.filter((name) => !taken.has(name));
}

/** Lines of b missing from a, counted as a multiset so a repeated line is matched once per copy. */
function linesMissing(from: string[], minus: string[]): string[] {
  const left = new Map<string, number>();
  for (const line of minus) left.set(line, (left.get(line) ?? 0) + 1);
  return from.filter((line) => {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    return n === 0;
  });
}

/** What the bodies add to the records: which tool definitions changed, which system lines moved. */
function bodyDetail(a: DiffItem, b: DiffItem): Pick<RequestDiff, "toolsChanged" | "systemLines"> {
  const none = { toolsChanged: [], systemLines: null };
  const sameTools = a.record.hashes.tools === b.record.hashes.tools;
  const sameSystem = a.record.hashes.system === b.record.hashes.system;
  if ((sameTools && sameSystem) || !a.prompt || !b.prompt) return none;
  const da = a.prompt();
  const db = b.prompt();
  const jsonA = new Map(da.tools.map((t) => [t.name, t.json]));
  const toolsChanged = db.tools
    .filter((t) => jsonA.has(t.name) && jsonA.get(t.name) !== t.json)
    .map((t) => ({ name: t.name, keys: changedToolKeys(jsonA.get(t.name)!, t.json) }));
  return { toolsChanged, systemLines: sameSystem ? null : systemLineChanges(da, a.record.probe, db, b.record.probe) };
}

function systemLineChanges(
  da: PromptParts,
  probeA: string,
  db: PromptParts,
  probeB: string,
): NonNullable<RequestDiff["systemLines"]> {
  const linesA = da.systemParts.join("\n").split("\n");
  const linesB = db.systemParts.join("\n").split("\n");
  const added = linesMissing(linesB, linesA);
  const removed = linesMissing(linesA, linesB);
  const neutral = (probe: string) => (line: string) => line.split(`/${probe}/`).join("/<probe>/");
  const addedNeutral = added.map(neutral(probeB));
  const removedNeutral = removed.map(neutral(probeA));
  const realAdded = linesMissing(addedNeutral, removedNeutral);
  const realRemoved = linesMissing(removedNeutral, addedNeutral);
  return {
    added: added.filter((_, i) => realAdded.includes(addedNeutral[i]!)),
    removed: removed.filter((_, i) => realRemoved.includes(removedNeutral[i]!)),
    workspaceOnly: removed.length - realRemoved.length,
  };
}

/** The body fields of a pair whose bodies differ, when both were kept. */
function fieldsOf(a: DiffItem | null, b: DiffItem | null, ignore: FieldFilter) {
  if (!a?.body || !b?.body || a.record.hashes.body === b.record.hashes.body) return null;
  const { changes, ignored } = bodyFieldChanges(a.body(), b.body(), ignore);
  return { changes: changes.slice(0, FIELDS_LISTED), more: Math.max(0, changes.length - FIELDS_LISTED), ignored };
}

/** Which tools one side has that the other has not, and whether the same tools only moved. */
function toolsDiff(
  a: DiffRecord | null,
  b: DiffRecord | null,
  toolsChange: ToolsChange,
): Pick<RequestDiff, "toolsA" | "toolsB" | "toolsAdded" | "toolsRemoved" | "toolsReordered"> {
  const toolsA = a?.tools ?? [];
  const toolsB = b?.tools ?? [];
  // Equal lists (most pairs) need no set arithmetic.
  const sameTools = shallowEqual(toolsA, toolsB);
  const { added, removed } = a && b && !sameTools ? toolsChange(toolsA, toolsB) : { added: [], removed: [] };
  return {
    toolsA: a?.tools ?? null,
    toolsB: b?.tools ?? null,
    toolsAdded: added,
    toolsRemoved: removed,
    toolsReordered:
      !sameTools &&
      added.length === 0 &&
      removed.length === 0 &&
      toolsA.join() !== toolsB.join() &&
      a !== null &&
      b !== null,
  };
}

/** Both sides' sizes per part, in bytes and in tokens. */
function sizesDiff(a: DiffRecord | null, b: DiffRecord | null): Pick<RequestDiff, "bytes" | "tokens"> {
  return {
    bytes: {
      tools: pair(a, b, (r) => r.bytes.tools),
      system: pair(a, b, (r) => r.bytes.system),
      messages: pair(a, b, (r) => r.bytes.messages),
      body: pair(a, b, (r) => r.bytes.body),
    },
    tokens: {
      tools: pair(a, b, (r) => r.tokens?.tools),
      system: pair(a, b, (r) => r.tokens?.system),
      messages: pair(a, b, (r) => r.tokens?.messages),
      total: pair(a, b, (r) => r.tokens?.total),
    },
  };
}

/** The markers whose counts differ between the two sides (equal marker sets, most pairs, cost nothing). */
function markersDiff(a: DiffRecord | null, b: DiffRecord | null): RequestDiff["markers"] {
  if (!a || !b || shallowEqual(a.markers, b.markers)) return [];
  return markerNamesOf(a, b)
    .filter((name) => a.markers[name] !== b.markers[name])
    .map((name) => ({ name, a: a.markers[name] ?? null, b: b.markers[name] ?? null }));
}

function diffRequests(
  itemA: DiffItem | null,
  itemB: DiffItem | null,
  turn: number,
  toolsChange: ToolsChange,
  ignore: FieldFilter,
): RequestDiff {
  const a = itemA?.record ?? null;
  const b = itemB?.record ?? null;
  const fields = fieldsOf(itemA, itemB, ignore);
  const divergesIn = a && b ? divergence(a, b) : null;
  // Bodies that differ only in fields set apart read as identical, and the fields are named.
  const onlyIgnored =
    divergesIn === "body" && fields !== null && fields.changes.length === 0 && fields.ignored.length > 0;
  return {
    seqA: a?.seq ?? null,
    seqB: b?.seq ?? null,
    turn,
    identical: a !== null && b !== null && (a.hashes.body === b.hashes.body || onlyIgnored),
    ...toolsDiff(a, b, toolsChange),
    ...(itemA && itemB ? bodyDetail(itemA, itemB) : { toolsChanged: [], systemLines: null }),
    ...sizesDiff(a, b),
    roles: a && b && a.roles !== b.roles ? { a: a.roles, b: b.roles } : null,
    markers: markersDiff(a, b),
    prefixA: a?.prefixSummary ?? null,
    prefixB: b?.prefixSummary ?? null,
    breakA: a?.prefix ?? null,
    breakB: b?.prefix ?? null,
    divergesIn: onlyIgnored ? null : divergesIn,
    bodyFields: fields?.changes ?? null,
    moreFields: fields?.more ?? 0,
    ignoredFields: fields?.ignored ?? [],
  };
}

function markerNamesOf(a: DiffRecord, b: DiffRecord): string[] {
  return [...new Set([...Object.keys(a.markers), ...Object.keys(b.markers)])];
}

/** The user turn a request belongs to; a sampling or side request belongs to the turn it interrupts. */
function turnTracker(): (item: DiffItem) => number {
  let current = 0;
  return ({ record: r }) => {
    if (r.kind === "loop") current = r.userMessages;
    return current;
  };
}

interface Turn {
  turn: number;
  records: DiffItem[];
}

/** Consecutive records of one user turn, one group at a time. */
function* turns(records: Iterable<DiffItem>): Generator<Turn> {
  const turnOf = turnTracker();
  let group: Turn | null = null;
  for (const record of records) {
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

function* bySeq(a: Iterable<DiffItem>, b: Iterable<DiffItem>): Generator<[DiffItem | null, DiffItem | null, number]> {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  const turnOf = turnTracker();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done && y.done) return;
    const ra = x.done ? null : x.value;
    const rb = y.done ? null : y.value;
    yield [ra, rb, turnOf((ra ?? rb)!)];
  }
}

function* byTurn(a: Iterable<DiffItem>, b: Iterable<DiffItem>): Generator<[DiffItem | null, DiffItem | null, number]> {
  const ta = turns(a);
  const tb = turns(b);
  let x = ta.next();
  let y = tb.next();
  while (!x.done || !y.done) {
    // The side whose next turn comes first has no counterpart for it.
    const turn = Math.min(x.done ? Infinity : x.value.turn, y.done ? Infinity : y.value.turn);
    const ga = !x.done && x.value.turn === turn ? x.value.records : [];
    const gb = !y.done && y.value.turn === turn ? y.value.records : [];
    for (let i = 0; i < Math.max(ga.length, gb.length); i++) yield [ga[i] ?? null, gb[i] ?? null, turn];
    if (ga.length > 0) x = ta.next();
    if (gb.length > 0) y = tb.next();
  }
}

/** A summary stays a summary: a long run lists its first breaks and counts the rest. */
const BREAKS_LISTED = 20;

function emptySide(): SideSummary {
  return { requests: 0, tokens: 0, bytes: 0, breakCount: 0, breaks: [] };
}

function tally(side: SideSummary, item: DiffItem | null): void {
  if (!item) return;
  const r = item.record;
  side.requests++;
  side.tokens += r.tokens?.total ?? 0;
  side.bytes += r.bytes.body;
  if (!r.prefix?.breakAt) return;
  side.breakCount++;
  if (side.breaks.length < BREAKS_LISTED)
    side.breaks.push({
      seq: r.seq,
      at: r.prefix.breakAt,
      detail: r.prefix.breakDetail ?? "",
      sharedBytes: r.prefix.sharedBytes,
    });
}

/** What a caller does with each side's summaries on their way into the diff (diff prices them). */
export type SummaryTap = (summaries: Iterable<RecordSummary>) => Iterable<RecordSummary>;

/**
 * Two runs diffed as `diff` and `view --diff` show them: bodies compared only when both runs kept
 * them. `taps` see each side's summaries as the diff reads them, so nothing else need read them again.
 */
export function diffSources(
  a: RunSource,
  b: RunSource,
  taps?: readonly [SummaryTap, SummaryTap],
  options: DiffOptions = {},
): Generator<RequestDiff, DiffSummary> {
  const bodies = a.hasPayloads && b.hasPayloads;
  const counts = { a: a.count(), b: b.count() };
  return diffRuns(diffItems(a, bodies, taps?.[0]), diffItems(b, bodies, taps?.[1]), counts, options);
}

/**
 * Every aligned pair as it is read, then the summary. `counts` (the number of requests of each run)
 * decides the alignment before anything is read.
 */
export function* diffRuns(
  a: Iterable<DiffItem>,
  b: Iterable<DiffItem>,
  counts: { a: number; b: number },
  options: DiffOptions = {},
): Generator<RequestDiff, DiffSummary> {
  const ignore = fieldFilter(options.ignore ?? []);
  const alignedBy = counts.a === counts.b ? "seq" : "turn";
  const summary: DiffSummary = { alignedBy, a: emptySide(), b: emptySide(), differing: 0, firstDivergence: null };
  const toolsChange = toolsChangeOfOneDiff();
  for (const [ra, rb, turn] of alignedBy === "seq" ? bySeq(a, b) : byTurn(a, b)) {
    tally(summary.a, ra);
    tally(summary.b, rb);
    const d = diffRequests(ra, rb, turn, toolsChange, ignore);
    if (!d.identical) {
      summary.differing++;
      summary.firstDivergence ??= { seqA: d.seqA, seqB: d.seqB, part: d.divergesIn ?? "missing" };
    }
    yield d;
  }
  return summary;
}

/**
 * A run's records, each with its wire body when asked for (both runs kept their bodies: one side's
 * alone explains nothing, and reading a long run's bodies costs more than its records). A body is
 * parsed and taken apart only when a pair needs it (the two sides' system prompts or tools differ).
 */
export function diffItems(source: RunSource, withBodies: boolean, tap?: SummaryTap): Iterable<DiffItem> {
  return withItems(projected(tap ? tap(source.summaries()) : source.summaries()), source, withBodies);
}

function* projected(summaries: Iterable<RecordSummary>): Generator<DiffRecord> {
  const project = diffRecordProjector();
  for (const record of summaries) yield project(record);
}

function* withItems(records: Iterable<DiffRecord>, source: RunSource, withBodies: boolean): Iterable<DiffItem> {
  if (!withBodies) {
    for (const record of records) yield { record, prompt: null, body: null };
    return;
  }
  // One reader per run: a prompt element the run sends again is read once.
  const prompts = new PromptReader();
  const payloads = source.lazyPayloads()[Symbol.iterator]();
  let payload = payloads.next();
  for (const record of records) {
    while (!payload.done && payload.value.seq < record.seq) payload = payloads.next();
    const found = !payload.done && payload.value.seq === record.seq ? payload.value : null;
    yield {
      record,
      prompt: found
        ? () => {
            const { api, body } = found.stored();
            // Only unrecorded side payloads lack an api, and this one has a record.
            return prompts.of(api!, body, () => found.load().body);
          }
        : null,
      body: found ? () => found.stored().body : null,
    };
  }
}
