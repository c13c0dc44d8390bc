/**
 * A run is written beside its folder and swapped in when it closes, so a run that fails or dies never
 * costs the previous capture. `runs/p1/` keeps the last finished run while `runs/.p1.new-<pid>/` (the
 * live folder) fills; at close the old folder is renamed aside to `.p1.old-<pid>`, the live one renamed
 * to `p1`, and the old one removed once it is known to hold only a run's files and the run database
 * holds its run (read back as `p1@2`); a previous run the database does not hold (written with
 * `--no-db`) is kept as the folder `p1.previous-<n>` instead. Both working names begin with a
 * dot, which no run name may (src/files/safe-path.ts), so they can never be a user's run folder, and they
 * carry the name and process they belong to. Every step runs with the run folder's lock held.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { StorageError, UserError } from "../errors.js";
import { jsonlLines, parseJsonlLine } from "../files/jsonl.js";
import { isOwnFolder, removeOwnFolder } from "../files/safe-path.js";
import { asStorageError } from "../files/storage-error.js";
import { RUN_FOLDER_FILES, runDatabasePath, runFiles } from "./run-format.js";
import { RunDatabaseReader } from "./sqlite.js";
import type { RequestRecord } from "./types.js";

/** Where a run of `name` in this process writes until it closes (the MCP wire log is named before the run opens). */
export function liveRunDir(runsDir: string, name: string, pid = process.pid): string {
  return join(runsDir, `.${name}.new-${pid}`);
}

const asideRunDir = (runsDir: string, name: string, pid = process.pid) => join(runsDir, `.${name}.old-${pid}`);

/**
 * Pages `view` writes into a run folder by default (src/cli/view.ts): made from the run (or from an
 * older run of its name, `view-<run id>.html`), replaced with it.
 */
const VIEW_PAGE = /^view(-[A-Za-z0-9._@-]+)?\.html$/;

/** The names a run folder may hold: the run's files, and the view pages written from it. */
function runFolderNames(dir: string): string[] {
  const pages = existsSync(dir) ? readdirSync(dir).filter((entry) => VIEW_PAGE.test(entry)) : [];
  return [...RUN_FOLDER_FILES, ...pages];
}

const isOwnRunFolder = (dir: string) => isOwnFolder(dir, runFolderNames(dir), "a run folder");

/** The process a leftover of a run of `name` belongs to, when `entry` is one (`.p1.new-123`, `.p1.old-123`). */
function leftoverPid(entry: string, name: string, kind: "new" | "old"): number | null {
  const prefix = `.${name}.${kind}-`;
  const pid = entry.slice(prefix.length);
  return entry.startsWith(prefix) && /^\d+$/.test(pid) ? Number(pid) : null;
}

/** A free `<name>.interrupted-<pid>` (a run name `report` reads), numbered on when a name is taken. */
function interruptedDir(runsDir: string, name: string, pid: number): string {
  const base = join(runsDir, `${name}.interrupted-${pid}`);
  let dir = base;
  for (let n = 2; existsSync(dir); n++) dir = `${base}-${n}`;
  return dir;
}

/**
 * Leftovers of earlier runs of `name` that died (the lock is ours, so no live run owns one): an old
 * folder set aside by a swap that stopped half-way goes back to `name` when that is missing and is
 * removed otherwise (the swap had already put its successor in place); a live folder is a run that
 * never finished, so it is kept as `<name>.interrupted-<pid>`, and the user is told where.
 */
function settleLeftovers(runsDir: string, name: string, notice: (message: string) => void): void {
  const dir = join(runsDir, name);
  const entries = existsSync(runsDir) ? readdirSync(runsDir) : [];
  for (const entry of entries) {
    const pid = leftoverPid(entry, name, "old");
    if (pid === null) continue;
    if (existsSync(dir)) {
      const aside = asideRunDir(runsDir, name, pid);
      removeOwnFolder(runsDir, aside, runFolderNames(aside), "a run folder");
    } else renameSync(asideRunDir(runsDir, name, pid), dir);
  }
  for (const entry of entries) {
    const pid = leftoverPid(entry, name, "new");
    if (pid === null) continue;
    const kept = interruptedDir(runsDir, name, pid);
    renameSync(liveRunDir(runsDir, name, pid), kept);
    notice(`${join(runsDir, entry)} held a run of ${name} that never finished (process ${pid}); kept as ${kept}`);
  }
}

/** The run id in the first record of a folder; null when it has none, or that line is not a record. */
export function firstRunId(dir: string): string | null {
  const path = runFiles(dir).requests;
  if (!existsSync(path)) return null;
  for (const { n, line } of jsonlLines(path)) {
    try {
      const record = parseJsonlLine(path, n, line) as Partial<RequestRecord> | null;
      return typeof record?.run === "string" ? record.run : null;
    } catch (error) {
      if (error instanceof UserError) return null;
      throw error;
    }
  }
  return null;
}

/**
 * Whether the run database beside the folders holds the run a folder holds (so the folder may go). A
 * database that cannot be read (damaged, not one, a run with --no-db beside it) holds nothing: the
 * folder is kept.
 */
function databaseHolds(runsDir: string, dir: string): boolean {
  const id = firstRunId(dir);
  if (id === null || !existsSync(runDatabasePath(runsDir))) return false;
  try {
    const db = RunDatabaseReader.open(runDatabasePath(runsDir));
    try {
      return db.hasRun(id);
    } finally {
      db.close();
    }
  } catch (error) {
    if (error instanceof StorageError) return false;
    throw error;
  }
}

/** A free `<name>.previous-<n>`, where a previous run no database holds is kept. */
function keptRunDir(runsDir: string, name: string): string {
  let n = 1;
  while (existsSync(join(runsDir, `${name}.previous-${n}`))) n++;
  return join(runsDir, `${name}.previous-${n}`);
}

/** Before anything is opened: the folder a run will replace must be one payload-probe made (only read here). */
export function checkRunFolderReplaceable(runsDir: string, name: string): void {
  asStorageError(runsDir, () => isOwnRunFolder(join(runsDir, name)));
}

/**
 * Once the database is open: leftovers of runs that died are settled, and the live folder is made
 * (empty). Returns the live folder.
 */
export function prepareRunFolder(runsDir: string, name: string, notice: (message: string) => void): string {
  const live = liveRunDir(runsDir, name);
  asStorageError(runsDir, () => {
    settleLeftovers(runsDir, name, notice);
    mkdirSync(live, { recursive: true });
  });
  return live;
}

/** Removes the live folder of a run that is dropped: only the run's own files may be in it. */
export function dropLiveFolder(runsDir: string, live: string): void {
  asStorageError(live, () => removeOwnFolder(runsDir, live, RUN_FOLDER_FILES, "a run folder"));
}

/** Undoes prepareRunFolder when the run could not start: the live folder is still empty. */
export function dropEmptyLiveFolder(live: string): void {
  rmdirSync(live);
}

/**
 * At close: the live folder becomes `<runsDir>/<name>`; the previous run there is removed when the run
 * database holds it, else kept as `<name>.previous-<n>` (returned). A failure leaves the live folder
 * where it is and says so; the previous run is put back if it was moved.
 */
export function swapInRunFolder(runsDir: string, name: string, live: string): string | null {
  const dir = join(runsDir, name);
  try {
    return asStorageError(dir, () => {
      const hadPrevious = isOwnRunFolder(dir);
      const aside =
        hadPrevious && !databaseHolds(runsDir, dir) ? keptRunDir(runsDir, name) : asideRunDir(runsDir, name);
      if (hadPrevious) renameSync(dir, aside);
      try {
        renameSync(live, dir);
      } catch (error) {
        if (hadPrevious) renameSync(aside, dir);
        throw error;
      }
      if (!hadPrevious) return null;
      if (aside !== asideRunDir(runsDir, name)) return aside;
      removeOwnFolder(runsDir, aside, runFolderNames(aside), "a run folder");
      return null;
    });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    throw new UserError(`${error.message}; this run stays in ${live}`, error.file, error.field);
  }
}
