import { constants } from "node:os";
import { interruptOpenRuns } from "../capture/capture-run.js";
import { killRunningProcesses } from "../processes/run-process.js";

/**
 * On SIGINT or SIGTERM a command that runs probes marks its open runs `interrupted` (with the requests
 * they captured) before it exits, so the database never keeps a `running` row for a run that is over.
 * Tool programs still running are killed with it. The exit code is the shell's for a signal, 128 +
 * its number.
 */
export function interruptRunsOnSignal(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killRunningProcesses();
      interruptOpenRuns();
      process.exit(128 + constants.signals[signal]);
    });
  }
}
