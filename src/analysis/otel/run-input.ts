/**
 * What a trace is planned from, read from a captured run: its records, the agent's events (tool calls
 * and results), and from its folder the MCP wire log. A run read from the database alone (its folder
 * replaced by a later run) has no wire log there, so its trace holds no MCP spans.
 */

import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { runFiles } from "../../capture/run-format.js";
import type { RequestRecord } from "../../capture/types.js";
import { jsonlRows } from "../../files/jsonl.js";
import { payloadCursor, type RunSource } from "../load-run.js";
import { eventLines } from "../record-file.js";
import type { RunEvent, RunTraceInput, WireLine } from "./run-trace.js";
import type { ContentMode } from "./span-plan.js";

const isWireLine = (value: unknown): value is WireLine => {
  const line = value as WireLine;
  return (
    typeof line === "object" &&
    line !== null &&
    typeof line.server === "string" &&
    typeof line.ts === "string" &&
    typeof line.message === "object" &&
    line.message !== null
  );
};

function rowsIfPresent<T>(path: string, accept: (value: unknown) => value is T, expected: string): T[] {
  return existsSync(path) ? [...jsonlRows(path, accept, expected)] : [];
}

function traceInput(records: RequestRecord[], label: string, events: RunEvent[], dir: string | null): RunTraceInput {
  const first = records[0];
  return {
    run: first?.run ?? label,
    probe: first?.probe ?? label,
    records,
    events,
    wire: dir ? rowsIfPresent(runFiles(dir).mcpWire, isWireLine, "a wire log row {server, ts, message}") : [],
  };
}

/** A run folder's events and wire log beside records already read (a probe run that just finished). */
export function traceInputFromFolder(dir: string, records: RequestRecord[], label: string): RunTraceInput {
  return traceInput(records, label, [...eventLines(runFiles(dir).events)], dir);
}

/** The run's parts a trace needs; wire bodies only when the texts are to be exported. */
export function readRunTraceInput(source: RunSource, content: ContentMode): RunTraceInput {
  const records = [...source.records()].sort((a, b) => a.seq - b.seq);
  const dir = source.recordsFile ? dirname(source.recordsFile) : null;
  const input = traceInput(records, source.label, [...source.events()], dir);
  if (content === "full" && source.hasPayloads) input.body = bodyReader(source);
  return input;
}

/**
 * Each request's body when its span is sent, one at a time: in seq order (as the spans are sent) from
 * one pass over the payloads, else by its own row.
 */
function bodyReader(source: RunSource): (seq: number) => string | undefined {
  const cursor = payloadCursor(source);
  let last = 0;
  return (seq) => {
    const payload = seq >= last ? cursor.payloadOf(seq)?.load() : source.payload(seq, "request");
    last = Math.max(last, seq);
    return payload?.api === null ? undefined : payload?.body;
  };
}
