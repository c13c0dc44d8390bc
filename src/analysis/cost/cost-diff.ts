/**
 * `diff --cost`: the money side of a diff. Each request's predicted dollars on both sides (aligned
 * by seq) with the delta, the runs' totals, and for each prefix break what it cost over the rest of
 * its run: "this break re-billed 2,972 tokens × 1 request = $0.0045" — the cached tokens the break
 * made the provider bill again, priced as the difference from reading them from the cache.
 */

import { wrapLines } from "../../text/text-wrap.js";
import type { DiffFormat, DiffLabels } from "../diff/diff-render.js";
import { mdHeader, mdRow } from "../format.js";
import type { LineWriter } from "../table/output.js";
import { breakSentence, costJson, priceSourceLine, unpricedLine } from "./cost-render.js";
import { dollarsSideBySide } from "./money.js";
import type { PriceSource } from "./pricing.js";
import type { RequestCost, RunCost } from "./run-cost.js";

export interface CostDiffRow {
  seq: number;
  a: number | null;
  b: number | null;
  delta: number | null;
}

export interface BreakCost {
  side: "A" | "B";
  seq: number;
  detail: string;
  tokens: number;
  requests: number;
  dollars: number | null;
}

export interface CostDiff {
  prices: PriceSource;
  /** The model each side is priced as (its requests' own, a probe's priceAs, or --model-a / --model-b). */
  models: { a: string[]; b: string[] };
  rows: CostDiffRow[];
  total: { a: number | null; b: number | null; delta: number | null };
  breaks: BreakCost[];
  /** Prefix breaks that re-billed nothing: unbroken, the cache would have read no more of the prompt. */
  freeBreaks: { side: "A" | "B"; seq: number; detail: string }[];
  unpriced: RunCost["unpriced"];
}

export function costDiff(a: RunCost, b: RunCost): CostDiff {
  const count = Math.max(a.requests.length, b.requests.length);
  const rows: CostDiffRow[] = [];
  for (let i = 0; i < count; i++) {
    const ra = a.requests[i]?.predictedCost ?? null;
    const rb = b.requests[i]?.predictedCost ?? null;
    rows.push({
      seq: a.requests[i]?.seq ?? b.requests[i]!.seq,
      a: ra,
      b: rb,
      delta: ra === null || rb === null ? null : rb - ra,
    });
  }
  const models = (cost: RunCost) => [...new Set(cost.requests.map((r) => r.pricedAs ?? r.model))];
  const unpriced = [...a.unpriced, ...b.unpriced].filter(
    (u, i, all) => all.findIndex((v) => v.model === u.model) === i,
  );
  return {
    prices: a.prices,
    models: { a: models(a), b: models(b) },
    rows,
    total: {
      a: a.total.predicted,
      b: b.total.predicted,
      delta: a.total.predicted === null || b.total.predicted === null ? null : b.total.predicted - a.total.predicted,
    },
    breaks: [...breaksOf("A", a.requests), ...breaksOf("B", b.requests)],
    freeBreaks: [...freeBreaksOf("A", a.requests), ...freeBreaksOf("B", b.requests)],
    unpriced,
  };
}

function breaksOf(side: "A" | "B", requests: RequestCost[]): BreakCost[] {
  return requests.flatMap((r) => (r.rebill ? [{ side, seq: r.seq, detail: r.breakDetail ?? "", ...r.rebill }] : []));
}

function freeBreaksOf(side: "A" | "B", requests: RequestCost[]): CostDiff["freeBreaks"] {
  return requests.flatMap((r) =>
    r.kind === "loop" && r.breakDetail !== null && !r.rebill ? [{ side, seq: r.seq, detail: r.breakDetail }] : [],
  );
}

/** `  #3  A $0.007712  B $0.014112  (+$0.006400)`: the three figures at one precision, adding up as shown. */
function sideBySideLine(label: string, a: number | null, b: number | null): string {
  const shown = dollarsSideBySide(a, b);
  return `  ${label}  A ${shown.a}  B ${shown.b}  (${shown.delta})`;
}

export async function writeCostDiff(
  diff: CostDiff,
  labels: DiffLabels,
  out: LineWriter,
  format: DiffFormat,
  width: number | null = null,
): Promise<void> {
  if (format === "json") {
    await out.line(costJson({ a: labels.a, b: labels.b, ...diff }));
  } else if (format === "markdown") {
    await out.line("");
    for (const line of headLines(diff)) await out.line(`${line}  `);
    await out.line("");
    await out.line(mdHeader(["seq", "A $", "B $", "Δ $"]));
    const row = (label: string | number, a: number | null, b: number | null) => {
      const shown = dollarsSideBySide(a, b);
      return mdRow([label, shown.a, shown.b, shown.delta]);
    };
    for (const r of diff.rows) await out.line(row(r.seq, r.a, r.b));
    await out.line(row("total", diff.total.a, diff.total.b));
    await out.line("");
    for (const line of breakLines(diff)) await out.line(`- ${line}`);
  } else {
    await out.line("");
    const lines = [
      "cost (predicted from each provider's cache rules, aligned by seq):",
      ...headLines(diff),
      ...diff.rows.map((r) => sideBySideLine(`#${r.seq}`, r.a, r.b)),
      sideBySideLine("total", diff.total.a, diff.total.b),
      ...breakLines(diff).map((line) => `  ${line}`),
    ];
    for (const line of wrapLines(lines, width)) await out.line(line);
  }
  await out.flush();
}

/** Which model each side is priced as, and from which prices. */
function headLines(diff: CostDiff): string[] {
  return [`A priced as ${diff.models.a.join(", ")}; B as ${diff.models.b.join(", ")}`, priceSourceLine(diff.prices)];
}

function breakLines(diff: CostDiff): string[] {
  const lines = diff.breaks.map((b) => `${b.side} #${b.seq} ${b.detail}: ${breakSentence(b)}`);
  for (const b of diff.freeBreaks)
    lines.push(`${b.side} #${b.seq} ${b.detail}: re-billed nothing (unbroken, the cache would have read no more)`);
  // A row's Δ is the difference of two whole requests' prices; a break's re-billing is told apart above it.
  if (diff.breaks.length === 0 && diff.freeBreaks.length === 0)
    lines.push("no prefix break on either side; each Δ above is A's and B's whole price apart");
  else lines.push("each Δ above is A's and B's whole price apart, not what a break re-billed");
  for (const u of diff.unpriced) lines.push(unpricedLine(u));
  return lines;
}
