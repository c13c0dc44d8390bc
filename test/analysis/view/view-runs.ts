/**
 * Committed probes' runs in one temp folder for the show and view tests: the runs those commands
 * read, made the way a user makes them, never the checkout's runs/. They are copies of the suite's
 * shared runs (test/fixtures/shared-runs.ts), since the commands may write into a run's folder.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { copySharedRuns } from "../../fixtures/shared-runs.js";

/** `payload-probe <args>` from the build, which must print nothing on stderr and exit 0; its stdout. */
export function viewCli(...args: string[]): string {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(child.stderr).toBe("");
  expect(child.status).toBe(0);
  return child.stdout;
}

/** Copies each probe's run in; returns the temp folder and its runs/ (one folder per probe). */
export async function runProbesInto(names: string[]): Promise<{ base: string; runs: string }> {
  const base = mkdtempSync(join(tmpdir(), "pp-view-"));
  const runs = join(base, "runs");
  await copySharedRuns(names, runs);
  return { base, runs };
}
