/**
 * `check --run … --min-cache-hit R --max-write-amplification R`: the run's prompt cache held to a floor
 * on its hit rate and a ceiling on its write amplification (cost/cache-rates.ts), each failure one
 * finding and one sentence.
 */
import { percentOf, type RunCacheRates } from "../cost/cache-rates.js";
import type { Finding } from "./check.js";

export interface CacheLimits {
  /** The lowest hit rate that passes, 0 to 1. */
  minHitRate?: number;
  /** The highest write amplification that passes, 0 to 1. */
  maxWriteAmplification?: number;
}

export function cacheGateFindings(
  probe: string,
  rates: RunCacheRates,
  limits: CacheLimits,
): { finding: Finding; sentence: string }[] {
  const found: { finding: Finding; sentence: string }[] = [];
  const basis =
    rates.basis === "provider"
      ? "by the provider's usage"
      : `by ${rates.basis === "model" ? "our cache model" : "usage and our cache model"}`;
  const fail = (metric: string, limit: string, actual: string, sentence: string) =>
    found.push({ finding: { probe, request: null, metric, baseline: limit, actual, tolerance: "limit" }, sentence });
  const hit = rates.hitRate ?? 0;
  if (limits.minHitRate !== undefined && hit < limits.minHitRate)
    fail(
      "cache.hitRate",
      `≥ ${percentOf(limits.minHitRate)}`,
      percentOf(hit),
      `cache hit rate ${percentOf(hit)} is below the minimum ${percentOf(limits.minHitRate)} (${basis})`,
    );
  const amplification = rates.writeAmplification ?? 0;
  if (limits.maxWriteAmplification !== undefined && amplification > limits.maxWriteAmplification)
    fail(
      "cache.writeAmplification",
      `≤ ${percentOf(limits.maxWriteAmplification)}`,
      percentOf(amplification),
      `cache write amplification ${percentOf(amplification)} is above the maximum ${percentOf(limits.maxWriteAmplification)} (${basis})`,
    );
  return found;
}
