/**
 * Committed probes' runs in one temp folder for the show and view tests: the runs those commands
 * read, made the way a user makes them, never the checkout's runs/. They are copies of the suite's
 * shared runs (test/fixtures/shared-runs.ts), since the commands may write into a run's folder.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { runInProcess } from "../../fixtures/cli-in-process.js";
import { copySharedRuns } from "../../fixtures/shared-runs.js";
import { runHandProbe } from "../hand-runs.js";

/** A command that must succeed, run in this process (test/fixtures/cli-in-process.ts): the page is what is tested. */
export async function viewCli(...args: string[]): Promise<string> {
  const child = await runInProcess({}, ...args);
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

/**
 * A run of `name` in `base`'s runs/ on Anthropic Messages whose prompts are long enough that the run
 * stores its bodies in parts (capture/body-parts.ts): three requests, each sending the ones before.
 */
export async function runPartedProbe(base: string, name: string): Promise<void> {
  const long = (word: string) => Array.from({ length: 2500 }, (_, i) => `${word}${i % 17}`).join(" ");
  await runHandProbe(
    base,
    name,
    `name: ${name}
agent: { tools: read, noSkills: true }
model:
  api: anthropic-messages
  script:
    - text: first answer
    - text: second answer
    - text: done
prompts:
  - "${long("alpha")}"
  - "${long("beta")}"
  - "${long("gamma")}"
`,
  );
}
