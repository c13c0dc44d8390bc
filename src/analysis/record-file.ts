/** The rows of a run folder's requests.jsonl and events.jsonl, each checked for the fields analysis reads. */
import { existsSync } from "node:fs";
import type { AgentEventRow, RequestRecord } from "../capture/types.js";
import { type JsonlReadOptions, jsonlRows } from "../files/jsonl.js";

export function recordLines(path: string, options: JsonlReadOptions = {}): Iterable<RequestRecord> {
  return jsonlRows(path, isRecord, "a RequestRecord (v1)", options);
}

function isRecord(value: unknown): value is RequestRecord {
  const r = value as RequestRecord;
  return (
    typeof r === "object" &&
    r !== null &&
    r.v === 1 &&
    typeof r.seq === "number" &&
    typeof r.kind === "string" &&
    Array.isArray(r.tools) &&
    Array.isArray(r.roles) &&
    typeof r.markers === "object" &&
    r.markers !== null &&
    typeof r.toolsBytes === "number" &&
    typeof r.systemBytes === "number" &&
    typeof r.messagesBytes === "number" &&
    typeof r.hashes === "object" &&
    r.hashes !== null
  );
}

/** A run's agent events (none when the run logged none: the proxy's, a mock's without an agent beside it). */
export function eventLines(path: string, options: JsonlReadOptions = {}): Iterable<AgentEventRow> {
  return existsSync(path) ? jsonlRows(path, isEvent, "an event row {idx, seq, type}", options) : [];
}

function isEvent(value: unknown): value is AgentEventRow {
  const e = value as AgentEventRow;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.idx === "number" &&
    typeof e.seq === "number" &&
    typeof e.type === "string"
  );
}
