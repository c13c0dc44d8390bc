/**
 * The CI gate for any captured run — a real agent recorded through `proxy` or `mock`, or a probe's
 * run — against a baseline file: the same exact and tolerance comparisons as `check` of a probe,
 * plus budgets in prompt tokens and dollars, and one line per run saying what changed
 * (`p1: tools +1 (a_tool1), system +1 line, +214 tokens per request, +$0.0031 per run`).
 *
 * The baseline of a captured run also keeps each request's system line count and predicted cache
 * split, so the dollars on both sides are priced with today's table.
 */
import { existsSync } from "node:fs";
import type { RequestRecord } from "../../capture/types.js";
import { inputError, UserError } from "../../errors.js";
import { codecFor } from "../../providers/codecs.js";
import type { CacheSplit } from "../cost/cache-model.js";
import { cacheRates } from "../cost/cache-rates.js";
import { dollars } from "../cost/money.js";
import { type PricingTable, priceOf, requestDollars } from "../cost/pricing.js";
import { type CostOptions, runCost } from "../cost/run-cost.js";
import type { RunSource } from "../load-run.js";
import { type CacheLimits, cacheGateFindings } from "./cache-gate.js";
import {
  type Baseline,
  type BaselineRequest,
  type Budget,
  baselineOf,
  compareWithBaseline,
  type Finding,
  type ProbeCheck,
  readBaseline,
  type Tolerances,
  writeBaseline,
} from "./check.js";

export interface CapturedCheckOptions {
  baselinePath: string;
  /** The command that writes this run's baseline, for the hint when there is none. */
  updateCommand: string;
  tolerances: Tolerances;
  update: boolean;
  pricing: PricingTable;
  /** Price the run as this model (default: the model its requests name). */
  model?: string;
  /** A probe's run: the model its requests are priced as (`model.priceAs`). */
  priceAs?: CostOptions["priceAs"];
  /** Budgets from the command line; they replace the baseline file's own, field by field. */
  budget?: Budget;
  /** The floor and ceiling on the run's cache hit rate and write amplification (command line only). */
  cacheLimits?: CacheLimits;
}

export async function checkCapturedRun(source: RunSource, options: CapturedCheckOptions): Promise<ProbeCheck> {
  const records = [...source.records()];
  if (records.length === 0) throw new UserError(`run ${source.label}: expected at least one captured request`);
  const probe = records[0]!.probe;
  const cost = await runCost(source, { pricing: options.pricing, model: options.model, priceAs: options.priceAs });
  const lines = systemLineCounts(source);
  const actual: Baseline = {
    ...baselineOf(probe, records),
    model: options.model ?? records[0]!.model,
    requests: baselineOf(probe, records).requests.map((r, i) => ({
      ...r,
      ...(lines.has(r.seq) ? { systemLines: lines.get(r.seq)! } : {}),
      cache: cacheOf(cost.requests[i]!.predicted),
      hashes: records[i]!.hashes,
      prefix: records[i]!.prefix,
    })),
  };
  if (options.update) {
    const kept = existsSync(options.baselinePath) ? budgetOf(options.baselinePath, probe) : undefined;
    const budget = { ...kept, ...options.budget };
    writeBaseline(options.baselinePath, { ...actual, ...(Object.keys(budget).length > 0 ? { budget } : {}) });
    return { probe, status: "updated", requests: records.length, regressions: [], savings: [] };
  }
  if (!existsSync(options.baselinePath))
    throw inputError(
      options.baselinePath,
      undefined,
      `no baseline for this run; run '${options.updateCommand}' to write it`,
    );
  const baseline = readBaseline(options.baselinePath, probe);
  for (const key of ["tokens", "dollars"] as const) {
    const limit = baseline.budget?.[key];
    if (limit !== undefined && (typeof limit !== "number" || limit < 0))
      throw inputError(options.baselinePath, `budget.${key}`, "expected a number ≥ 0");
  }
  const check: ProbeCheck = {
    ...compareWithBaseline({ ...baseline, probe }, records, options.tolerances),
    prices: cost.prices.table,
  };
  const overBudget = budgetFindings(probe, records, cost.total.predicted, { ...baseline.budget, ...options.budget });
  const cacheFailures = cacheGateFindings(probe, cacheRates(cost), options.cacheLimits ?? {});
  check.regressions.push(...[...overBudget, ...cacheFailures].map((b) => b.finding));
  if (check.regressions.length > 0) {
    check.status = "regression";
    const changed = whatChanged(
      probe,
      baseline,
      actual,
      options.pricing,
      options.model ?? options.priceAs?.(records[0]!),
    );
    // A budget or cache limit failure leads: the figure, the limit and the excess, before what changed.
    const leads = [
      ...(overBudget.length > 0 ? [`over budget: ${overBudget.map((b) => b.sentence).join("; ")}`] : []),
      ...cacheFailures.map((c) => c.sentence),
    ];
    check.summary = leads.length > 0 ? `${probe}: ${leads.join("; ")}\n${changed}` : changed;
  }
  return check;
}

function budgetOf(path: string, probe: string): Budget | undefined {
  try {
    return readBaseline(path, probe).budget;
  } catch {
    // A baseline that cannot be read is being replaced; it has no budget worth keeping.
    return undefined;
  }
}

const cacheOf = (s: CacheSplit) => ({ read: s.cacheRead, write5m: s.cacheWrite5m, write1h: s.cacheWrite1h });

/** Lines of each request's system text, from the wire bodies (none when the run kept no payloads). */
function systemLineCounts(source: RunSource): Map<number, number> {
  const counts = new Map<number, number>();
  if (!source.hasPayloads) return counts;
  for (const payload of source.payloads()) {
    if (payload.api === null) continue;
    const text = codecFor(payload.api).dissect(payload.body).systemParts.join("\n");
    counts.set(payload.seq, text === "" ? 0 : text.split("\n").length);
  }
  return counts;
}

/** Each budget the run exceeds: its finding, and the sentence that names figure, budget and excess. */
function budgetFindings(
  probe: string,
  records: RequestRecord[],
  dollarsSpent: number | null,
  budget: Budget,
): { finding: Finding; sentence: string }[] {
  const findings: { finding: Finding; sentence: string }[] = [];
  const tokens = records.reduce((sum, r) => sum + (r.tokens?.total ?? 0), 0);
  const count = (n: number) => n.toLocaleString("en-US");
  if (budget.tokens !== undefined && tokens > budget.tokens)
    findings.push({
      finding: {
        probe,
        request: null,
        metric: "budget.tokens",
        baseline: `≤ ${budget.tokens}`,
        actual: String(tokens),
        tolerance: "budget",
      },
      sentence: `${count(tokens)} prompt tokens, budget ${count(budget.tokens)}, ${count(tokens - budget.tokens)} over`,
    });
  if (budget.dollars !== undefined) {
    if (dollarsSpent === null)
      throw new UserError(
        `a dollar budget needs a priced model: ${records[0]!.model} has no price (name one with --model, or add it with --pricing)`,
      );
    if (dollarsSpent > budget.dollars)
      findings.push({
        finding: {
          probe,
          request: null,
          metric: "budget.dollars",
          baseline: `≤ ${dollars(budget.dollars)}`,
          actual: dollars(dollarsSpent),
          tolerance: "budget",
        },
        sentence: `${dollars(dollarsSpent)} predicted, budget ${dollars(budget.dollars)}, ${dollars(dollarsSpent - budget.dollars)} over`,
      });
  }
  return findings;
}

const signedText = (n: number) => (n > 0 ? `+${n}` : `${n}`);

/** `p1: tools +1 (a_tool1), system +1 line, +214 tokens per request, +$0.0031 per run`. */
export function whatChanged(
  probe: string,
  baseline: Baseline,
  actual: Baseline,
  pricing: PricingTable,
  model?: string,
): string {
  const parts: string[] = [];
  if (baseline.requests.length !== actual.requests.length)
    parts.push(`requests ${baseline.requests.length}→${actual.requests.length}`);
  const toolsOf = (b: Baseline) => new Set(b.requests.flatMap((r) => r.tools));
  const [was, now] = [toolsOf(baseline), toolsOf(actual)];
  const added = [...now].filter((t) => !was.has(t));
  const removed = [...was].filter((t) => !now.has(t));
  if (added.length > 0) parts.push(`tools +${added.length} (${added.join(", ")})`);
  if (removed.length > 0) parts.push(`tools -${removed.length} (${removed.join(", ")})`);
  const lines = (b: Baseline) => Math.max(...b.requests.map((r) => r.systemLines ?? Number.NaN));
  const lineDelta = lines(actual) - lines(baseline);
  if (Number.isFinite(lineDelta) && lineDelta !== 0)
    parts.push(`system ${signedText(lineDelta)} ${lineDelta === 1 || lineDelta === -1 ? "line" : "lines"}`);
  const perRequest = (b: Baseline) =>
    b.requests.reduce((sum, r) => sum + (r.tokens?.total ?? 0), 0) / Math.max(b.requests.length, 1);
  const tokenDelta = Math.round(perRequest(actual) - perRequest(baseline));
  if (tokenDelta !== 0) parts.push(`${signedText(tokenDelta)} tokens per request`);
  const dollarDelta = runDollars(actual, pricing, model) - runDollars(baseline, pricing, model);
  if (Number.isFinite(dollarDelta) && dollarDelta !== 0)
    parts.push(`${dollarDelta > 0 ? "+" : ""}${dollars(dollarDelta)} per run`);
  return `${probe}: ${parts.length > 0 ? parts.join(", ") : "no change in tools, system or tokens per request (see --verbose)"}`;
}

/** Predicted prompt dollars of a baseline's requests at today's prices; NaN when unpriced or without cache splits. */
function runDollars(b: Baseline, pricing: PricingTable, model?: string): number {
  const price = priceOf(pricing, model ?? b.model ?? "");
  if (!price) return Number.NaN;
  return b.requests.reduce((sum, r) => sum + (r.cache && r.tokens ? requestDollars(price, splitOf(r)) : Number.NaN), 0);
}

function splitOf(r: BaselineRequest): CacheSplit {
  const c = r.cache!;
  const input = r.tokens!.total;
  return {
    inputTokens: input,
    cacheRead: c.read,
    cacheWrite5m: c.write5m,
    cacheWrite1h: c.write1h,
    uncached: input - c.read - c.write5m - c.write1h,
  };
}
