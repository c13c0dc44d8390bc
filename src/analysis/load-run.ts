/**
 * Finds a captured run and reads it back one request at a time.
 *
 * `<run>` is a run folder (`runs/p1`, or a probe name whose folder is under runs/), a run id from
 * runs/payload-probe.db, or `<probe>@N` — the N-th latest run of a probe (`@1` the latest). A run
 * folder is streamed line by line (file-lines.ts), so a report or diff of a long run holds one
 * request (one user turn, for a diff) at a time, never the whole file. Reading is synchronous: a
 * CLI command has nothing else to do meanwhile, and an async hop per row would cost more than the
 * analysis of the row. A run that is only in the database — its
 * folder was replaced by a later run of the same probe — is read from the database.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { parseJsonlLine } from "../capture/jsonl.js";
import { RunDatabase } from "../capture/sqlite.js";
import type { RequestRecord } from "../capture/types.js";
import { inputError, UserError } from "../errors.js";
import type { WireRequest } from "../providers/types.js";
import { isSafeName } from "../safe-path.js";
import { countLines, fileLines } from "./file-lines.js";
import { recordLines } from "./record-file.js";

/** A request's wire body as payloads.jsonl keeps it. */
export interface RequestPayload {
  seq: number;
  kind: WireRequest["kind"];
  /** null for a request no codec reads (a path the capture proxy passed through as `side`). */
  api: WireRequest["api"] | null;
  body: string;
}

export interface LazyPayload {
  seq: number;
  load(): RequestPayload;
}

export interface RunSource {
  /** How the run is named in output: the folder, or the run id. */
  label: string;
  records(): Iterable<RequestRecord>;
  /** How many requests the run has, known before its records are read. */
  count(): number;
  /** The wire body of every request, in seq order (responses skipped). */
  payloads(): Iterable<RequestPayload>;
  /** The same, each body parsed only if asked for: a diff needs few of them and they are large. */
  lazyPayloads(): Iterable<LazyPayload>;
  /** The requests.jsonl a run folder is read from; null for a run read from the database. */
  recordsFile: string | null;
  /** Whether the run kept its wire bodies (a run folder may hold only requests.jsonl). */
  hasPayloads: boolean;
}

export interface RunLookup {
  /** Where run folders and payload-probe.db live (default `runs/` of the project). */
  runsDir: string;
}

const PROBE_AT = /^(.+)@(\d+)$/;

export function resolveRun(spec: string, lookup: RunLookup): RunSource {
  if (spec.includes("\0")) throw new UserError(`run ${JSON.stringify(spec)}: expected no NUL character`);
  const at = PROBE_AT.exec(spec);
  if (at) return nthLatestRun(at[1]!, Number(at[2]), lookup);
  // A name is looked up under the runs folder only when it is a run name, so `..` never reaches out of it.
  const candidates = isSafeName(spec) ? [resolve(spec), join(lookup.runsDir, spec)] : [resolve(spec)];
  for (const dir of candidates) {
    if (isRunFolder(dir)) return folderSource(dir);
  }
  const db = openDatabase(lookup);
  if (db) {
    const records = db.recordsOf(spec);
    db.close();
    if (records.length > 0) return databaseSource(spec, lookup);
  }
  throw new UserError(
    `no run "${spec}": expected a run folder (with requests.jsonl), a run id in ${databasePath(lookup)}, or <probe>@N`,
  );
}

function nthLatestRun(probe: string, n: number, lookup: RunLookup): RunSource {
  const db = openDatabase(lookup);
  const runs = db?.runsOf(probe) ?? [];
  db?.close();
  const run = n >= 1 ? runs[n - 1] : undefined;
  if (!run)
    throw new UserError(
      `no run ${probe}@${n}: ${databasePath(lookup)} holds ${runs.length} run(s) of probe "${probe}"`,
    );
  // The folder holds only the latest run of its probe; an older run is read from the database.
  if (run.dir && isRunFolder(run.dir) && firstRunId(run.dir) === run.id) return folderSource(run.dir);
  return databaseSource(run.id, lookup);
}

function isRunFolder(dir: string): boolean {
  return existsSync(join(dir, "requests.jsonl")) && statSync(dir).isDirectory();
}

function databasePath(lookup: RunLookup): string {
  return join(lookup.runsDir, "payload-probe.db");
}

/** Opening the database never creates one: a lookup in a folder without it simply finds nothing. */
function openDatabase(lookup: RunLookup): RunDatabase | null {
  return existsSync(databasePath(lookup)) ? new RunDatabase(databasePath(lookup)) : null;
}

function firstRunId(dir: string): string | null {
  const head = readHead(join(dir, "requests.jsonl"));
  const end = head.indexOf("\n");
  try {
    return (JSON.parse(end < 0 ? head : head.slice(0, end)) as RequestRecord).run;
  } catch {
    return null;
  }
}

/** The first 64 KiB of a file: enough for one record line, without reading a long run whole. */
function readHead(path: string): string {
  const buffer = Buffer.alloc(64 * 1024);
  const fd = openSync(path, "r");
  try {
    return buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

function folderSource(dir: string): RunSource {
  return {
    label: dir,
    count: () => countLines(join(dir, "requests.jsonl")),
    recordsFile: join(dir, "requests.jsonl"),
    records: () => recordLines(join(dir, "requests.jsonl")),
    payloads: () => loadEach(lazyPayloadLines(join(dir, "payloads.jsonl"))),
    lazyPayloads: () => lazyPayloadLines(join(dir, "payloads.jsonl")),
    hasPayloads: existsSync(join(dir, "payloads.jsonl")),
  };
}

function databaseSource(runId: string, lookup: RunLookup): RunSource {
  return {
    label: runId,
    recordsFile: null,
    hasPayloads: true,
    count() {
      const db = new RunDatabase(databasePath(lookup));
      try {
        return db.recordsOf(runId).length;
      } finally {
        db.close();
      }
    },
    *records() {
      const db = new RunDatabase(databasePath(lookup));
      try {
        yield* db.recordsOf(runId);
      } finally {
        db.close();
      }
    },
    *lazyPayloads() {
      for (const payload of this.payloads()) yield { seq: payload.seq, load: () => payload };
    },
    *payloads() {
      // RunDatabase writes payloads but has no reader for them; a read-only query streams them here.
      const db = new Database(databasePath(lookup), { readonly: true });
      try {
        const rows = db
          .prepare(`SELECT data FROM payloads WHERE run_id = ? AND type = 'request' ORDER BY seq`)
          .iterate(runId);
        for (const row of rows as Iterable<{ data: string }>) yield JSON.parse(row.data) as RequestPayload;
      } finally {
        db.close();
      }
    },
  };
}

type StoredPayload = RequestPayload & { type: "request" | "response" };

function* loadEach(payloads: Iterable<LazyPayload>): Iterable<RequestPayload> {
  for (const payload of payloads) yield payload.load();
}

/** The capture writes `{"type":…,"seq":N,` first, so a row's type and seq are read without parsing its body. */
const PAYLOAD_HEAD = /^\{"type":"(request|response)","seq":(\d+),/;

function* lazyPayloadLines(path: string): Iterable<LazyPayload> {
  for (const { n, line } of fileLines(path)) {
    const parse = (): StoredPayload => {
      const value = parseJsonlLine(path, n, line);
      if (!isPayload(value)) throw inputError(path, `line ${n}`, "expected a payload row");
      return value;
    };
    const head = PAYLOAD_HEAD.exec(line);
    if (head) {
      if (head[1] === "request") yield { seq: Number(head[2]), load: parse };
      continue;
    }
    const row = parse();
    if (row.type === "request") yield { seq: row.seq, load: () => row };
  }
}

function isPayload(value: unknown): value is StoredPayload {
  const p = value as StoredPayload;
  return (
    typeof p === "object" &&
    p !== null &&
    typeof p.seq === "number" &&
    (p.type === "response" || typeof p.body === "string")
  );
}
