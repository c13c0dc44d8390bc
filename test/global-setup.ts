/**
 * One temp folder for the whole suite, where read-only runs of committed probes are kept and shared
 * between test files and worker processes (test/fixtures/shared-runs.ts); removed when the suite ends.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    sharedRunsRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), "pp-shared-runs-"));
  project.provide("sharedRunsRoot", root);
  return () => rmSync(root, { recursive: true, force: true });
}
