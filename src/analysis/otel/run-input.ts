/**
 * What a trace is planned from, read from a captured run: its records, and from its folder the
 * agent's events (tool calls and results) and the MCP wire log. A run read from the database alone
 * (its folder replaced by a later run) has no wire log there, so its trace holds the requests only.
 */

import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { runFiles } from "../../capture/run-format.js";
import type { RequestRecord } from "../../capture/types.js";
import { jsonlRows } from "../../jsonl.js";
import type { RunSource } from "../load-run.js";
import type { RunEvent, RunTraceInput, WireLine } from "./run-trace.js";
import type { ContentMode } from "./span-plan.js";

const isEvent = (value: unknown): value is RunEvent =>
  typeof value === "object" && value !== null && typeof (value as RunEvent).seq === "number";

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

/** A run folder's events and wire log beside records already read (a probe run that just finished). */
export function traceInputFromFolder(dir: string | null, records: RequestRecord[], label: string): RunTraceInput {
  const first = records[0];
  return {
    run: first?.run ?? label,
    probe: first?.probe ?? label,
    records,
    events: dir ? rowsIfPresent(runFiles(dir).events, isEvent, "an event row with a numeric seq") : [],
    wire: dir ? rowsIfPresent(runFiles(dir).mcpWire, isWireLine, "a wire log row {server, ts, message}") : [],
  };
}

/** The run's parts a trace needs; wire bodies only when the texts are to be exported. */
export function readRunTraceInput(source: RunSource, content: ContentMode): RunTraceInput {
  const records = [...source.records()].sort((a, b) => a.seq - b.seq);
  const dir = source.recordsFile ? dirname(source.recordsFile) : null;
  const input = traceInputFromFolder(dir, records, source.label);
  if (content === "full" && source.hasPayloads) {
    input.bodies = new Map();
    for (const payload of source.payloads()) if (payload.api !== null) input.bodies.set(payload.seq, payload.body);
  }
  return input;
}
