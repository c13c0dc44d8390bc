/**
 * Finds a captured run and reads it back one request at a time.
 *
 * `<run>` is a run folder (`runs/p1`, or a probe name whose folder is under runs/), a run id from
 * runs/payload-probe.db, or `<probe>@N` — the N-th latest run of a probe (`@1` the latest). A run
 * folder is streamed line by line (src/files/jsonl.ts), so a report or diff of a long run holds one
 * request (one user turn, for a diff) at a time, never the whole file. Reading is synchronous: a
 * CLI command has nothing else to do meanwhile, and an async hop per row would cost more than the
 * analysis of the row. A run that is only in the database — its
 * folder was replaced by a later run of the same probe — is read from the database.
 *
 * A run that crashed may have a torn last line in its files: what is whole is read, and the lookup's
 * `warn` is told once per file.
 */
import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isPartedRow, PART_HEAD, partedLists, type StoredPart, wholeRow } from "../capture/payload-rows.js";
import { firstRunId } from "../capture/run-folder.js";
import { runDatabasePath, runFiles } from "../capture/run-format.js";
import type { RecordSummary } from "../capture/run-index.js";
import { RunDatabaseReader } from "../capture/sqlite.js";
import type { AgentEventRow, RequestRecord } from "../capture/types.js";
import { inputError, StorageError, UserError } from "../errors.js";
import { type JsonlReadOptions, jsonlLines, parseJsonlLine } from "../files/jsonl.js";
import { isRunName } from "../files/safe-path.js";
import type { WireRequest } from "../providers/types.js";
import { printable } from "../text/terminal-text.js";
import { eventLines, recordLines } from "./record-file.js";
import { countSummaries, summaryLines } from "./record-summaries.js";

/** A request's wire body as payloads.jsonl keeps it. */
export interface RequestPayload {
  seq: number;
  kind: WireRequest["kind"];
  /** null for a request no codec reads (a path the capture proxy passed through as `side`). */
  api: WireRequest["api"] | null;
  body: string;
  /** Where it went (redacted as stored) and, for a body the capture could not read, why. */
  url?: string;
  unreadable?: string;
}

/** A response as payloads.jsonl keeps it: the body as it arrived (an SSE stream or one JSON body). */
export interface ResponsePayload {
  seq: number;
  body: string;
  /** How a body that is not UTF-8 text was stored (capture/body-encoding.ts). */
  encoding?: string;
}

export interface LazyPayload {
  seq: number;
  load(): RequestPayload;
  /**
   * The body as stored, never joined: in parts (its skeleton, its parts' hashes, each part's text by
   * hash) where it was stored so, else whole. A reader that derives something from each part keeps
   * it by the part's hash and so works once per distinct part of the run, not once per body; the
   * whole body's hash is checked only by `load`.
   */
  stored(): StoredRequest;
}

/** A request body as payloads.jsonl keeps it: parts (payload-rows.ts) and the text between them. */
export interface PartedBody {
  skeleton: string[];
  parts: string[];
  partText(hash: string): string;
}

export interface StoredRequest {
  api: RequestPayload["api"];
  kind: RequestPayload["kind"];
  body: string | PartedBody;
}

export interface RunSource {
  /** How the run is named in output: the folder, or the run id. */
  label: string;
  records(): Iterable<RequestRecord>;
  /**
   * What report, diff and the cost model read of each record, in the same order: a run folder's
   * index serves it without parsing the records (record-summaries.ts); elsewhere it is the records.
   */
  summaries(): Iterable<RecordSummary>;
  /** How many requests the run has, known before its records are read. */
  count(): number;
  /** The wire body of every request, in seq order (responses skipped). */
  payloads(): Iterable<RequestPayload>;
  /** The same, each body parsed only if asked for: a diff needs few of them and they are large. */
  lazyPayloads(): Iterable<LazyPayload>;
  /**
   * One stored payload row of request `seq`: its wire body, or the response's as it arrived; null when
   * the run has none. Reads that row alone (`show`, `view` of one request), never the run.
   */
  payload(seq: number, type: "request"): RequestPayload | null;
  payload(seq: number, type: "response"): ResponsePayload | null;
  /** Every stored response, in the order stored (a view shows each request's reply); absent for a baseline. */
  responses?(): Iterable<ResponsePayload>;
  /** The agent's events between requests (tool calls and results…), in the order they were logged. */
  events(): Iterable<AgentEventRow>;
  /** The requests.jsonl a run folder is read from; null for a run read from the database. */
  recordsFile: string | null;
  /** Whether the run kept its wire bodies (a run folder may hold only requests.jsonl). */
  hasPayloads: boolean;
  /**
   * Requests the run relayed but never recorded: its row's `lost` column, set when a server's capture
   * could not write them before it stopped (capture-thread.ts). 0 without a database; absent for a baseline.
   */
  lost?(): number;
}

export interface RunLookup {
  /** Where run folders and payload-probe.db live (default `runs/` of the project). */
  runsDir: string;
  /** Told what was read with a caveat (a torn last line); default: nothing is said. */
  warn?: (message: string) => void;
}

/** How report and diff say it: a line on stderr, so stdout stays the output alone. */
export function warnOnStderr(message: string): void {
  process.stderr.write(`${printable(message, { lines: true })}\n`);
}

const PROBE_AT = /^(.+)@(\d+)$/;

export function resolveRun(spec: string, lookup: RunLookup): RunSource {
  if (spec.includes("\0")) throw new UserError(`run ${JSON.stringify(spec)}: expected no NUL character`);
  const at = PROBE_AT.exec(spec);
  if (at) return nthLatestRun(at[1]!, Number(at[2]), lookup);
  // A name is looked up under the runs folder only when it is a run name, so `..` never reaches out of it.
  const candidates = isRunName(spec) ? [resolve(spec), join(lookup.runsDir, spec)] : [resolve(spec)];
  for (const dir of candidates) {
    if (isRunFolder(dir)) return folderSource(dir, lookup);
  }
  if (fromDatabaseIfAny(lookup, (db) => db.recordsOf(spec).length > 0, false)) return databaseSource(spec, lookup);
  throw new UserError(
    `no run "${spec}": expected a run folder (with requests.jsonl), a run id in ${databasePath(lookup)}, or <probe>@N`,
  );
}

function nthLatestRun(probe: string, n: number, lookup: RunLookup): RunSource {
  const runs = fromDatabaseIfAny(lookup, (db) => db.runsOf(probe), []);
  const run = n >= 1 ? runs[n - 1] : undefined;
  if (!run)
    throw new UserError(
      `no run ${probe}@${n}: ${databasePath(lookup)} holds ${runs.length} run(s) of probe "${probe}"`,
    );
  // The folder holds only the latest run of its probe; an older run is read from the database.
  if (run.dir && isRunFolder(run.dir) && firstRunId(run.dir) === run.id) return folderSource(run.dir, lookup);
  return databaseSource(run.id, lookup);
}

function isRunFolder(dir: string): boolean {
  return existsSync(runFiles(dir).requests) && statSync(dir).isDirectory();
}

function databasePath(lookup: RunLookup): string {
  return runDatabasePath(lookup.runsDir);
}

/**
 * What `read` makes of the run database, or `none` where there is none: a lookup never creates one (in
 * a folder without it, it simply finds nothing) and never writes to it (a read-only connection reads
 * on a read-only filesystem and beside a writer).
 */
function fromDatabaseIfAny<T>(lookup: RunLookup, read: (db: RunDatabaseReader) => T, none: T): T {
  return existsSync(databasePath(lookup)) ? fromDatabase(lookup, read) : none;
}

/** A run folder read as it is now: each read of `records()` or `payloads()` reads the files again. */
export function folderSource(dir: string, lookup: RunLookup): RunSource {
  const files = runFiles(dir);
  const { requests, payloads, events } = files;
  const torn = tornLineWarning(lookup);
  return {
    label: dir,
    count: () => countSummaries(files),
    recordsFile: requests,
    records: () => recordLines(requests, torn(requests)),
    summaries: () => summaryLines(files, torn(requests)),
    payloads: () => loadEach(lazyPayloadLines(payloads, torn(payloads))),
    lazyPayloads: () => lazyPayloadLines(payloads, torn(payloads)),
    events: () => eventLines(events, torn(events)),
    payload: ((seq: number, type: StoredPayload["type"]) =>
      existsSync(payloads) ? payloadRow(payloads, seq, type) : null) as RunSource["payload"],
    responses: () => (existsSync(payloads) ? responseLines(payloads, torn(payloads)) : []),
    hasPayloads: existsSync(payloads),
    lost() {
      const id = firstRunId(dir);
      try {
        return lostOf(lookup, id === null ? { folder: dir } : { id });
      } catch (error) {
        // A folder reads without the database (the way out the database's own error names): its losses are then unknown.
        if (error instanceof StorageError) return 0;
        throw error;
      }
    },
  };
}

/** Says once per file of a run that its last line was cut off, however often the file is read. */
function tornLineWarning(lookup: RunLookup): (path: string) => JsonlReadOptions {
  const warned = new Set<string>();
  return (path) => ({
    onTornLine: (n) => {
      if (warned.has(path)) return;
      warned.add(path);
      lookup.warn?.(`${path}: line ${n} is cut off (the run stopped while writing it); read the lines before it`);
    },
  });
}

/** A run's row, found by its id, or as the latest row of a folder's probe written to that folder. */
type RunRowKey = { id: string } | { folder: string };

/**
 * The `lost` column of a run's row (a folder with no record to name its run is looked up by where it
 * was written). Read-only, and 0 from a database older than the column.
 */
function lostOf(lookup: RunLookup, key: RunRowKey): number {
  return fromDatabaseIfAny(
    lookup,
    (db) => db.lostOf("id" in key ? key : { probe: basename(key.folder), dir: key.folder }),
    0,
  );
}

/** What `read` makes of the run database, on a connection of its own, closed after. */
function fromDatabase<T>(lookup: RunLookup, read: (db: RunDatabaseReader) => T): T {
  const db = RunDatabaseReader.open(databasePath(lookup));
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The rows `read` streams from the run database, its connection open until the last is read (or the reader stops). */
function* streamedFromDatabase<T>(lookup: RunLookup, read: (db: RunDatabaseReader) => Iterable<T>): Generator<T> {
  const db = RunDatabaseReader.open(databasePath(lookup));
  try {
    yield* read(db);
  } finally {
    db.close();
  }
}

function databaseSource(runId: string, lookup: RunLookup): RunSource {
  return {
    label: runId,
    recordsFile: null,
    hasPayloads: true,
    lost: () => lostOf(lookup, { id: runId }),
    count: () => fromDatabase(lookup, (db) => db.recordsOf(runId).length),
    records: () => streamedFromDatabase(lookup, (db) => db.recordsOf(runId)),
    summaries() {
      return this.records();
    },
    payload: ((seq: number, type: StoredPayload["type"]) => {
      return fromDatabase(lookup, (db) => {
        const data = db.payloadOf(runId, seq, type);
        return data === null ? null : databaseRow(db, runId, data);
      });
    }) as RunSource["payload"],
    *lazyPayloads() {
      for (const payload of this.payloads())
        yield {
          seq: payload.seq,
          load: () => payload,
          stored: () => ({ api: payload.api, kind: payload.kind, body: payload.body }),
        };
    },
    events: () => fromDatabase(lookup, (db) => db.eventsOf(runId)),
    *payloads() {
      // Parts are read on a connection of their own: the rows' statement keeps the other one busy.
      const parts = RunDatabaseReader.open(databasePath(lookup));
      try {
        for (const data of streamedFromDatabase(lookup, (db) => db.requestPayloadsOf(runId)))
          yield databaseRow(parts, runId, data) as RequestPayload;
      } finally {
        parts.close();
      }
    },
    *responses() {
      // Read to the end before the connection closes: a statement still iterating keeps it busy.
      for (const data of fromDatabase(lookup, (db) => [...db.payloadsOf(runId, "response")]))
        yield JSON.parse(data) as ResponsePayload;
    },
  };
}

type StoredPayload = (RequestPayload | ResponsePayload) & { type: "request" | "response" };

/**
 * A payload row of the database whole, its body joined from the run's parts (read through `parts`, a
 * connection free to query) where it was stored in parts.
 */
function databaseRow(parts: RunDatabaseReader, runId: string, data: string): StoredPayload {
  const row = JSON.parse(data) as StoredPayload;
  return wholeRow(
    row,
    (hash) => parts.partOf(runId, hash),
    (what) => new StorageError(`${parts.path}: run ${runId}, request ${row.seq}: ${what}`, parts.path),
  );
}

/**
 * The texts of the body parts a payloads file has stored so far (payload-rows.ts), gathered as its
 * lines go by: a parted body names only parts stored before it. They are what the run's requests hold
 * once each, the size of its longest conversation, not of every body.
 */
class FileParts {
  private readonly texts = new Map<string, string>();

  constructor(private readonly path: string) {}

  /** Keeps the part a line holds; false for a line that is no part row. */
  take(n: number, line: string): boolean {
    if (!PART_HEAD.test(line)) return false;
    const row = parseJsonlLine(this.path, n, line) as Partial<StoredPart>;
    if (typeof row.hash !== "string" || typeof row.text !== "string")
      throw inputError(this.path, `line ${n}`, "expected a part row with a hash and a text");
    this.texts.set(row.hash, row.text);
    return true;
  }

  /**
   * The body of line `n`'s row as stored: its whole lists (its chunks' and its own), its parts'
   * texts looked up here, never joined.
   */
  stored(n: number, row: RequestPayload): StoredRequest {
    if (!isPartedRow(row)) return { api: row.api, kind: row.kind, body: row.body };
    const { skeleton, parts } = partedLists(
      row,
      (hash) => this.texts.get(hash),
      (what) => inputError(this.path, `line ${n}`, what),
    );
    const partText = (hash: string) => {
      const text = this.texts.get(hash);
      if (text === undefined) throw inputError(this.path, `line ${n}`, `part ${hash} of its body is not in the run`);
      return text;
    };
    return { api: row.api, kind: row.kind, body: { skeleton, parts, partText } };
  }

  /** The row of line `n` whole, its body joined from its parts where it was stored in parts. */
  whole<T extends object>(n: number, row: T): T {
    return wholeRow(
      row,
      (hash) => this.texts.get(hash),
      (what) => inputError(this.path, `line ${n}`, what),
    );
  }
}

/** The row of `type` for `seq` in a payloads file, its line parsed only when its head matches (or has none). */
function payloadRow(path: string, seq: number, type: StoredPayload["type"]): StoredPayload | null {
  const parts = new FileParts(path);
  for (const { n, line } of jsonlLines(path)) {
    if (parts.take(n, line)) continue;
    const head = PAYLOAD_HEAD.exec(line);
    if (head && (head[1] !== type || Number(head[2]) !== seq)) continue;
    const row = parseJsonlLine(path, n, line);
    if (!isPayload(row)) throw inputError(path, `line ${n}`, "expected a payload row");
    if (row.type === type && row.seq === seq) return parts.whole(n, row);
  }
  return null;
}

function* loadEach(payloads: Iterable<LazyPayload>): Iterable<RequestPayload> {
  for (const payload of payloads) yield payload.load();
}

/** The capture writes `{"type":…,"seq":N,` first, so a row's type and seq are read without parsing its body. */
const PAYLOAD_HEAD = /^\{"type":"(request|response)","seq":(\d+),/;

function* responseLines(path: string, options: JsonlReadOptions): Iterable<ResponsePayload> {
  for (const { n, line } of jsonlLines(path, options)) {
    if (PART_HEAD.test(line)) continue;
    const head = PAYLOAD_HEAD.exec(line);
    if (head && head[1] !== "response") continue;
    const row = parseJsonlLine(path, n, line);
    if (!isPayload(row)) throw inputError(path, `line ${n}`, "expected a payload row");
    if (row.type === "response") yield row;
  }
}

function* lazyPayloadLines(path: string, options: JsonlReadOptions): Iterable<LazyPayload> {
  const parts = new FileParts(path);
  for (const { n, line } of jsonlLines(path, options)) {
    if (parts.take(n, line)) continue;
    // A request row is read only where the row says it is one.
    const read = () => {
      const value = parseJsonlLine(path, n, line);
      if (!isPayload(value)) throw inputError(path, `line ${n}`, "expected a payload row");
      return value as RequestPayload & { type: StoredPayload["type"] };
    };
    const head = PAYLOAD_HEAD.exec(line);
    if (head) {
      if (head[1] === "request")
        yield { seq: Number(head[2]), load: () => parts.whole(n, read()), stored: () => parts.stored(n, read()) };
      continue;
    }
    const row = read();
    if (row.type === "request")
      yield { seq: row.seq, load: () => parts.whole(n, row), stored: () => parts.stored(n, row) };
  }
}

function isPayload(value: unknown): value is StoredPayload {
  const p = value as StoredPayload;
  return (
    typeof p === "object" &&
    p !== null &&
    typeof p.seq === "number" &&
    (p.type === "response" || typeof p.body === "string" || isPartedRow(p))
  );
}

/** Payloads by seq, read in step with the records (both files are in seq order). */
export function payloadCursor(source: RunSource): { payloadOf(seq: number): LazyPayload | null } {
  const iterator: Iterator<LazyPayload> | null = source.hasPayloads ? source.lazyPayloads()[Symbol.iterator]() : null;
  let current: LazyPayload | null = null;
  return {
    payloadOf(seq) {
      if (!iterator) return null;
      while (current === null || current.seq < seq) {
        const next = iterator.next();
        if (next.done) return null;
        current = next.value;
      }
      return current.seq === seq ? current : null;
    },
  };
}
