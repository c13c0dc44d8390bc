import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { inputError } from "../errors.js";
import { isProcessAlive } from "../pid-lock.js";
import { processStart } from "../process-identity.js";
import type { RequestRecord } from "./types.js";

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
CREATE INDEX IF NOT EXISTS runs_by_probe ON runs(probe, started_at);
`;

/**
 * How a run ended: a probe's expect held or not, it crashed, it captured outside traffic, or its
 * process was stopped by a signal or killed before it could say (found `running` with a dead pid).
 */
export type RunStatus = "passed" | "failed" | "error" | "captured" | "interrupted";

/**
 * How long a statement waits for another process's write to finish. Rows are written one statement
 * at a time, so a lock is held for milliseconds; a generous wait means two runs never fail on it.
 */
const BUSY_TIMEOUT_MS = 30_000;

/**
 * The run database: many runs accumulate in one file. WAL with a row written per statement, so a
 * crash keeps every request captured before it.
 */
export class RunDatabase {
  private readonly db: Database.Database;
  private readonly insertRequest: Database.Statement;
  private readonly insertPayload: Database.Statement;
  private readonly insertEvent: Database.Statement;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.db.pragma("journal_mode = WAL");
    } catch (error) {
      this.db.close();
      // SQLite's result codes for a file that is not a database or is damaged (sqlite.org/rescode.html).
      const code = (error as { code?: string }).code;
      if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT")
        throw inputError(path, undefined, `expected a payload-probe SQLite database (${(error as Error).message})`);
      throw error;
    }
    this.db.pragma("synchronous = NORMAL");
    this.db.transaction(() => this.migrate()).immediate();
    this.closeAbandonedRuns();
    this.insertRequest = this.db.prepare(
      `INSERT INTO requests (run_id, seq, kind, ts, model, tools, tools_bytes, system_bytes, messages_bytes, body_bytes, roles, tokens_total, prefix_break_at, record, http_status, ending)
       VALUES (@run, @seq, @kind, @ts, @model, @tools, @toolsBytes, @systemBytes, @messagesBytes, @bodyBytes, @roles, @tokensTotal, @breakAt, @record, @status, @ending)`,
    );
    this.insertPayload = this.db.prepare(`INSERT INTO payloads (run_id, seq, type, data) VALUES (?, ?, ?, ?)`);
    this.insertEvent = this.db.prepare(`INSERT INTO events (run_id, idx, seq, type, data) VALUES (?, ?, ?, ?, ?)`);
  }

  /** The schema, and the `pid` and `pid_start` columns databases written before them lack (one writer at a time). */
  private migrate(): void {
    this.db.exec(SCHEMA);
    const columns = this.db.prepare(`PRAGMA table_info(runs)`).all() as { name: string }[];
    for (const [name, type] of [
      ["pid", "INTEGER"],
      ["pid_start", "TEXT"],
    ])
      if (!columns.some((column) => column.name === name)) this.db.exec(`ALTER TABLE runs ADD COLUMN ${name} ${type}`);
    this.addRequestColumns();
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

  /** Databases written before requests had `http_status` and `ending` get the columns (empty for old rows). */
  private addRequestColumns(): void {
    const columns = new Set(
      (this.db.prepare(`PRAGMA table_info(requests)`).all() as { name: string }[]).map((c) => c.name),
    );
    for (const [name, type] of [
      ["http_status", "INTEGER"],
      ["ending", "TEXT"],
    ])
      if (!columns.has(name)) this.db.exec(`ALTER TABLE requests ADD COLUMN ${name} ${type}`);
  }

  startRun(id: string, probe: string, dir: string): void {
    this.db
      .prepare(
        `INSERT INTO runs (id, probe, started_at, status, dir, pid, pid_start) VALUES (?, ?, ?, 'running', ?, ?, ?)`,
      )
      .run(id, probe, new Date().toISOString(), dir, process.pid, processStart(process.pid));
  }

  finishRun(id: string, status: RunStatus): void {
    this.db
      .prepare(
        `UPDATE runs SET finished_at = ?, status = ?, request_count = (SELECT count(*) FROM requests WHERE run_id = ?) WHERE id = ?`,
      )
      .run(new Date().toISOString(), status, id, id);
  }

  addRequest(record: RequestRecord): void {
    this.insertRequest.run({
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
      roles: record.roles.join(">"),
      tokensTotal: record.tokens?.total ?? null,
      breakAt: record.prefix?.breakAt ?? null,
      record: JSON.stringify(record),
      status: record.status ?? null,
      ending: record.ending ?? null,
    });
  }

  /** `json`: the payload row already serialized (it is written to payloads.jsonl too). */
  addPayload(run: string, seq: number, type: "request" | "response", json: string): void {
    this.insertPayload.run(run, seq, type, json);
  }

  addEvent(run: string, idx: number, seq: number | null, type: string, data: unknown): void {
    this.insertEvent.run(run, idx, seq, type, JSON.stringify(data));
  }

  /** Run ids of a probe, newest first. */
  runsOf(probe: string): { id: string; dir: string | null; status: string }[] {
    return this.db
      .prepare(`SELECT id, dir, status FROM runs WHERE probe = ? ORDER BY started_at DESC, rowid DESC`)
      .all(probe) as {
      id: string;
      dir: string | null;
      status: string;
    }[];
  }

  recordsOf(run: string): RequestRecord[] {
    const rows = this.db.prepare(`SELECT record FROM requests WHERE run_id = ? ORDER BY seq`).all(run) as {
      record: string;
    }[];
    return rows.map((row) => JSON.parse(row.record) as RequestRecord);
  }

  close(): void {
    this.db.close();
  }
}
