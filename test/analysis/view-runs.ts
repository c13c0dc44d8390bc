/**
 * Committed probes run into one temp folder for the show and view tests: the runs those commands
 * read, made the way a user makes them, never the checkout's runs/.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadProbeFile, resolveProbePath } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";

/** Runs each probe; returns the temp folder and its runs/ (one folder per probe). */
export async function runProbesInto(names: string[]): Promise<{ base: string; runs: string }> {
  const base = mkdtempSync(join(tmpdir(), "pp-view-"));
  const runs = join(base, "runs");
  for (const name of names) {
    const probe = loadProbeFile(resolveProbePath(name, PROJECT_ROOT), PROJECT_ROOT);
    await runProbe(probe, { runsDir: runs, workspaceRoot: join(base, "ws"), database: false });
  }
  return { base, runs };
}
