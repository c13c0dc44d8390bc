import type { RunSource } from "../analysis/load-run.js";
import type { RunCost } from "../analysis/run-cost.js";

/** The `--model` and `--pricing` flags of the commands that put money on a run. */
export interface PriceFlags {
  model?: string;
  pricing?: string;
}

/**
 * Prices runs with the cost model, the pricing table loaded once. The table's validation and the cost
 * model are imported here, on demand, so a command that prints no money never loads them.
 */
export async function runPricer(flags: PriceFlags): Promise<(source: RunSource) => Promise<RunCost>> {
  const { runCost } = await import("../analysis/run-cost.js");
  const { loadPricing } = await import("../analysis/pricing.js");
  const options = { pricing: loadPricing(flags.pricing), model: flags.model };
  return (source) => runCost(source, options);
}
