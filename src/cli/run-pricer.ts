import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CostOptions, RunCost } from "../analysis/cost/run-cost.js";
import type { RunSource } from "../analysis/load-run.js";
import type { RequestRecord } from "../capture/types.js";
import { UserError } from "../errors.js";
import { loadProbeFile } from "../probes/load.js";
import { probePriceAs } from "../probes/price-as.js";
import { PROJECT_ROOT } from "../project-root.js";
import { isSafeName } from "../safe-path.js";

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
  const { loadPricing } = await import("../analysis/cost/pricing.js");
  const pricing = loadPricing(flags.pricing);
  return async (source, model = flags.model, priceAs = undefined) =>
    runCost(source, {
      pricing,
      model,
      priceAs: model === undefined ? (priceAs ?? (await priceAsOfRun(source))) : undefined,
    });
}

/** The probe whose scripted model made the run, when probes/<probe>.yaml names one; else nothing. */
export async function priceAsOfRun(
  source: RunSource,
): Promise<((record: RequestRecord) => string | undefined) | undefined> {
  let first: RequestRecord | undefined;
  for (const record of source.records()) {
    first = record;
    break;
  }
  if (!first || !isSafeName(first.probe)) return undefined;
  const file = join(PROJECT_ROOT, "probes", `${first.probe}.yaml`);
  if (!existsSync(file)) return undefined;
  try {
    return probePriceAs(await loadProbeFile(file, PROJECT_ROOT));
  } catch (error) {
    // A probe file that no longer loads costs only the default price; the run's own model is priced.
    if (error instanceof UserError) return undefined;
    throw error;
  }
}
