/**
 * A probe's workspace: its own folder outside the checkout, made afresh for each run (the runtime's
 * and pi's alike) and held by one run at a time. What a run wrote into it, and so whether the next
 * run may replace it, is workspace-list.ts's.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runFolderLockPath } from "../capture/capture-run.js";
import type { PathAlias } from "../capture/path-alias.js";
import { describeProcess, lockWaitMs, type PidLock, waitForLock } from "../processes/pid-lock.js";
import type { Probe } from "./types.js";
import { closeWorkspace, openWorkspace, removeWorkspace } from "./workspace-list.js";

/**
 * The workspace root as every run stores it: the paths that enter the system prompt (cwd, agent dir,
 * skill files) are recorded under this one fixed path, whichever checkout's root the run used, so the
 * committed baselines hold on every machine and in every checkout.
 */
const RECORDED_WORKSPACE_ROOT = "/tmp/payload-probe";

/**
 * Where a run makes its workspaces: the root it was given, else PAYLOAD_PROBE_WORKSPACE, both stored
 * as they are; else its runs folder's own root (checkoutWorkspaceRoot), stored as
 * RECORDED_WORKSPACE_ROOT (`pathAlias`).
 */
export function workspacePlace(runsDir: string, given?: string): { workspaceRoot: string; pathAlias?: PathAlias } {
  const chosen = given || process.env.PAYLOAD_PROBE_WORKSPACE;
  if (chosen) return { workspaceRoot: chosen };
  const own = checkoutWorkspaceRoot(runsDir);
  return { workspaceRoot: own, pathAlias: { path: own, storedAs: RECORDED_WORKSPACE_ROOT } };
}

/**
 * One workspace root per runs folder (each checkout has its own), so two checkouts never wait for
 * each other's workspace, while two runs that share a runs folder (and would wait for its lock
 * anyway) share it. `/tmp/payload-<5 digits>` is as long as the recorded root, so the body sizes as
 * sent are the same too, and digits alone count as the same tokens whichever they are. Two runs
 * folders whose digits happen to agree (1 in 100,000) only take turns, as one folder's runs do.
 */
export function checkoutWorkspaceRoot(runsDir: string): string {
  const digest = createHash("sha256").update(resolve(runsDir)).digest().readUInt32BE(0);
  const name = `payload-${String(digest % 100_000).padStart(5, "0")}`;
  return process.platform === "win32" ? join(tmpdir(), name) : `/tmp/${name}`;
}

export interface Workspace {
  base: string;
  cwd: string;
  agentDir: string;
  home: string;
  packageDir: string;
}

/**
 * A probe's own folder outside the checkout: the session's cwd, agent dir and home live there, so
 * the paths that enter the system prompt are the same on every machine and every clone.
 */
function prepareWorkspace(probe: Probe, root: string): Workspace {
  const base = join(root, probe.name);
  removeWorkspace(root, base);
  const paths = {
    base,
    cwd: join(base, "cwd"),
    agentDir: join(base, "agent"),
    home: join(base, "home"),
    packageDir: join(base, "pkg"),
  };
  for (const dir of [paths.cwd, paths.agentDir, paths.home, paths.packageDir]) mkdirSync(dir, { recursive: true });
  openWorkspace(base);
  return paths;
}

const announceWait = (message: string) => process.stderr.write(`payload-probe: ${message}\n`);

/**
 * Two runs of one probe in one runs folder would share its workspace and its run folder (and so would
 * two runs with one PAYLOAD_PROBE_WORKSPACE), so a run holds a lock on each until it is closed; the second run waits, told through
 * `onWait` (default: a line on stderr). The workspace is always locked first, so two runs can never
 * hold one lock each and wait for the other's.
 */
async function lockProbeFolders(
  name: string,
  place: { workspaceRoot: string; runsDir: string },
  onWait: (message: string) => void = announceWait,
  /** The run folder's name, when it is not the probe's (`<probe>@pi` shares the probe's workspace). */
  runName = name,
): Promise<{ runFolder: PidLock; release(): void }> {
  const waitFor = (path: string) => {
    const maxWaitMs = lockWaitMs();
    return waitForLock(
      path,
      (pid) =>
        onWait(`waiting for ${name}: ${describeProcess(pid)} holds ${path} (giving up after ${maxWaitMs / 1000} s)`),
      maxWaitMs,
    );
  };
  const workspace = await waitFor(join(place.workspaceRoot, `${name}.lock`));
  try {
    const runFolder = await waitFor(runFolderLockPath(place.runsDir, runName));
    return {
      runFolder,
      release() {
        runFolder.release();
        closeWorkspace(join(place.workspaceRoot, name));
        workspace.release();
      },
    };
  } catch (error) {
    workspace.release();
    throw error;
  }
}

/**
 * `body` in the probe's workspace, made afresh, with the workspace and the run folder `runName`
 * locked until `body` has ended (the run folder's lock is handed on to the capture that opens it).
 */
export async function inFreshWorkspace<T>(
  probe: Probe,
  place: { workspaceRoot: string; runsDir: string },
  lock: { onWait?: (message: string) => void; runName?: string },
  body: (workspace: Workspace, runFolder: PidLock) => Promise<T>,
): Promise<T> {
  const locks = await lockProbeFolders(probe.name, place, lock.onWait, lock.runName);
  try {
    return await body(prepareWorkspace(probe, place.workspaceRoot), locks.runFolder);
  } finally {
    locks.release();
  }
}
