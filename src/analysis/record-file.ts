/**
 * The rows of a run folder's requests.jsonl and events.jsonl, each checked for the fields analysis
 * reads. A record whose roles are stored as a reference to an earlier record's (capture/record-roles.ts)
 * is given with its roles whole, so every reader sees the spec's `roles` list.
 */
import { existsSync } from "node:fs";
import { isRolesReference, RolesResolver, type StoredRecord } from "../capture/record-roles.js";
import type { AgentEventRow, RequestRecord } from "../capture/types.js";
import { inputError } from "../errors.js";
import { type JsonlReadOptions, jsonlRows, lineEndingAt } from "../files/jsonl.js";

export function* recordLines(path: string, options: JsonlReadOptions = {}): Iterable<RequestRecord> {
  const roles = new RolesResolver(
    (reference) => {
      const line = lineEndingAt(path, reference.end);
      if (line === null) return null;
      try {
        return JSON.parse(line) as StoredRecord;
      } catch {
        return null;
      }
    },
    (seq, what) => inputError(path, `record ${seq}`, what),
  );
  for (const stored of jsonlRows(path, isRecord, "a RequestRecord (v1)", options)) yield roles.resolve(stored);
}

function isRecord(value: unknown): value is StoredRecord {
  const r = value as StoredRecord;
  return (
    typeof r === "object" &&
    r !== null &&
    r.v === 1 &&
    typeof r.seq === "number" &&
    typeof r.kind === "string" &&
    Array.isArray(r.tools) &&
    (Array.isArray(r.roles) || isRolesReference(r.roles)) &&
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
