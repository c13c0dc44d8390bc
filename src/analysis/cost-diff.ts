/**
 * `diff --cost`: the money side of a diff. Each request's predicted dollars on both sides (aligned
 * by seq) with the delta, the runs' totals, and for each prefix break what it cost over the rest of
 * its run: "this break re-billed 2,972 tokens × 1 request = $0.0045" — the cached tokens the break
 * made the provider bill again, priced as the difference from reading them from the cache.
 */
import { breakSentence } from "./cost-render.js";
import type { DiffFormat, DiffLabels } from "./diff-render.js";
import { mdHeader, mdRow } from "./format.js";
import type { LineWriter } from "./output.js";
import { dollars, money, PRICE_UNKNOWN } from "./pricing.js";
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
  rows: CostDiffRow[];
  total: { a: number | null; b: number | null; delta: number | null };
  breaks: BreakCost[];
  unpriced: string[];
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
  return {
    rows,
    total: {
      a: a.total.predicted,
      b: b.total.predicted,
      delta: a.total.predicted === null || b.total.predicted === null ? null : b.total.predicted - a.total.predicted,
    },
    breaks: [...breaksOf("A", a.requests), ...breaksOf("B", b.requests)],
    unpriced: [...new Set([...a.unpriced, ...b.unpriced])],
  };
}

function breaksOf(side: "A" | "B", requests: RequestCost[]): BreakCost[] {
  return requests.flatMap((r) => (r.rebill ? [{ side, seq: r.seq, detail: r.breakDetail ?? "", ...r.rebill }] : []));
}

const signedMoney = (amount: number | null) =>
  amount === null ? "—" : amount > 0 ? `+${dollars(amount)}` : dollars(amount);

export async function writeCostDiff(
  diff: CostDiff,
  labels: DiffLabels,
  out: LineWriter,
  format: DiffFormat,
): Promise<void> {
  if (format === "json") {
    await out.line(JSON.stringify({ a: labels.a, b: labels.b, ...diff }, null, 2));
  } else if (format === "markdown") {
    await out.line("");
    await out.line(mdHeader(["seq", "A $", "B $", "Δ $"]));
    for (const r of diff.rows) await out.line(mdRow([r.seq, money(r.a), money(r.b), signedMoney(r.delta)]));
    await out.line(mdRow(["total", money(diff.total.a), money(diff.total.b), signedMoney(diff.total.delta)]));
    await out.line("");
    for (const line of breakLines(diff)) await out.line(`- ${line}`);
  } else {
    await out.line("");
    await out.line("cost (predicted from each provider's cache rules, aligned by seq):");
    for (const r of diff.rows)
      await out.line(`  #${r.seq}  A ${money(r.a)}  B ${money(r.b)}  (${signedMoney(r.delta)})`);
    await out.line(`  total  A ${money(diff.total.a)}  B ${money(diff.total.b)}  (${signedMoney(diff.total.delta)})`);
    for (const line of breakLines(diff)) await out.line(`  ${line}`);
  }
  await out.flush();
}

function breakLines(diff: CostDiff): string[] {
  const lines = diff.breaks.map((b) => `${b.side} #${b.seq} ${b.detail}: ${breakSentence(b)}`);
  if (diff.breaks.length === 0) lines.push("no prefix break lost cached tokens on either side");
  if (diff.unpriced.length > 0)
    lines.push(
      `${PRICE_UNKNOWN} for ${diff.unpriced.join(", ")}: name a priced model with --model, or add one with --pricing`,
    );
  return lines;
}
