import { join } from "node:path";
import { StorageError, UserError } from "../errors.js";
import { isRunName, SAFE_NAME_RULE } from "../files/safe-path.js";
import { describeProcess, type PidLock, tryLock } from "../processes/pid-lock.js";
import { codecFor } from "../providers/codecs.js";
import { Capture, type CaptureOptions } from "./capture.js";
import {
  checkRunFolderReplaceable,
  dropEmptyLiveFolder,
  dropLiveFolder,
  prepareRunFolder,
  swapInRunFolder,
} from "./run-folder.js";
import { runDatabasePath } from "./run-format.js";
import { RunDatabase, type RunStatus } from "./sqlite.js";
import type { MarkerSpec } from "./types.js";

/** A run id: the name, the start time to the second, and the process, so two runs never share one. */
function newRunId(name: string): string {
  return `${name}-${new Date().toISOString().replace(/[-:.]/g, "").replace("T", "-").slice(0, 18)}-${process.pid}`;
}

/** The lock that keeps two runs of one name out of `<runsDir>/<name>/` at once. */
export function runFolderLockPath(runsDir: string, name: string): string {
  return join(runsDir, `${name}.lock`);
}

export interface CaptureRunOptions {
  /** Names the run folder `<runsDir>/<name>/` (replaced when the run closes) and the run's `probe` column. */
  name: string;
  runsDir: string;
  /** Also append to `<runsDir>/payload-probe.db` (default true). */
  database?: boolean;
  markers?: Record<string, MarkerSpec>;
  /**
   * The run folder's lock when the caller already holds it (the probe runner waits for it); without
   * it the lock is taken here, and a folder in use by another live run is refused.
   */
  folderLock?: PidLock;
  /** See CaptureOptions: the mock and the proxy keep no records in memory. */
  keepRecords?: boolean;
  redactBody?: (text: string) => string;
  /** See CaptureOptions: store the secrets found in bodies instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /** See CaptureOptions: a folder (a probe's workspace) stored under another name. */
  pathAlias?: CaptureOptions["pathAlias"];
  onFinished?: CaptureOptions["onFinished"];
  knownTexts?: CaptureOptions["knownTexts"];
}

export interface CaptureRun {
  id: string;
  /** The run folder, `<runsDir>/<name>/`, once the run has closed (src/capture/run-folder.ts). */
  dir: string;
  /** Where the run's files are written while it is open; it becomes `dir` when the run closes. */
  liveDir: string;
  capture: Capture;
  /**
   * Closes the files, records how the run ended (and how many exchanges were `lost`) in the database
   * and swaps the run folder in. When a write failed (`failure`, or one the database or capture files
   * saw), nothing is swapped: the previous run stays, and a StorageError says where this one is.
   */
  close(status?: RunStatus, end?: RunEnd): void;
}

/** How a run ended besides its status: exchanges it could not write, or the failure that ended it. */
export interface RunEnd {
  lost?: number;
  failure?: unknown;
  /** The run captured nothing and is dropped: its row and live folder go, the previous run stays. */
  drop?: boolean;
}

/** Runs open in this process, so a signal can mark them interrupted before the process exits. */
const openRuns = new Set<CaptureRun>();

/** Marks every run still open in this process as interrupted (the process is about to exit on a signal). */
export function interruptOpenRuns(): void {
  for (const run of [...openRuns]) {
    try {
      run.close("interrupted");
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      announce(error.message);
    }
  }
}

const announce = (message: string) => process.stderr.write(`payload-probe: ${message}\n`);

/** A name that can name a run folder, else bad input. */
export function checkRunName(name: string): void {
  if (!isRunName(name))
    throw new UserError(
      `run name "${name}": expected ${SAFE_NAME_RULE}, optionally followed by @ and an agent name`,
      undefined,
      "name",
    );
}

/** The run folder's lock: the caller's, else taken here (a folder another live run writes is refused). */
export function takeFolderLock(options: Pick<CaptureRunOptions, "folderLock" | "runsDir" | "name">): {
  lock: PidLock;
  ownLock: boolean;
} {
  if (options.folderLock) return { lock: options.folderLock, ownLock: false };
  const attempt = tryLock(runFolderLockPath(options.runsDir, options.name));
  if ("heldBy" in attempt)
    throw new UserError(
      `${join(options.runsDir, options.name)}: expected a run folder no other run is writing, but ${describeProcess(attempt.heldBy)} is capturing into it; wait for it or choose another name`,
    );
  return { lock: attempt, ownLock: true };
}

/**
 * The folder to replace is read, then the database opened, then folders written: a folder that is not
 * ours or a database that cannot be written is found before any folder is touched. Returns the live folder.
 */
function openStorage(options: CaptureRunOptions, dir: string, id: string): { db: RunDatabase | null; live: string } {
  checkRunFolderReplaceable(options.runsDir, options.name);
  const db = options.database === false ? null : new RunDatabase(runDatabasePath(options.runsDir));
  let live: string | undefined;
  try {
    live = prepareRunFolder(options.runsDir, options.name, announce);
    db?.startRun(id, options.name, dir);
    return { db, live };
  } catch (error) {
    if (live) dropEmptyLiveFolder(live);
    db?.close();
    throw error;
  }
}

/** Says where the previous run went when the database does not hold it (its folder was kept aside). */
function keptNotice(kept: string | null, dir: string): void {
  if (kept !== null) announce(`${dir} held a run the database does not hold; it is kept as ${kept}`);
}

/** A run whose files failed still gets its row finished as `error` when the database takes the write. */
function markErrorIfWritable(db: RunDatabase | null, id: string): void {
  try {
    db?.finishRun(id, "error");
  } catch (error) {
    if (!(error instanceof StorageError)) throw error;
  }
}

/** Ends a run that captured nothing without a trace: its row deleted, its live folder removed. */
export function dropRun(db: RunDatabase | null, id: string, runsDir: string, live: string): void {
  db?.dropRun(id);
  dropLiveFolder(runsDir, live);
}

/** Ends a run: the row finished and the folder swapped in, or (a write failed) both left as they are. */
function finishCaptureRun(
  run: {
    capture: Capture;
    db: RunDatabase | null;
    id: string;
    dir: string;
    live: string;
    runsDir: string;
    name: string;
  },
  status: RunStatus,
  { lost = 0, failure, drop }: RunEnd,
) {
  const { capture, db, id, dir, live } = run;
  capture.close();
  if (drop) return dropRun(db, id, run.runsDir, live);
  let broken = failure instanceof StorageError ? failure : (db?.failure ?? capture.failure);
  if (!broken) {
    try {
      db?.finishRun(id, status, lost);
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
      broken = error;
    }
  }
  if (!broken) return keptNotice(swapInRunFolder(run.runsDir, run.name, live), dir);
  markErrorIfWritable(db, id);
  throw new StorageError(`${broken.message}; this run stays in ${live}, ${dir} keeps the previous run`, broken.file!);
}

/** A run's folder, id, database row and capture: for probe runs, the mock server and the capture proxy alike. */
export function openCaptureRun(options: CaptureRunOptions): CaptureRun {
  checkRunName(options.name);
  const dir = join(options.runsDir, options.name);
  const id = newRunId(options.name);
  const { lock, ownLock } = takeFolderLock(options);
  let storage: { db: RunDatabase | null; live: string };
  try {
    storage = openStorage(options, dir, id);
  } catch (error) {
    if (ownLock) lock.release();
    throw error;
  }
  const { db, live } = storage;
  const capture = new Capture({
    run: id,
    probe: options.name,
    dir: live,
    db,
    markers: options.markers ?? {},
    codecFor,
    keepRecords: options.keepRecords,
    redactBody: options.redactBody,
    keepSecrets: options.keepSecrets,
    pathAlias: options.pathAlias,
    onFinished: options.onFinished,
    knownTexts: options.knownTexts,
  });
  const finish = (status: RunStatus, end: RunEnd) =>
    finishCaptureRun({ capture, db, id, dir, live, runsDir: options.runsDir, name: options.name }, status, end);
  const run: CaptureRun = {
    id,
    dir,
    liveDir: live,
    capture,
    close(status = "captured", end = {}) {
      if (!openRuns.delete(run)) return;
      try {
        finish(status, end);
      } finally {
        db?.close();
        if (ownLock) lock.release();
      }
    },
  };
  openRuns.add(run);
  return run;
}
