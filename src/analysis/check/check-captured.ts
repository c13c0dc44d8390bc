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
import type { CacheSplit } from "../cost/cache-model.js";
import { cacheRates, percentOf, type RunCacheRates } from "../cost/cache-rates.js";
import { dollars } from "../cost/money.js";
import { type PricingTable, priceOf, requestDollars } from "../cost/pricing.js";
import { type CostOptions, type RunCost, runCost } from "../cost/run-cost.js";
import type { RunSource } from "../load-run.js";
import { PromptReader } from "../prompt-parts.js";
import { type CacheLimits, cacheGateFindings } from "./cache-gate.js";
import {
  type Baseline,
  type BaselineRequest,
  type Budget,
  baselineOf,
  compareWithBaseline,
  type Finding,
  newPrefixBreak,
  type ProbeCheck,
  readBaseline,
  type Tolerances,
  writeBaseline,
} from "./check.js";
import { type SourceLimits, sourceGate } from "./source-gate.js";

export interface CapturedCheckOptions {
  /** The check's name (default: the run's probe name as its records give it). */
  name?: string;
  baselinePath: string;
  /** The command that writes this run's baseline, for the hint when there is none. */
  updateCommand: string;
  /** What the missing-baseline line calls the run (default `this run`; a probe's check: `probe "p1"`). */
  subject?: string;
  tolerances: Tolerances;
  update: boolean;
  pricing: PricingTable;
  /** Price the run as this model (default: the model its requests name). */
  model?: string;
  /** A probe's run: the model its requests are priced as (`model.priceAs`). */
  priceAs?: CostOptions["priceAs"];
  /** Budgets from the command line; they replace the baseline file's own, field by field. */
  budget?: Budget;
  /** The floor and ceiling on the run's cache hit rate and write amplification; they replace the baseline's, field by field. */
  cacheLimits?: CacheLimits;
  /** `--update --force`: write the baseline even when the run breaks the budget or limits it keeps. */
  force?: boolean;
  /** The most tokens a source may take in one request (`--max-source`); given on the command line only. */
  sourceLimits?: SourceLimits;
}

/** A captured run as the check reads it: its records, their cost, and the baseline it would write. */
interface CheckedRun {
  probe: string;
  records: RequestRecord[];
  cost: RunCost;
  rates: RunCacheRates;
  actual: Baseline;
}

async function readCheckedRun(source: RunSource, options: CapturedCheckOptions): Promise<CheckedRun> {
  const records = [...source.records()];
  if (records.length === 0) throw new UserError(`run ${source.label}: expected at least one captured request`);
  const probe = options.name ?? records[0]!.probe;
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
  return { probe, records, cost, rates: cacheRates(cost), actual };
}

export async function checkCapturedRun(source: RunSource, options: CapturedCheckOptions): Promise<ProbeCheck> {
  const run = await readCheckedRun(source, options);
  if (options.update) return updateBaseline(run, options);
  if (!existsSync(options.baselinePath))
    throw inputError(
      options.baselinePath,
      undefined,
      `no baseline for ${options.subject ?? "this run"}; run '${options.updateCommand}' to write it`,
    );
  return compareCaptured(run, options);
}

/** `--update`: writes the run as the baseline, keeping the file's limits, unless the run breaks them. */
function updateBaseline(
  { probe, records, cost, rates, actual }: CheckedRun,
  options: CapturedCheckOptions,
): ProbeCheck {
  const kept = existsSync(options.baselinePath) ? keptLimits(options.baselinePath, probe) : {};
  const budget = { ...kept.budget, ...options.budget };
  const cacheLimits = { ...kept.cacheLimits, ...options.cacheLimits };
  const broken = [
    ...budgetFindings(probe, records, cost.total.predicted, budget).map((b) => `over budget: ${b.sentence}`),
    ...cacheGateFindings(probe, rates, cacheLimits).map((c) => c.sentence),
  ];
  // A baseline that fails its own budget would pass every later run as bad as this one.
  if (broken.length > 0 && !options.force) return refusedUpdate(probe, records.length, broken);
  writeBaseline(options.baselinePath, {
    ...actual,
    ...(Object.keys(budget).length > 0 ? { budget } : {}),
    ...(Object.keys(cacheLimits).length > 0 ? { cacheLimits } : {}),
  });
  return { probe, status: "updated", requests: records.length, regressions: [], savings: [] };
}

/** The run against its baseline file: the exact and tolerance comparisons, then budgets and cache limits. */
function compareCaptured(run: CheckedRun, options: CapturedCheckOptions): ProbeCheck {
  const { probe, records, cost, rates, actual } = run;
  const baseline = readBaseline(options.baselinePath, probe);
  checkKeptLimits(options.baselinePath, baseline);
  const check: ProbeCheck = {
    ...compareWithBaseline({ ...baseline, probe }, records, options.tolerances),
    prices: cost.prices.table,
  };
  const budget = { ...baseline.budget, ...options.budget };
  const cacheLimits = { ...baseline.cacheLimits, ...options.cacheLimits };
  const overBudget = budgetFindings(probe, records, cost.total.predicted, budget);
  const cacheFailures = cacheGateFindings(probe, rates, cacheLimits);
  const sources = sourceGate(probe, records, options.sourceLimits ?? {});
  const figures = [
    limitFigures(records, cost.total.predicted, rates, budget, cacheLimits) ?? [],
    sources.figures,
  ].flat();
  if (figures.length > 0) check.figures = figures.join(" · ");
  check.regressions.push(...[...overBudget, ...cacheFailures, ...sources.failures].map((b) => b.finding));
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
      ...sources.failures.map((s) => s.sentence),
    ];
    check.summary = leads.length > 0 ? `${probe}: ${leads.join("; ")}\n${changed}` : changed;
  }
  return check;
}

/** The budget and cache limits a baseline keeps, carried over when `--update` rewrites it. */
function keptLimits(path: string, probe: string): Pick<Baseline, "budget" | "cacheLimits"> {
  try {
    const { budget, cacheLimits } = readBaseline(path, probe);
    return { budget, cacheLimits };
  } catch {
    // A baseline that cannot be read is being replaced; it has no limits worth keeping.
    return {};
  }
}

/** The budget (numbers ≥ 0) and cache limits (shares from 0 to 1) as the baseline file keeps them. */
function checkKeptLimits(path: string, baseline: Baseline): void {
  for (const key of ["tokens", "dollars"] as const) {
    const limit = baseline.budget?.[key];
    if (limit !== undefined && (typeof limit !== "number" || limit < 0))
      throw inputError(path, `budget.${key}`, "expected a number ≥ 0");
  }
  for (const key of ["minHitRate", "maxWriteAmplification"] as const) {
    const limit = baseline.cacheLimits?.[key];
    if (limit !== undefined && (typeof limit !== "number" || limit < 0 || limit > 1))
      throw inputError(path, `cacheLimits.${key}`, "expected a share from 0 to 1");
  }
}

/** `--update` that would write a baseline breaking its own budget or cache limits: nothing written, exit 1. */
function refusedUpdate(probe: string, requests: number, broken: string[]): ProbeCheck {
  const finding: Finding = {
    probe,
    request: null,
    metric: "update",
    baseline: "within its budget",
    actual: broken.join("; "),
    tolerance: "budget",
  };
  return {
    probe,
    status: "regression",
    requests,
    regressions: [finding],
    savings: [],
    summary: `${probe}: --update refused, the run breaks the baseline's own limits: ${broken.join("; ")} (--force writes it anyway)`,
  };
}

/** `tokens 4,310 of 6,000 · $0.0123 of $0.02 · cache hit rate 71.3% (min 60%)`: the run against what it is held to. */
function limitFigures(
  records: RequestRecord[],
  dollarsSpent: number | null,
  rates: RunCacheRates,
  budget: Budget,
  limits: CacheLimits,
): string | undefined {
  const parts: string[] = [];
  const count = (n: number) => n.toLocaleString("en-US");
  if (budget.tokens !== undefined)
    parts.push(
      `${count(records.reduce((sum, r) => sum + (r.tokens?.total ?? 0), 0))} of ${count(budget.tokens)} prompt tokens`,
    );
  if (budget.dollars !== undefined && dollarsSpent !== null)
    parts.push(`${dollars(dollarsSpent)} of ${dollars(budget.dollars)}`);
  if (limits.minHitRate !== undefined)
    parts.push(`cache hit rate ${percentOf(rates.hitRate ?? 0)} (min ${percentOf(limits.minHitRate)})`);
  if (limits.maxWriteAmplification !== undefined)
    parts.push(
      `write amplification ${percentOf(rates.writeAmplification ?? 0)} (max ${percentOf(limits.maxWriteAmplification)})`,
    );
  return parts.length > 0 ? parts.join(" · ") : undefined;
}

const cacheOf = (s: CacheSplit) => ({ read: s.cacheRead, write5m: s.cacheWrite5m, write1h: s.cacheWrite1h });

/**
 * Lines of each request's system text, from the wire bodies (none when the run kept no payloads),
 * read part by part: a body's conversation is never joined nor parsed (prompt-parts.ts).
 */
function systemLineCounts(source: RunSource): Map<number, number> {
  const counts = new Map<number, number>();
  if (!source.hasPayloads) return counts;
  const prompts = new PromptReader();
  for (const payload of source.lazyPayloads()) {
    const { api, body } = payload.stored();
    if (api === null) continue;
    const text = prompts.of(api, body, () => payload.load().body).systemParts.join("\n");
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
function whatChanged(
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
  parts.push(...newBreaks(probe, baseline, actual));
  const perRequest = (b: Baseline) =>
    b.requests.reduce((sum, r) => sum + (r.tokens?.total ?? 0), 0) / Math.max(b.requests.length, 1);
  const tokenDelta = Math.round(perRequest(actual) - perRequest(baseline));
  if (tokenDelta !== 0) parts.push(`${signedText(tokenDelta)} tokens per request`);
  const dollarDelta = runDollars(actual, pricing, model) - runDollars(baseline, pricing, model);
  if (Number.isFinite(dollarDelta) && dollarDelta !== 0)
    parts.push(`${dollarDelta > 0 ? "+" : ""}${dollars(dollarDelta)} per run`);
  return `${probe}: ${parts.length > 0 ? parts.join(", ") : "no change in tools, system or tokens per request (see --verbose)"}`;
}

/**
 * The cache prefix breaks the baseline did not have, by the part they break in, each with the
 * requests it breaks: `cache prefix broken in system (requests 2, 3)` (a timestamp in the system prompt).
 */
function newBreaks(probe: string, baseline: Baseline, actual: Baseline): string[] {
  const byPart = new Map<string, number[]>();
  for (const base of baseline.requests) {
    const now = actual.requests.find((r) => r.seq === base.seq);
    const part = now?.prefix?.breakAt;
    if (part && newPrefixBreak(probe, base, now)) byPart.set(part, [...(byPart.get(part) ?? []), base.seq]);
  }
  return [...byPart].map(
    ([part, seqs]) =>
      `cache prefix broken in ${part} (${seqs.length === 1 ? "request" : "requests"} ${seqs.join(", ")})`,
  );
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
