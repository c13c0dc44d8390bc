import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { describeProcess, type PidLock, tryLock } from "../pid-lock.js";
import { codecFor } from "../providers/codecs.js";
import { isRunName, removeOwnFolder, SAFE_NAME_RULE } from "../safe-path.js";
import { Capture, type CaptureOptions } from "./capture.js";
import { RunDatabase, type RunStatus } from "./sqlite.js";
import type { MarkerSpec } from "./types.js";

/** A run id: the name, the start time to the second, and the process, so two runs never share one. */
export function newRunId(name: string): string {
  return `${name}-${new Date().toISOString().replace(/[-:.]/g, "").replace("T", "-").slice(0, 18)}-${process.pid}`;
}

/** What a run folder holds: the files a capture and the probe runner write, nothing else. */
export const RUN_FOLDER_FILES = ["requests.jsonl", "payloads.jsonl", "events.jsonl", "mcp-wire.jsonl"] as const;

/** The lock that keeps two runs of one name out of `<runsDir>/<name>/` at once. */
export function runFolderLockPath(runsDir: string, name: string): string {
  return join(runsDir, `${name}.lock`);
}

export interface CaptureRunOptions {
  /** Names the run folder `<runsDir>/<name>/` (replaced) and the run's `probe` column. */
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
  /** See CaptureOptions: the proxy's capture work waits until its responses are relayed. */
  offPath?: boolean;
  onFinished?: CaptureOptions["onFinished"];
}

export interface CaptureRun {
  id: string;
  dir: string;
  capture: Capture;
  /** The run database, when the run is recorded there too (the probe runner adds its events). */
  db: RunDatabase | null;
  /** Closes the files, records how the run ended in the database and closes it. */
  close(status?: RunStatus): void;
}

/** Runs open in this process, so a signal can mark them interrupted before the process exits. */
const openRuns = new Set<CaptureRun>();

/** Marks every run still open in this process as interrupted (the process is about to exit on a signal). */
export function interruptOpenRuns(): void {
  for (const run of [...openRuns]) run.close("interrupted");
}

function takeFolderLock(options: CaptureRunOptions): { lock: PidLock; ownLock: boolean } {
  if (options.folderLock) return { lock: options.folderLock, ownLock: false };
  const attempt = tryLock(runFolderLockPath(options.runsDir, options.name));
  if ("heldBy" in attempt)
    throw new UserError(
      `${join(options.runsDir, options.name)}: expected a run folder no other run is writing, but ${describeProcess(attempt.heldBy)} is capturing into it; wait for it or choose another name`,
    );
  return { lock: attempt, ownLock: true };
}

/** A run's folder, id, database row and capture: for probe runs, the mock server and the capture proxy alike. */
export function openCaptureRun(options: CaptureRunOptions): CaptureRun {
  if (!isRunName(options.name))
    throw new UserError(
      `run name "${options.name}": expected ${SAFE_NAME_RULE}, optionally followed by @ and an agent name`,
      undefined,
      "name",
    );
  const dir = join(options.runsDir, options.name);
  const { lock, ownLock } = takeFolderLock(options);
  try {
    removeOwnFolder(options.runsDir, dir, RUN_FOLDER_FILES, "a run folder");
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    if (ownLock) lock.release();
    throw error;
  }
  const id = newRunId(options.name);
  const db = options.database === false ? null : new RunDatabase(join(options.runsDir, "payload-probe.db"));
  db?.startRun(id, options.name, dir);
  const capture = new Capture({
    run: id,
    probe: options.name,
    dir,
    db,
    markers: options.markers ?? {},
    codecFor,
    keepRecords: options.keepRecords,
    redactBody: options.redactBody,
    offPath: options.offPath,
    onFinished: options.onFinished,
  });
  const run: CaptureRun = {
    id,
    dir,
    capture,
    db,
    close(status = "captured") {
      if (!openRuns.delete(run)) return;
      capture.close();
      db?.finishRun(id, status);
      db?.close();
      if (ownLock) lock.release();
    },
  };
  openRuns.add(run);
  return run;
}
