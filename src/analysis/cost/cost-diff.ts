/**
 * `diff --cost`: the money side of a diff. Each request's predicted dollars on both sides (aligned
 * by seq) with the delta, the runs' totals, and for each prefix break what it cost over the rest of
 * its run: "this break re-billed 2,972 tokens × 1 request = $0.0045" — the cached tokens the break
 * made the provider bill again, priced as the difference from reading them from the cache.
 */

import { wrapLines } from "../../text-wrap.js";
import type { DiffFormat, DiffLabels } from "../diff/diff-render.js";
import { mdHeader, mdRow } from "../format.js";
import type { LineWriter } from "../table/output.js";
import { breakSentence, costJson, priceSourceLine, unpricedLine } from "./cost-render.js";
import { dollars } from "./money.js";
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
    unpriced,
  };
}

function breaksOf(side: "A" | "B", requests: RequestCost[]): BreakCost[] {
  return requests.flatMap((r) => (r.rebill ? [{ side, seq: r.seq, detail: r.breakDetail ?? "", ...r.rebill }] : []));
}

const signedMoney = (amount: number | null) =>
  amount === null ? "—" : amount > 0 ? `+${dollars(amount)}` : dollars(amount);
/** A side's dollars, or a dash where its model has no price (a line under the figures says once why). */
const sideMoney = (amount: number | null) => (amount === null ? "—" : dollars(amount));

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
    for (const r of diff.rows) await out.line(mdRow([r.seq, sideMoney(r.a), sideMoney(r.b), signedMoney(r.delta)]));
    await out.line(mdRow(["total", sideMoney(diff.total.a), sideMoney(diff.total.b), signedMoney(diff.total.delta)]));
    await out.line("");
    for (const line of breakLines(diff)) await out.line(`- ${line}`);
  } else {
    await out.line("");
    const lines = [
      "cost (predicted from each provider's cache rules, aligned by seq):",
      ...headLines(diff),
      ...diff.rows.map((r) => `  #${r.seq}  A ${sideMoney(r.a)}  B ${sideMoney(r.b)}  (${signedMoney(r.delta)})`),
      `  total  A ${sideMoney(diff.total.a)}  B ${sideMoney(diff.total.b)}  (${signedMoney(diff.total.delta)})`,
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
  if (diff.breaks.length === 0) lines.push("no prefix break lost cached tokens on either side");
  for (const u of diff.unpriced) lines.push(unpricedLine(u));
  return lines;
}
