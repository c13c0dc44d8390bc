/** The rows of a run's requests.jsonl, each checked for the fields analysis reads. */
import type { RequestRecord } from "../capture/types.js";
import { type JsonlReadOptions, jsonlRows } from "../jsonl.js";

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
