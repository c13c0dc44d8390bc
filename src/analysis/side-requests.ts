import type { LazyPayload, RequestPayload, RunSource } from "./load-run.js";

/** How many side requests a run shows in full, by seq and reason, before the rest are only counted. */
const LISTED = 5;

function reason(payload: RequestPayload): string {
  if (payload.api !== null) return "its record was never written (the run stopped before its response)";
  if (payload.unreadable) return `body unreadable: ${payload.unreadable}`;
  const path = payload.url ? new URL(payload.url).pathname : "?";
  return `${path} is not a path of a wire API (chat/completions, messages, responses)`;
}

/**
 * Says how many requests of a run have a payload but no record, and why: a report of a proxy run
 * whose traffic was all side requests would otherwise be an empty table with no word of what it held.
 * Null when every request has its row. Only the rowless payloads are parsed.
 */
export function sideRequestNote(source: RunSource): string | null {
  if (!source.hasPayloads) return null;
  const recorded = new Set<number>();
  for (const record of source.summaries()) recorded.add(record.seq);
  // Only the rowless are kept: each lazy payload holds its row's line, and a long run's lines are its bodies.
  const side: LazyPayload[] = [];
  for (const payload of source.lazyPayloads()) if (!recorded.has(payload.seq)) side.push(payload);
  if (side.length === 0) return null;
  const shown = side.slice(0, LISTED).map((lazy) => `  #${lazy.seq} ${reason(lazy.load())}`);
  const more = side.length > LISTED ? [`  … and ${side.length - LISTED} more`] : [];
  return [
    `${side.length} request(s) have a payload but no row (their bodies are kept with the run's payloads):`,
    ...shown,
    ...more,
  ].join("\n");
}

/**
 * Says how many requests a run relayed but never recorded (its row's `lost` count), which no file of
 * the run shows: without it a report of a server stopped mid-capture looks complete. Null when none.
 */
export function lostRequestNote(source: RunSource): string | null {
  const lost = source.lost?.() ?? 0;
  if (lost === 0) return null;
  return `lost: ${lost} request(s) were relayed but not recorded (capture could not finish in time)`;
}
