import { type FidelityRow, fidelityRow } from "../analysis/fidelity.js";
import type { RunResult } from "./run-options.js";

/**
 * The runtime's and pi's results of each probe side by side (`run --agent both`, `check --agent
 * both`); a difference in a probe that states its pi expectations apart is a recorded finding.
 */
export function fidelityRows(results: RunResult[]): FidelityRow[] {
  const rows: FidelityRow[] = [];
  for (const runtime of results.filter((r) => r.agent !== "pi")) {
    const pi = results.find((r) => r.agent === "pi" && r.probe.name === runtime.probe.name);
    if (!pi) continue;
    const side = pi.skipped ? { skipped: pi.skipped } : pi.records;
    rows.push(fidelityRow(runtime.probe.name, runtime.records, side, runtime.probe.pi?.expect !== undefined));
  }
  return rows;
}

/** A difference between the runtime and pi that no probe records as a finding fails the command. */
export const unexplainedDifference = (rows: FidelityRow[]) => rows.some((row) => row.verdict === "differs");
