/**
 * The run format's one owner: the names of the files a run folder holds. Every writer (the capture,
 * the probe runners) and every reader (analysis, view, otel) names them through here, so a rename or a
 * new file is one edit; tests that write fixture runs keep the literals, as they describe the format
 * from outside.
 */
import { join } from "node:path";

/** One record per captured request (src/capture/record.ts). */
export const REQUESTS_FILE = "requests.jsonl";
/** The wire bodies, one row per request or side exchange. */
export const PAYLOADS_FILE = "payloads.jsonl";
/** Agent events (tool calls and results), each with the seq of the request it precedes. */
export const EVENTS_FILE = "events.jsonl";
/** The JSON-RPC messages the stub MCP servers received. */
export const MCP_WIRE_FILE = "mcp-wire.jsonl";
/**
 * What `report` and `diff` read of each record, compact, written beside requests.jsonl
 * (src/capture/run-index.ts). Derived: requests.jsonl stays the truth, and a folder without it reads the same.
 */
export const RUN_INDEX_FILE = "requests.index.jsonl";
/**
 * The run index's layout, on its first line; a reader that does not know the number reads requests.jsonl
 * instead. 2: rows carry the record's conversation (issue 34, point 1) and the HTTP exchange's status,
 * ending and error (failed requests, issue 34, point 4).
 */
export const RUN_INDEX_FORMAT = 2;

/** The database beside the run folders, where many runs accumulate (src/capture/sqlite.ts). */
export const DATABASE_FILE = "payload-probe.db";

/** What a run folder holds: the files a capture and the probe runner write, nothing else. */
export const RUN_FOLDER_FILES = [REQUESTS_FILE, RUN_INDEX_FILE, PAYLOADS_FILE, EVENTS_FILE, MCP_WIRE_FILE] as const;

/** The paths of a run folder's files. */
export interface RunFiles {
  requests: string;
  index: string;
  payloads: string;
  events: string;
  mcpWire: string;
}

export function runFiles(dir: string): RunFiles {
  return {
    requests: join(dir, REQUESTS_FILE),
    index: join(dir, RUN_INDEX_FILE),
    payloads: join(dir, PAYLOADS_FILE),
    events: join(dir, EVENTS_FILE),
    mcpWire: join(dir, MCP_WIRE_FILE),
  };
}

/** The run database of a runs folder. */
export const runDatabasePath = (runsDir: string) => join(runsDir, DATABASE_FILE);

/**
 * The database's format, kept in SQLite's `PRAGMA user_version`. 0 is a database from before the
 * number (migrated by the column additions in sqlite.ts, then stamped); a number above this one was
 * written by a newer payload-probe, whose tables this build cannot promise to read or write.
 * Raise it with a migration in sqlite.ts whenever the tables change. 2: requests gained
 * `cache_verdict` and `cache_reason` (the provider's cache diagnostics). 3: requests gained
 * `conversation` and `conversation_role` (RequestRecord.conversation). 4: the `parts` table, whose
 * texts request payload rows name instead of holding their body whole (payload-rows.ts); a build that
 * reads up to 3 would find such a row's body missing, so it refuses the database instead. 5: a
 * parted row's lists may begin with `chunks`, parts whose texts are runs of its lists (part-lists.ts),
 * which a build that reads up to 4 would join into a wrong body; it refuses the database instead.
 * Also from 5: `requests.record` holds the record's line as requests.jsonl does (its roles perhaps
 * a reference, record-roles.ts) and `requests.roles` is written empty.
 */
export const DATABASE_FORMAT = 5;

/** One line for a database a newer payload-probe wrote (the caller makes it a StorageError naming the file). */
export function newerFormatMessage(path: string, format: number): string | null {
  if (format <= DATABASE_FORMAT) return null;
  return `${path}: written by a newer payload-probe (format ${format}, this one reads up to ${DATABASE_FORMAT}); upgrade payload-probe, or pass --runs to another folder`;
}
