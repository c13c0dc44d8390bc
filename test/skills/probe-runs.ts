/** Runs a checked-in probe in its own temp folders, so tests never touch runs/ or each other. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadProbeFile, resolveProbePath } from "../../src/probes/load.js";
import type { RunResult } from "../../src/probes/run-options.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";

export async function runCheckedInProbe(name: string): Promise<RunResult> {
  const tmp = mkdtempSync(join(tmpdir(), `payload-probe-${name}-`));
  try {
    const probe = await loadProbeFile(resolveProbePath(name, PROJECT_ROOT), PROJECT_ROOT);
    return await runProbe(probe, { runsDir: join(tmp, "runs"), workspaceRoot: join(tmp, "ws"), database: false });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
