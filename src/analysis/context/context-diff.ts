/**
 * `diff --context`: which sources grew or shrank between two runs, per request (a source's tokens
 * over the run divided by the run's counted requests) and over the run, with one sentence per
 * source that changed: "adding mcp:github costs 1,840 tokens on every request".
 */
import type { ContextSummary } from "./context-summary.js";

/** One side's figures for a source: per request on average, its least and most, and over the run. */
export interface SideFigures {
  perRequest: number;
  least: number;
  most: number;
  session: number;
}

export interface SourceChange {
  source: string;
  /** Null on the side where no request carried the source. */
  a: SideFigures | null;
  b: SideFigures | null;
  /** B's per-request figure less A's (a missing side counts as 0). */
  change: number;
}

export interface ContextDiff {
  requests: { a: number; b: number };
  /** Every source of either side, the largest change first. */
  changes: SourceChange[];
  /** One sentence per source that changed, in the order of `changes`. */
  sentences: string[];
}

function sideFigures(summary: ContextSummary): Map<string, SideFigures> {
  const figures = new Map<string, SideFigures>();
  const requests = summary.requests.length;
  for (const { source, session } of summary.sources) {
    const each = summary.requests.map((r) => r.sources[source] ?? 0);
    figures.set(source, {
      perRequest: Math.round(session / requests),
      least: Math.min(...each),
      most: Math.max(...each),
      session,
    });
  }
  return figures;
}

const count = (n: number) => n.toLocaleString("en-US");

/** "on every request" when the source took the same on each, else the average with its range. */
function howOften(side: SideFigures): string {
  if (side.least === side.most) return `${count(side.perRequest)} tokens on every request`;
  return `${count(side.perRequest)} tokens a request on average (${count(side.least)} to ${count(side.most)})`;
}

function sentence(change: SourceChange): string {
  const { source, a, b } = change;
  if (a === null) return `adding ${source} costs ${howOften(b!)}`;
  if (b === null) return `removing ${source} saves ${howOften(a)}`;
  const by = count(Math.abs(change.change));
  const steady = a.least === a.most && b.least === b.most;
  const often = steady ? "on every request" : "a request on average";
  return `${source} ${change.change > 0 ? "grew" : "shrank"} by ${by} tokens ${often} (${count(a.perRequest)} → ${count(b.perRequest)})`;
}

export function contextDiff(a: ContextSummary, b: ContextSummary): ContextDiff {
  const [sideA, sideB] = [sideFigures(a), sideFigures(b)];
  const sources = new Set([...sideA.keys(), ...sideB.keys()]);
  const changes = [...sources]
    .map((source) => {
      const [fa, fb] = [sideA.get(source) ?? null, sideB.get(source) ?? null];
      return { source, a: fa, b: fb, change: (fb?.perRequest ?? 0) - (fa?.perRequest ?? 0) };
    })
    .sort((x, y) => Math.abs(y.change) - Math.abs(x.change) || x.source.localeCompare(y.source));
  const sentences = changes.filter((c) => c.change !== 0 || c.a === null || c.b === null).map(sentence);
  return { requests: { a: a.requests.length, b: b.requests.length }, changes, sentences };
}
