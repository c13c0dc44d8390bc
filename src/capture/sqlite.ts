import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { StorageError } from "../errors.js";
import { asStorageError, keepingFailure, storageError } from "../files/storage-error.js";
import { isProcessAlive, waitFromEnvironment } from "../processes/pid-lock.js";
import { processStart } from "../processes/process-identity.js";
import type { StoredPart } from "./payload-rows.js";
import { RolesResolver, type StoredRecord } from "./record-roles.js";
import { DATABASE_FORMAT, newerFormatMessage } from "./run-format.js";
import type { AgentEventRow, RequestRecord } from "./types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  probe TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL,
  request_count INTEGER NOT NULL DEFAULT 0,
  dir TEXT,
  pid INTEGER,
  lost INTEGER NOT NULL DEFAULT 0,
  pid_start TEXT
);
CREATE TABLE IF NOT EXISTS requests (
  run_id TEXT NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  ts TEXT NOT NULL,
  model TEXT NOT NULL,
  tools TEXT NOT NULL,
  tools_bytes INTEGER NOT NULL,
  system_bytes INTEGER NOT NULL,
  messages_bytes INTEGER NOT NULL,
  body_bytes INTEGER NOT NULL,
  roles TEXT NOT NULL,
  tokens_total INTEGER,
  prefix_break_at TEXT,
  record TEXT NOT NULL,
  http_status INTEGER,
  ending TEXT,
  cache_verdict TEXT,
  cache_reason TEXT,
  conversation TEXT,
  conversation_role TEXT,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS payloads (
  run_id TEXT NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  run_id TEXT NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  seq INTEGER,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS parts (
  run_id TEXT NOT NULL REFERENCES runs(id),
  hash TEXT NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (run_id, hash)
);
CREATE INDEX IF NOT EXISTS runs_by_probe ON runs(probe, started_at);
`;

/**
 * How a run ended: a probe's expect held or not, it crashed, it captured outside traffic, or its
 * process was stopped by a signal or killed before it could say (found `running` with a dead pid).
 */
export type RunStatus = "passed" | "failed" | "error" | "captured" | "interrupted";

/** A run's row as `runs` lists it. */
export interface RunRow {
  id: string;
  probe: string;
  startedAt: string;
  status: string;
  requestCount: number;
  dir: string | null;
  lost: number;
}

/**
 * How long a statement waits for another process's write to finish, in ms: PAYLOAD_PROBE_DB_WAIT
 * seconds, 5 by default. payload-probe writes one row per statement, so another run holds the lock
 * for milliseconds; a lock held for seconds is someone else's open transaction (a `sqlite3` shell, a
 * stuck program), which waiting longer does not end.
 */
const busyTimeoutMs = () => waitFromEnvironment("PAYLOAD_PROBE_DB_WAIT", 5);

/** Where SQLite keeps a WAL database's shared index; a read-only connection needs it or must make it. */
const shmPath = (path: string) => `${path}-shm`;

/** A database a newer payload-probe wrote is refused before anything reads or writes its tables. */
function checkFormat(path: string, db: Database.Database): void {
  const message = newerFormatMessage(path, db.pragma("user_version", { simple: true }) as number);
  if (message !== null) throw new StorageError(message, path);
}

/**
 * The run database read without writing a byte to it, for report, diff and the other readers: a
 * read-only connection, so it reads on a read-only filesystem and while another process writes.
 */
export class RunDatabaseReader {
  protected constructor(
    readonly path: string,
    protected readonly db: Database.Database,
  ) {}

  /** Opens an existing database read-only; one that cannot be read is a StorageError naming the file. */
  static open(path: string): RunDatabaseReader {
    let db: Database.Database | undefined;
    const timeout = busyTimeoutMs();
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout });
      // SQLite opens the file lazily: the first read is where a damaged or unreadable file shows.
      db.prepare("SELECT count(*) FROM sqlite_master").get();
      checkFormat(path, db);
      return new RunDatabaseReader(path, db);
    } catch (error) {
      db?.close();
      throw RunDatabaseReader.readFailure(path, error);
    }
  }

  /**
   * A WAL database is read through its -shm file, which SQLite must create when it is missing (a clean
   * close removes it); in a folder it cannot write to, that is SQLITE_CANTOPEN, said here in words.
   */
  private static readFailure(path: string, error: unknown): unknown {
    if ((error as { code?: string }).code === "SQLITE_CANTOPEN" && existsSync(path) && !existsSync(shmPath(path)))
      return new StorageError(
        `${path}: SQLite cannot read this WAL database where its folder is read-only and its -shm file is missing (SQLite must create it); copy the runs folder somewhere writable, or name the run folder (runs/<probe>) instead of <probe>@N`,
        path,
      );
    return storageError(path, error) ?? error;
  }

  /** Runs a read, a damaged page or a failing disk found there becoming a StorageError naming the file. */
  protected read<T>(work: () => T): T {
    return asStorageError(this.path, work);
  }

  /** Run ids of a probe, newest first. */
  runsOf(probe: string): { id: string; dir: string | null; status: string }[] {
    return this.read(
      () =>
        this.db
          .prepare(`SELECT id, dir, status FROM runs WHERE probe = ? ORDER BY started_at DESC, rowid DESC`)
          .all(probe) as { id: string; dir: string | null; status: string }[],
    );
  }

  /** Every run of the database, newest first: what `runs` lists and a bare `report` takes the first of. */
  allRuns(): RunRow[] {
    return this.read(
      () =>
        this.db
          .prepare(
            `SELECT id, probe, started_at AS startedAt, status, request_count AS requestCount, dir, lost FROM runs ORDER BY started_at DESC, rowid DESC`,
          )
          .all() as RunRow[],
    );
  }

  /** Whether a run of this id is in the database. */
  hasRun(id: string): boolean {
    return this.read(() => this.db.prepare(`SELECT 1 FROM runs WHERE id = ?`).get(id) !== undefined);
  }

  /** One payload row of a run as stored (JSON text), or null: `show` reads one request and its reply, not the run. */
  payloadOf(run: string, seq: number, type: "request" | "response"): string | null {
    const row = this.read(
      () =>
        this.db
          .prepare(`SELECT data FROM payloads WHERE run_id = ? AND seq = ? AND type = ? LIMIT 1`)
          .get(run, seq, type) as { data: string } | undefined,
    );
    return row?.data ?? null;
  }

  /**
   * The text of one part of a run's parted bodies (payload-rows.ts), or undefined; a database from
   * before parts (format 3 and older) has none, as none of its rows names one.
   */
  partOf(run: string, hash: string): string | undefined {
    const row = this.read(() => {
      this.partStatement ??= this.db.prepare(`SELECT text FROM parts WHERE run_id = ? AND hash = ?`);
      return this.partStatement.get(run, hash) as { text: string } | undefined;
    });
    return row?.text;
  }

  private partStatement: Database.Statement | undefined;

  /**
   * Exchanges a run accepted but could not write (capture-thread.ts), by its id or as the latest row
   * of a probe written to `dir`; 0 from a database older than the column.
   */
  lostOf(key: { id: string } | { probe: string; dir: string }): number {
    const row = this.read(() => {
      if ("id" in key) return this.db.prepare(`SELECT * FROM runs WHERE id = ?`).get(key.id) as { lost?: number };
      const rows = this.db
        .prepare(`SELECT * FROM runs WHERE probe = ? ORDER BY started_at DESC, rowid DESC`)
        .all(key.probe) as { dir: string | null; lost?: number }[];
      return rows.find((run) => run.dir !== null && resolve(run.dir) === resolve(key.dir));
    });
    return row?.lost ?? 0;
  }

  /** A run's records, their roles whole (a reference resolved to the record it names, record-roles.ts). */
  recordsOf(run: string): RequestRecord[] {
    const rows = this.read(
      () =>
        this.db.prepare(`SELECT seq, record FROM requests WHERE run_id = ? ORDER BY seq`).all(run) as {
          seq: number;
          record: string;
        }[],
    );
    // A base comes later in seq order than a record naming it when requests finished out of order.
    const bySeq = new Map(rows.map((row) => [row.seq, row.record]));
    const roles = new RolesResolver(
      (reference) => {
        const record = bySeq.get(reference.base);
        return record === undefined ? null : (JSON.parse(record) as StoredRecord);
      },
      (seq, what) => new StorageError(`${this.path}: run ${run}, record ${seq}: ${what}`, this.path),
    );
    return rows.map((row) => roles.resolve(JSON.parse(row.record) as StoredRecord));
  }

  /** The request payload rows of a run, as stored (JSON text), one at a time in seq order. */
  requestPayloadsOf(run: string): Iterable<string> {
    return this.payloadsOf(run, "request");
  }

  /** The payload rows of one type of a run, as stored (JSON text), one at a time in seq order. */
  *payloadsOf(run: string, type: "request" | "response"): Iterable<string> {
    const rows = this.read(() =>
      this.db.prepare(`SELECT data FROM payloads WHERE run_id = ? AND type = ? ORDER BY seq`).iterate(run, type),
    );
    try {
      for (;;) {
        const next = this.read(() => rows.next());
        if (next.done) return;
        yield (next.value as { data: string }).data;
      }
    } finally {
      // A reader that stops early (show finds its seq) ends the statement, or closing the connection throws "busy".
      rows.return?.();
    }
  }

  /** A run's agent events in the order they were logged, as events.jsonl holds them. */
  eventsOf(run: string): AgentEventRow[] {
    const rows = this.read(
      () =>
        this.db.prepare(`SELECT idx, seq, type, data FROM events WHERE run_id = ? ORDER BY idx`).all(run) as {
          idx: number;
          seq: number;
          type: string;
          data: string;
        }[],
    );
    return rows.map(({ idx, seq, type, data }) => ({ idx, seq, type, ...(JSON.parse(data) as object) }));
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The run database: many runs accumulate in one file. WAL with each row, or each exchange's rows
 * (`inOneTransaction`), committed as it is written, so a crash keeps every request captured before it. Opening it proves it can be written (the schema is
 * checked in a write transaction), so a database that is locked, damaged, full or read-only is found
 * before a run touches any folder. Every failure is a StorageError naming the file; the first failing
 * write is kept in `failure`, so the run that owns the database knows its capture is incomplete.
 */
export class RunDatabase extends RunDatabaseReader {
  private readonly insertRequest: Database.Statement;
  private readonly insertPayload: Database.Statement;
  private readonly insertPart: Database.Statement;
  private readonly insertEvent: Database.Statement;
  /** Writes held while `inOneTransaction` runs, committed together when it ends. */
  private held: (() => unknown)[] | null = null;
  failure: StorageError | null = null;

  constructor(path: string) {
    const db = asStorageError(dirname(path), () => {
      mkdirSync(dirname(path), { recursive: true });
      return asStorageError(path, () => new Database(path, { timeout: busyTimeoutMs() }));
    });
    super(path, db);
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.transaction(() => this.migrate()).immediate();
      this.closeAbandonedRuns();
    } catch (error) {
      this.db.close();
      throw storageError(path, error) ?? error;
    }
    this.insertRequest = this.db.prepare(
      `INSERT INTO requests (run_id, seq, kind, ts, model, tools, tools_bytes, system_bytes, messages_bytes, body_bytes, roles, tokens_total, prefix_break_at, record, http_status, ending, cache_verdict, cache_reason, conversation, conversation_role)
       VALUES (@run, @seq, @kind, @ts, @model, @tools, @toolsBytes, @systemBytes, @messagesBytes, @bodyBytes, @roles, @tokensTotal, @breakAt, @record, @status, @ending, @cacheVerdict, @cacheReason, @conversation, @conversationRole)`,
    );
    this.insertPayload = this.db.prepare(`INSERT INTO payloads (run_id, seq, type, data) VALUES (?, ?, ?, ?)`);
    this.insertPart = this.db.prepare(`INSERT OR IGNORE INTO parts (run_id, hash, text) VALUES (?, ?, ?)`);
    this.insertEvent = this.db.prepare(`INSERT INTO events (run_id, idx, seq, type, data) VALUES (?, ?, ?, ?, ?)`);
  }

  /** One write; a failure is remembered (the first one) and thrown as a StorageError. */
  private write(work: () => unknown): void {
    if (this.held) this.held.push(work);
    else keepingFailure(this, this.path, work);
  }

  /**
   * Runs `work`, holding the writes it makes, then commits them in one transaction: an exchange's
   * payload and request rows cost one commit instead of three. Only for a caller that writes nothing
   * else meanwhile (the capture worker records one exchange at a time). A commit that fails throws
   * as a single write does.
   */
  async inOneTransaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.held) return work();
    const held: (() => unknown)[] = [];
    this.held = held;
    try {
      return await work();
    } finally {
      this.held = null;
      if (held.length > 0)
        keepingFailure(this, this.path, () =>
          this.db.transaction(() => {
            for (const write of held) write();
          })(),
        );
    }
  }

  /**
   * The schema, and the columns databases written before them lack (one writer at a time); then the
   * format stamp, so a newer build knows what it opens and an older one refuses what it cannot read.
   */
  private migrate(): void {
    checkFormat(this.path, this.db);
    this.db.exec(SCHEMA);
    const columns = this.db.prepare(`PRAGMA table_info(runs)`).all() as { name: string }[];
    for (const [name, type] of [
      ["pid", "INTEGER"],
      ["lost", "INTEGER NOT NULL DEFAULT 0"],
      ["pid_start", "TEXT"],
    ])
      if (!columns.some((column) => column.name === name)) this.db.exec(`ALTER TABLE runs ADD COLUMN ${name} ${type}`);
    this.addRequestColumns();
    this.db.pragma(`user_version = ${DATABASE_FORMAT}`);
  }

  /**
   * A run still `running` whose process is gone was killed before it could finish its row: it becomes
   * `interrupted` with the requests it did capture; so does one whose pid now belongs to a process that
   * started at another time than the run's (where /proc tells). Rows from before the pid column have no
   * owner to ask and are treated the same way.
   */
  private closeAbandonedRuns(): void {
    const running = this.db.prepare(`SELECT id, pid, pid_start FROM runs WHERE status = 'running'`).all() as {
      id: string;
      pid: number | null;
      pid_start: string | null;
    }[];
    for (const run of running)
      if (run.pid === null || !isProcessAlive(run.pid, run.pid_start)) this.finishRun(run.id, "interrupted");
  }

  /**
   * Databases written before requests had `http_status` and `ending` (format 0), the provider's cache
   * verdict and reason (format 1), or the conversation's id and role (format 2) get the columns: empty
   * for old rows, whose records were captured before conversations were told apart.
   */
  private addRequestColumns(): void {
    const columns = new Set(
      (this.db.prepare(`PRAGMA table_info(requests)`).all() as { name: string }[]).map((c) => c.name),
    );
    for (const [name, type] of [
      ["http_status", "INTEGER"],
      ["ending", "TEXT"],
      ["cache_verdict", "TEXT"],
      ["cache_reason", "TEXT"],
      ["conversation", "TEXT"],
      ["conversation_role", "TEXT"],
    ])
      if (!columns.has(name)) this.db.exec(`ALTER TABLE requests ADD COLUMN ${name} ${type}`);
  }

  startRun(id: string, probe: string, dir: string): void {
    this.write(() =>
      this.db
        .prepare(
          `INSERT INTO runs (id, probe, started_at, status, dir, pid, pid_start) VALUES (?, ?, ?, 'running', ?, ?, ?)`,
        )
        .run(id, probe, new Date().toISOString(), dir, process.pid, processStart(process.pid)),
    );
  }

  /** Removes the row of a run that captured nothing and is dropped (a session whose command never ran). */
  dropRun(id: string): void {
    this.write(() => this.db.prepare(`DELETE FROM runs WHERE id = ?`).run(id));
  }

  /** `lost`: exchanges the server accepted whose capture could not be written before it stopped (see capture-thread.ts). */
  finishRun(id: string, status: RunStatus, lost = 0): void {
    this.write(() =>
      this.db
        .prepare(
          `UPDATE runs SET finished_at = ?, status = ?, lost = ?, request_count = (SELECT count(*) FROM requests WHERE run_id = ?) WHERE id = ?`,
        )
        .run(new Date().toISOString(), status, lost, id, id),
    );
  }

  /**
   * `stored`: the record's line as requests.jsonl holds it (its roles perhaps a reference,
   * record-roles.ts), the `record` column. The `roles` column is left empty (format 5): the record
   * holds them, and a long session's roles written again there grew with the square of the session.
   */
  addRequest(record: RequestRecord, stored = JSON.stringify(record)): void {
    const row = {
      run: record.run,
      seq: record.seq,
      kind: record.kind,
      ts: record.ts,
      model: record.model,
      tools: JSON.stringify(record.tools),
      toolsBytes: record.toolsBytes,
      systemBytes: record.systemBytes,
      messagesBytes: record.messagesBytes,
      bodyBytes: record.bodyBytes,
      roles: "",
      tokensTotal: record.tokens?.total ?? null,
      breakAt: record.prefix?.breakAt ?? null,
      record: stored,
      status: record.status ?? null,
      ending: record.ending ?? null,
      cacheVerdict: record.cacheDiagnostics?.verdict ?? null,
      cacheReason: record.cacheDiagnostics?.reason ?? null,
      conversation: record.conversation?.id ?? null,
      conversationRole: record.conversation?.role ?? null,
    };
    this.write(() => this.insertRequest.run(row));
  }

  /** `json`: the payload row already serialized (it is written to payloads.jsonl too). */
  addPayload(run: string, seq: number, type: "request" | "response", json: string): void {
    this.write(() => this.insertPayload.run(run, seq, type, json));
  }

  /** A part of a parted body (payload-rows.ts); one the run has already is kept as it is. */
  addPart(run: string, part: StoredPart): void {
    this.write(() => this.insertPart.run(run, part.hash, part.text));
  }

  addEvent(run: string, idx: number, seq: number | null, type: string, data: unknown): void {
    this.write(() => this.insertEvent.run(run, idx, seq, type, JSON.stringify(data)));
  }
}
