import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { buildRecord } from "../../src/capture/record.js";
import { DATABASE_FORMAT } from "../../src/capture/run-format.js";
import { RunDatabase, RunDatabaseReader } from "../../src/capture/sqlite.js";
import { StorageError, UserError } from "../../src/errors.js";
import { processStart } from "../../src/processes/process-identity.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { REQUEST } from "./known-body.js";

afterEach(removeTempDirs);
const dbPath = () => join(tempDir("sqlite-test-"), "nested", "payload-probe.db");

const recordOf = (run: string, seq: number) =>
  buildRecord({
    run,
    probe: "known",
    seq,
    ts: "2026-01-01T00:00:00.000Z",
    durationMs: 1,
    request: REQUEST,
    dissection: openaiCompletions.dissect(REQUEST.body),
    response: null,
    markers: {},
    prefix: null,
    tokens: null,
  });

describe("the run database (docs/architecture.md, the run format)", () => {
  it("is a real SQLite file in WAL mode with runs, requests, payloads and events tables", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    const tables = (
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(["events", "payloads", "requests", "runs"]));
    raw.close();
  });

  it("many runs accumulate in one file; each run row ends with its status and request count", () => {
    const path = dbPath();
    for (const run of ["run-a", "run-b"]) {
      const db = new RunDatabase(path);
      db.startRun(run, "known", `/runs/${run}`);
      db.addRequest(recordOf(run, 1));
      db.addRequest(recordOf(run, 2));
      db.addPayload(run, 1, "request", JSON.stringify({ type: "request", seq: 1, body: REQUEST.body }));
      db.addEvent(run, 0, 1, "request", { active: ["read"] });
      db.finishRun(run, run === "run-a" ? "passed" : "failed");
      db.close();
    }
    const db = new RunDatabase(path);
    expect(
      db
        .runsOf("known")
        .map((r) => r.id)
        .sort(),
    ).toEqual(["run-a", "run-b"]);
    expect(db.recordsOf("run-b").map((r) => r.seq)).toEqual([1, 2]);
    expect(db.recordsOf("run-b")[0]).toEqual(recordOf("run-b", 1));
    db.close();
    const raw = new Database(path, { readonly: true });
    const runs = raw
      .prepare("SELECT id, status, request_count, finished_at IS NOT NULL AS finished FROM runs ORDER BY id")
      .all();
    expect(runs).toEqual([
      { id: "run-a", status: "passed", request_count: 2, finished: 1 },
      { id: "run-b", status: "failed", request_count: 2, finished: 1 },
    ]);
    const row = raw
      .prepare("SELECT tools, tools_bytes, roles, body_bytes FROM requests WHERE run_id = 'run-a' AND seq = 1")
      .get();
    expect(row).toEqual({
      tools: '["read","mcp"]',
      tools_bytes: recordOf("run-a", 1).toolsBytes,
      roles: "",
      body_bytes: Buffer.byteLength(REQUEST.body),
    });
    expect(raw.prepare("SELECT count(*) AS n FROM payloads").get()).toEqual({ n: 2 });
    raw.close();
  });
});

describe("the run database across processes (issue 8)", () => {
  it("gains the pid columns in a database written before them, and closes that database's abandoned running rows", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    const old = new Database(path);
    // The schema as it was before the pid column: rebuild runs without it, holding one stuck run.
    old.exec(`DROP TABLE runs; CREATE TABLE runs (id TEXT PRIMARY KEY, probe TEXT NOT NULL, started_at TEXT NOT NULL,
      finished_at TEXT, status TEXT NOT NULL, request_count INTEGER NOT NULL DEFAULT 0, dir TEXT)`);
    old.prepare(`INSERT INTO runs (id, probe, started_at, status) VALUES ('stuck', 'known', 'x', 'running')`).run();
    old
      .prepare(`INSERT INTO requests (run_id, seq, kind, ts, model, tools, tools_bytes, system_bytes, messages_bytes,
        body_bytes, roles, record) VALUES ('stuck', 1, 'loop', 'x', 'm', '[]', 0, 0, 0, 0, 'user', '{}')`)
      .run();
    old.close();
    new RunDatabase(path).close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT status, request_count, pid, pid_start FROM runs WHERE id = 'stuck'").get()).toEqual({
      status: "interrupted",
      request_count: 1,
      pid: null,
      pid_start: null,
    });
    raw.close();
  });

  it("leaves a running row alone while its process lives, and records this process as its owner", () => {
    const path = dbPath();
    const db = new RunDatabase(path);
    db.startRun("live", "known", "/x");
    new RunDatabase(path).close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT status, pid FROM runs").get()).toEqual({ status: "running", pid: process.pid });
    raw.close();
    db.close();
  });

  it("closes a running row whose pid now belongs to a process that started at another time", () => {
    const path = dbPath();
    const db = new RunDatabase(path);
    db.startRun("live", "known", "/x");
    const raw = new Database(path);
    expect(raw.prepare("SELECT pid_start FROM runs WHERE id = 'live'").get()).toEqual({
      pid_start: processStart(process.pid),
    });
    raw
      .prepare(
        `INSERT INTO runs (id, probe, started_at, status, pid, pid_start) VALUES ('reused', 'known', 'x', 'running', ?, ?)`,
      )
      .run(process.pid, "another-boot:1");
    raw.close();
    new RunDatabase(path).close();
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT id, status FROM runs ORDER BY id").all()).toEqual([
      { id: "live", status: "running" },
      { id: "reused", status: "interrupted" },
    ]);
    after.close();
    db.close();
  });

  it("names a file that is not a database as bad input", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    writeFileSync(path, "not a database at all, just text that is long enough to be read as a header\n".repeat(10));
    expect(() => new RunDatabase(path)).toThrow(UserError);
  });
});

describe("the requests table's HTTP columns", () => {
  it("a database written before http_status and ending existed gets them on open, and new rows fill them", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    const raw = new Database(path);
    // The requests table as it was before the columns: dropping them leaves exactly that shape.
    raw.exec("ALTER TABLE requests DROP COLUMN http_status; ALTER TABLE requests DROP COLUMN ending;");
    raw.close();
    const db = new RunDatabase(path);
    db.startRun("run-http", "known", "/runs/run-http");
    db.addRequest({ ...recordOf("run-http", 1), status: 429, ending: "complete", error: "slow down" });
    db.addRequest(recordOf("run-http", 2));
    db.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT seq, http_status, ending FROM requests ORDER BY seq").all()).toEqual([
      { seq: 1, http_status: 429, ending: "complete" },
      { seq: 2, http_status: null, ending: null },
    ]);
    check.close();
  });
});

describe("the database's format (issue 25)", () => {
  const versionOf = (path: string) => {
    const raw = new Database(path, { readonly: true });
    try {
      return raw.pragma("user_version", { simple: true });
    } finally {
      raw.close();
    }
  };

  it("a new database is stamped with this build's format", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    expect(DATABASE_FORMAT).toBeGreaterThan(0);
    expect(versionOf(path)).toBe(DATABASE_FORMAT);
  });

  it("a database from before the stamp (user_version 0, columns missing) is migrated, then stamped", () => {
    const path = dbPath();
    const first = new RunDatabase(path);
    first.startRun("old", "known", "/x");
    first.close();
    const raw = new Database(path);
    raw.exec("ALTER TABLE runs DROP COLUMN lost; ALTER TABLE runs DROP COLUMN pid_start;");
    raw.exec("ALTER TABLE requests DROP COLUMN http_status; ALTER TABLE requests DROP COLUMN ending;");
    raw.pragma("user_version = 0");
    raw.close();
    const reader = RunDatabaseReader.open(path);
    expect(reader.runsOf("known").map((run) => run.id)).toEqual(["old"]);
    reader.close();
    new RunDatabase(path).close();
    expect(versionOf(path)).toBe(DATABASE_FORMAT);
    const after = new Database(path, { readonly: true });
    const columns = (table: string) =>
      (after.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    expect(columns("runs")).toEqual(expect.arrayContaining(["lost", "pid_start"]));
    expect(columns("requests")).toEqual(expect.arrayContaining(["http_status", "ending"]));
    after.close();
  });

  it("a database a newer payload-probe wrote is refused by writer and reader in one sentence, and left as it was", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${DATABASE_FORMAT + 1}`);
    raw.close();
    const expected = `${path}: written by a newer payload-probe (format ${DATABASE_FORMAT + 1}, this one reads up to ${DATABASE_FORMAT})`;
    for (const open of [() => new RunDatabase(path), () => RunDatabaseReader.open(path)]) {
      let thrown: unknown;
      try {
        open().close();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(StorageError);
      expect((thrown as Error).message.startsWith(expected), (thrown as Error).message).toBe(true);
    }
    expect(versionOf(path)).toBe(DATABASE_FORMAT + 1);
  });
});

/** The database as an older format wrote it: dropping the columns it lacked leaves exactly that shape. */
function asOlderFormat(path: string, format: number, columns: string[]): void {
  const raw = new Database(path);
  for (const column of columns) raw.exec(`ALTER TABLE requests DROP COLUMN ${column}`);
  raw.pragma(`user_version = ${format}`);
  raw.close();
}

describe("the requests table's cache columns (format 2, issue 27)", () => {
  it("a format 1 database gets cache_verdict and cache_reason on open, is stamped current, and rows fill them", () => {
    const path = dbPath();
    new RunDatabase(path).close();
    asOlderFormat(path, 1, ["cache_verdict", "cache_reason"]);
    const db = new RunDatabase(path);
    db.startRun("run-cache", "known", "/runs/run-cache");
    const cacheDiagnostics = {
      source: "anthropic",
      verdict: "miss",
      reason: "tools_changed",
      part: "tools",
      missedTokens: 120,
      reusableTokens: null,
      comparedWith: "msg_1",
      raw: { cache_miss_reason: { type: "tools_changed", cache_missed_input_tokens: 120 } },
    } as const;
    db.addRequest({ ...recordOf("run-cache", 1), cacheDiagnostics });
    db.addRequest(recordOf("run-cache", 2));
    db.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(DATABASE_FORMAT);
    expect(check.prepare("SELECT seq, cache_verdict, cache_reason FROM requests ORDER BY seq").all()).toEqual([
      { seq: 1, cache_verdict: "miss", cache_reason: "tools_changed" },
      { seq: 2, cache_verdict: null, cache_reason: null },
    ]);
    check.close();
    const reader = RunDatabaseReader.open(path);
    expect(reader.recordsOf("run-cache")[0]!.cacheDiagnostics).toEqual(cacheDiagnostics);
    reader.close();
  });
});

describe("the requests table's conversation columns (format 3, issue 34)", () => {
  it("a format 2 database keeps its rows, gains conversation and conversation_role, is stamped the current format, and new rows fill them", () => {
    const path = dbPath();
    const made = new RunDatabase(path);
    made.startRun("run-old", "known", "/runs/run-old");
    made.close();
    asOlderFormat(path, 2, ["conversation", "conversation_role"]);
    const raw = new Database(path);
    // One request row of that time.
    raw
      .prepare(
        "INSERT INTO requests (run_id, seq, kind, ts, model, tools, tools_bytes, system_bytes, messages_bytes, body_bytes, roles, record) VALUES ('run-old', 1, 'loop', 't', 'm', '[]', 0, 0, 0, 0, '', '{}')",
      )
      .run();
    raw.close();
    const db = new RunDatabase(path);
    db.startRun("run-conv", "known", "/runs/run-conv");
    const conversation = { id: "c2", role: "subagent", parent: "c1", by: "content" } as const;
    db.addRequest({ ...recordOf("run-conv", 1), conversation });
    db.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(DATABASE_FORMAT);
    expect(
      check.prepare("SELECT run_id, seq, conversation, conversation_role FROM requests ORDER BY run_id").all(),
    ).toEqual([
      { run_id: "run-conv", seq: 1, conversation: "c2", conversation_role: "subagent" },
      { run_id: "run-old", seq: 1, conversation: null, conversation_role: null },
    ]);
    check.close();
    const reader = RunDatabaseReader.open(path);
    expect(reader.recordsOf("run-conv")[0]!.conversation).toEqual(conversation);
    reader.close();
  });
});
