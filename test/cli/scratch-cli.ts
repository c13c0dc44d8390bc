/**
 * The built CLI as a child process inside a scratch folder: its probe workspaces under
 * `<scratch>/ws/root` (tests pass `--runs` under the scratch folder too), so nothing outside it is touched.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { checkoutWorkspaceRoot } from "../../src/probes/workspace.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { stopAfterTest } from "../fixtures/children.js";

export const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export const scratchEnv = (scratch: string) => ({
  ...process.env,
  PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws", "root"),
  TMPDIR: scratch,
});

/** The test's environment without PAYLOAD_PROBE_WORKSPACE: probes run in their runs folder's own root. */
export function withoutWorkspaceRoot(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.PAYLOAD_PROBE_WORKSPACE;
  return env;
}

/**
 * For a test that runs probes with the default workspace root (PAYLOAD_PROBE_WORKSPACE unset): the
 * roots those runs folders get, removed by the function returned when the test made them (a root
 * that was there before, another checkout's whose digits agree, is left alone).
 */
export function defaultWorkspaceRootsOf(runsDirs: string[]): { roots: string[]; remove(): void } {
  const roots = runsDirs.map(checkoutWorkspaceRoot);
  const made = roots.filter((root) => !existsSync(root));
  return {
    roots,
    remove() {
      for (const root of made) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Runs `payload-probe <args>` to the end, with cwd the scratch folder. */
export function cliIn(scratch: string, ...args: string[]): CliResult {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: scratch,
    env: scratchEnv(scratch),
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Starts `payload-probe <args>` in its own process group (so a test can kill it with its children);
 * the group is killed after the test if anything of it is left (test/fixtures/children.ts).
 * A probe's MCP servers start in their config's folder, so any cwd runs them.
 * `env` is set over the scratch environment.
 */
export function startCliIn(
  scratch: string,
  args: string[],
  cwd = scratch,
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = stopAfterTest(
    spawn(process.execPath, [MAIN, ...args], {
      cwd,
      env: { ...scratchEnv(scratch), ...env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    }),
    true,
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}
