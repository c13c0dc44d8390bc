import { existsSync } from "node:fs";
import type { RunCacheTotals } from "../analysis/cost/cache-rates.js";
import type { PricingTable } from "../analysis/cost/pricing.js";
import type { CostOptions, RunCost } from "../analysis/cost/run-cost.js";
import type { RunSource } from "../analysis/load-run.js";
import type { RecordSummary } from "../capture/run-index.js";
import { UserError } from "../errors.js";
import { isSafeName } from "../files/safe-path.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { PROBE_MODEL_EVENT, type ProbeModelEvent, probePriceAs, readProbeModelEvent } from "../probes/price-as.js";
import { probeRoots } from "../probes/probe-names.js";
import { PROJECT_ROOT } from "../project-root.js";
import { breakpointCache } from "../providers/cache-rules.js";

/** The `--model` and `--pricing` flags of the commands that put money on a run. */
export interface PriceFlags {
  model?: string;
  pricing?: string;
}

/**
 * Prices one run; `model` replaces the flags' `--model` (diff's `--model-a` / `--model-b`); `priceAs`
 * is the probe's rule when the caller has the probe (else it is read from probes/<probe>.yaml).
 */
export type RunPricer = (source: RunSource, model?: string, priceAs?: CostOptions["priceAs"]) => Promise<RunCost>;

/**
 * Prices runs with the cost model, the pricing table loaded once. The table's validation and the cost
 * model are imported here, on demand, so a command that prints no money never loads them. A run of a
 * shipped probe is priced as its probe's `model.priceAs` (read from probes/<probe>.yaml).
 */
export async function runPricer(flags: PriceFlags): Promise<RunPricer> {
  const { runCost } = await import("../analysis/cost/run-cost.js");
  const pricing = await loadPricing(flags);
  return async (source, model = flags.model, priceAs = undefined) =>
    runCost(source, await costOptions(pricing, source, model, priceAs));
}

/** A pass over a run's summaries that tallies its cache rates on the way (RunCosting.observing). */
export interface RatedPass {
  observing(summaries: Iterable<RecordSummary>): Iterable<RecordSummary>;
  /** The run's rates: as the pass tallied them, or priced whole when it could not price every record. */
  totals(): Promise<RunCacheTotals>;
}

/** `source` priced as a pass over its summaries reads them; `model` as for RunPricer. */
export async function ratedPass(flags: PriceFlags, source: RunSource, model = flags.model): Promise<RatedPass> {
  const { RunCosting, runCost } = await import("../analysis/cost/run-cost.js");
  const { CacheRateTally, cacheRates } = await import("../analysis/cost/cache-rates.js");
  const options = await costOptions(await loadPricing(flags), source, model, undefined);
  const costing = new RunCosting(source, options);
  // A Messages or Converse run that kept its bodies has breakpoints to count (a proxied Claude Code session, say):
  // the tokenizer is loaded before the pass, which cannot stop to wait for it.
  if (source.hasPayloads && breakpointCache(firstSummary(source)?.api ?? "")) await costing.loadCounter();
  const tally = new CacheRateTally();
  return {
    observing: (summaries) => costing.observing(summaries, (cost) => tally.add(cost)),
    totals: async () => (costing.pricedAll ? tally.totals() : cacheRates(await runCost(source, options))),
  };
}

async function loadPricing(flags: PriceFlags): Promise<PricingTable> {
  return (await import("../analysis/cost/pricing.js")).loadPricing(flags.pricing);
}

async function costOptions(
  pricing: PricingTable,
  source: RunSource,
  model: string | undefined,
  priceAs: CostOptions["priceAs"],
): Promise<CostOptions> {
  return { pricing, model, priceAs: model === undefined ? (priceAs ?? (await priceAsOfRun(source))) : undefined };
}

/**
 * How a probe's run is priced: as its first event (`probe`) says, which every probe run and every
 * `mock` of a probe records, wherever the probe file is kept; for a run from before that event, as
 * the `probes/<probe>.yaml` its name finds says (the user's folder's, then the checkout's); else nothing.
 */
export async function priceAsOfRun(
  source: RunSource,
): Promise<((record: RecordSummary) => string | undefined) | undefined> {
  const recorded = recordedProbeModel(source);
  if (recorded) return probePriceAs(recorded);
  const first = firstSummary(source);
  if (!first || !isSafeName(first.probe)) return undefined;
  const file = resolveProbePath(first.probe, probeRoots());
  if (!existsSync(file)) return undefined;
  try {
    return probePriceAs(await loadProbeFile(file, PROJECT_ROOT));
  } catch (error) {
    // A probe file that no longer loads costs only the default price; the run's own model is priced.
    if (error instanceof UserError) return undefined;
    throw error;
  }
}

/** The scripted model a run's first event records, when it is a probe's (only the first is read). */
function recordedProbeModel(source: RunSource): ProbeModelEvent | null {
  for (const event of source.events()) return event.type === PROBE_MODEL_EVENT ? readProbeModelEvent(event) : null;
  return null;
}

function firstSummary(source: RunSource): RecordSummary | undefined {
  for (const record of source.summaries()) return record;
  return undefined;
}
