/**
 * Issue 35 ("two checkouts share one workspace folder") and 37 ("nothing recorded depends on where a
 * clone sits"): two copies of the checkout in folders of different names run the same probes at the
 * same time. Neither waits for the other, and both write the same baselines, the shipped ones
 * included. A barrier probe proves the two runs were in their workspaces at once: its shell command
 * leaves a mark named after its own working directory and waits for a second mark, so two runs that
 * shared one workspace folder (or took turns) never meet and fail.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import type { Baseline } from "../../src/analysis/check/check.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { stopAfterTest } from "../fixtures/children.js";
import { type CliResult, defaultWorkspaceRootsOf, withoutWorkspaceRoot } from "./scratch-cli.js";

/**
 * The copies live inside this checkout (a folder git ignores), so Node finds its node_modules above
 * them as it would in a clone of their own; everything a run reads of the checkout is copied.
 */
const scratch = (() => {
  mkdirSync(join(PROJECT_ROOT, ".vitest-tmp"), { recursive: true });
  return mkdtempSync(join(PROJECT_ROOT, ".vitest-tmp", "checkouts-"));
})();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const barrierProbe = (marks: string) => `name: barrier
agent:
  tools: bash
  noSkills: true
model:
  script:
    - call: bash
      args:
        command: >-
          touch "${marks}/$(pwd | cksum | cut -d' ' -f1)";
          for i in $(seq 900); do [ "$(ls "${marks}" | wc -l)" -ge 2 ] && echo MET && exit 0; sleep 0.1; done;
          echo ALONE
    - text: DONE
prompts: ["Wait for the other checkout."]
expect:
  requests: 2
  toolResults: { 1: { equals: MET } }
`;

/** A checkout under `name`: what a run reads of one (the build, probes, fixtures, profiles). */
function checkoutCopy(name: string, marks: string): string {
  const dir = join(scratch, name);
  for (const part of ["dist", "probes", "fixtures", "profiles", "package.json"])
    cpSync(join(PROJECT_ROOT, part), join(dir, part), { recursive: true });
  writeFileSync(join(dir, "probes", "barrier.yaml"), barrierProbe(marks));
  return dir;
}

/** `node <checkout>/dist/cli/main.js <args>` from the checkout, with the default workspace root. */
function cliOf(checkout: string, args: string[]): Promise<CliResult> {
  const env = withoutWorkspaceRoot();
  const child: ChildProcess = stopAfterTest(
    spawn(process.execPath, [join(checkout, "dist", "cli", "main.js"), ...args], { cwd: checkout, env }),
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

describe("two checkouts in folders of different names", () => {
  it("run the same probes at once, neither waiting, and write the same baselines", async () => {
    const marks = join(scratch, "marks");
    mkdirSync(marks);
    const checkouts = [checkoutCopy("payload-probe", marks), checkoutCopy("another-clone-of-it", marks)];
    const roots = defaultWorkspaceRootsOf(checkouts.map((dir) => join(dir, "runs")));
    onTestFinished(roots.remove);
    const results = await Promise.all(checkouts.map((dir) => cliOf(dir, ["check", "barrier", "p1", "--update"])));
    for (const result of results) {
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stderr).not.toMatch(/waiting for/);
    }
    const baseline = (dir: string, probe: string) =>
      readFileSync(join(dir, "probes", "baselines", `${probe}.json`), "utf8");
    for (const probe of ["barrier", "p1"]) expect(baseline(checkouts[1]!, probe)).toBe(baseline(checkouts[0]!, probe));
    // The figures of the baseline this checkout ships, made with the workspace at /tmp/payload-probe.
    const figures = (dir: string) =>
      (JSON.parse(baseline(dir, "p1")) as Baseline).requests.map(({ tokens, bytes, hashes }) => ({
        tokens,
        bytes,
        hashes,
      }));
    expect(figures(checkouts[0]!)).toEqual(figures(PROJECT_ROOT));
  });
});
