/**
 * The suite's TMPDIR on a memory file system where there is one (test/fixtures/suite-tmpdir.ts), set
 * before the workers start so that they and every process they start keep their files there.
 *
 * One temp folder for the whole suite, where read-only runs of committed probes are kept and shared
 * between test files and worker processes (test/fixtures/shared-runs.ts); removed when the suite ends.
 *
 * And the suite's check that every test stopped what it started: each process still alive at the end
 * that descends from this one or carries the run's marker (test/fixtures/suite-processes.ts) is named on
 * stderr, killed, and fails the run.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { killProcesses, leftoverProcesses, SUITE_MARKER_ENV } from "./fixtures/suite-processes.js";
import { suiteTmpdir } from "./fixtures/suite-tmpdir.js";

declare module "vitest" {
  export interface ProvidedContext {
    sharedRunsRoot: string;
  }
}

/**
 * How long a process that a test has just stopped may take to go: a test that sent SIGTERM need not
 * wait for the exit, and a loaded machine can take seconds over a child's shutdown. It only delays a
 * run that leaked; a clean run finds nothing and does not wait.
 */
const EXIT_GRACE_MS = 15_000;

async function leftoversAfterGrace(marker: string) {
  const until = Date.now() + EXIT_GRACE_MS;
  let leftovers = leftoverProcesses(process.pid, marker);
  while (leftovers.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    leftovers = leftoverProcesses(process.pid, marker);
  }
  return leftovers;
}

export default function setup(project: TestProject): () => Promise<void> {
  // Both set before the workers start, so they and everything they start inherit them.
  const tmp = suiteTmpdir(process.env);
  if (tmp) process.env.TMPDIR = tmp.dir;
  const marker = randomUUID();
  process.env[SUITE_MARKER_ENV] = marker;
  const root = mkdtempSync(join(tmpdir(), "pp-shared-runs-"));
  project.provide("sharedRunsRoot", root);
  return async () => {
    try {
      rmSync(root, { recursive: true, force: true });
      await failOnLeftovers(marker);
    } finally {
      tmp?.remove();
    }
  };
}

async function failOnLeftovers(marker: string): Promise<void> {
  const leftovers = await leftoversAfterGrace(marker);
  if (leftovers.length === 0) return;
  await killProcesses(leftovers);
  for (const p of leftovers) console.error(`left running by a test: pid ${p.pid}: ${p.command}`);
  process.exitCode = 1;
  throw new Error(`${leftovers.length} process(es) started by the tests were still running at the end (killed)`);
}
