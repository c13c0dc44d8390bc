/**
 * `check --run … --max-source mcp:github=2000`: a ceiling on one source's tokens in any one request
 * (the sources the capture counted, capture/context-sources.ts). The request where the source is
 * largest is held to it, so one failure is one finding and one sentence naming that request.
 */

import type { RequestRecord } from "../../capture/types.js";
import { UserError } from "../../errors.js";
import type { Finding } from "./check.js";

/** Most tokens a source may take in one request, by source name. */
export type SourceLimits = Record<string, number>;

/** `SOURCE=N` (`mcp:github=2000`) as given on the command line, into the limits so far. */
export function parseSourceLimit(flag: string, value: string, limits: SourceLimits): SourceLimits {
  const at = value.lastIndexOf("=");
  const source = value.slice(0, at).trim();
  const tokens = Number(value.slice(at + 1));
  if (at <= 0 || source === "" || value.slice(at + 1).trim() === "" || !Number.isInteger(tokens) || tokens < 0)
    throw new UserError(
      `check: --${flag} expected SOURCE=TOKENS (a source as 'report --context' names it, a whole number ≥ 0; e.g. mcp:github=2000), got ${JSON.stringify(value)}`,
    );
  return { ...limits, [source]: tokens };
}

/** Each source's largest figure in one request, and which request that is (the first, on a tie). */
function peaks(records: RequestRecord[], sources: string[]): Map<string, { tokens: number; seq: number | null }> {
  const found = new Map(sources.map((source) => [source, { tokens: 0, seq: null as number | null }]));
  for (const record of records)
    for (const source of sources) {
      const tokens = record.sources?.[source] ?? 0;
      if (tokens > found.get(source)!.tokens) found.set(source, { tokens, seq: record.seq });
    }
  return found;
}

export interface SourceGate {
  failures: { finding: Finding; sentence: string }[];
  /** Each limit beside its figure, for the check's figures line. */
  figures: string[];
}

export function sourceGate(probe: string, records: RequestRecord[], limits: SourceLimits): SourceGate {
  const sources = Object.keys(limits);
  if (sources.length === 0) return { failures: [], figures: [] };
  if (!records.some((r) => r.sources !== undefined))
    throw new UserError(
      `--max-source: run of "${probe}" carries no sources (recorded before sources were counted, or with token counting off)`,
    );
  const count = (n: number) => n.toLocaleString("en-US");
  const failures: SourceGate["failures"] = [];
  const figures: string[] = [];
  for (const [source, peak] of peaks(records, sources)) {
    const limit = limits[source]!;
    const where = peak.seq === null ? "in no request" : `at most, request ${peak.seq}`;
    figures.push(`${source} ${count(peak.tokens)} of ${count(limit)} tokens a request (${where})`);
    if (peak.tokens <= limit) continue;
    failures.push({
      finding: {
        probe,
        request: peak.seq,
        metric: `source.${source}`,
        baseline: `≤ ${limit}`,
        actual: String(peak.tokens),
        tolerance: "limit",
      },
      sentence: `${source} takes ${count(peak.tokens)} tokens in request ${peak.seq}, limit ${count(limit)} a request, ${count(peak.tokens - limit)} over`,
    });
  }
  return { failures, figures };
}
