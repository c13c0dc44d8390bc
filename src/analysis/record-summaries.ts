/**
 * A run folder's record summaries (what report, diff and the cost model read of each record): from
 * the run index (capture/run-index.ts) as far as the index agrees with requests.jsonl, the rest from
 * requests.jsonl itself. requests.jsonl is the truth: the index is used only when its last row names
 * a line end in the file and the record there has the row's seq; it is read in order and left at its
 * first row that does not follow from the one before (torn, corrupt, out of step); the records past
 * the index's end — a crash between the two appends, a run written before the index existed — are
 * read from the file. Nothing in the folder is changed by reading it.
 */
import { existsSync, statSync } from "node:fs";
import type { RunFiles } from "../capture/run-format.js";
import { INDEX_HEADER, indexRowDecoder, type RecordSummary } from "../capture/run-index.js";
import { countJsonlRows, type JsonlReadOptions, jsonlLines, lineEndingAt } from "../files/jsonl.js";
import { recordLines } from "./record-file.js";

/** How far a checked index reaches: its rows, and where the last one's record ends in requests.jsonl. */
interface IndexReach {
  rows: number;
  end: number;
}

const NOTHING: IndexReach = { rows: 0, end: 0 };

const parsed = (line: string | null): unknown => {
  if (line === null) return null;
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
};

/** The index's reach when it is one this build reads and its last row agrees with requests.jsonl. */
function indexReach(files: Pick<RunFiles, "requests" | "index">): IndexReach {
  if (!existsSync(files.index)) return NOTHING;
  const header = parsed(firstLine(files.index)) as typeof INDEX_HEADER | null;
  if (header?.runIndex !== INDEX_HEADER.runIndex) return NOTHING;
  const last = parsed(lineEndingAt(files.index, "last"));
  if (!Array.isArray(last) || !Number.isInteger(last[0]) || !Number.isInteger(last[1])) return NOTHING;
  const [rows, end, seq] = last as [number, number, unknown];
  if (end > statSync(files.requests).size) return NOTHING;
  const record = parsed(lineEndingAt(files.requests, end)) as { seq?: unknown } | null;
  return record !== null && record.seq === seq && rows > 0 ? { rows, end } : NOTHING;
}

function firstLine(path: string): string | null {
  for (const { line } of jsonlLines(path)) return line;
  return null;
}

/** The rows of requests.jsonl: those the index reaches, then those after. */
export function countSummaries(files: Pick<RunFiles, "requests" | "index">, options: JsonlReadOptions = {}): number {
  const reach = indexReach(files);
  return reach.rows + countJsonlRows(files.requests, { ...options, start: { offset: reach.end, line: reach.rows } });
}

export function* summaryLines(
  files: Pick<RunFiles, "requests" | "index">,
  options: JsonlReadOptions = {},
): Generator<RecordSummary> {
  const reach = indexReach(files);
  let read = NOTHING;
  if (reach.rows > 0) {
    const decode = indexRowDecoder();
    for (const { n, line } of jsonlLines(files.index)) {
      if (n === 1) continue;
      const row = decode(parsed(line));
      if (!row || row.n !== read.rows + 1 || row.end <= read.end || row.end > reach.end) break;
      yield row.summary;
      read = { rows: row.n, end: row.end };
      if (row.end === reach.end) break;
    }
  }
  yield* recordLines(files.requests, { ...options, start: { offset: read.end, line: read.rows } });
}
