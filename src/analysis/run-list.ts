/**
 * Every run a runs folder holds, newest first, each under the name a command takes it by: the
 * latest run of a name is its folder (`claude`), an older one `claude@2`, `claude@3`… from the run
 * database, and a folder whose run the database does not hold (written with `--no-db`, or kept as
 * `<name>.previous-<n>`) by its folder name. A command given no run takes the first of the list.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { firstRunId } from "../capture/run-folder.js";
import { runDatabasePath, runFiles } from "../capture/run-format.js";
import { RunDatabaseReader, type RunRow } from "../capture/sqlite.js";
import { UserError } from "../errors.js";
import { isRunName } from "../files/safe-path.js";
import { type RunLookup, type RunSource, resolveRun } from "./load-run.js";

export interface RunEntry {
  /** What to type to reach the run (`claude`, `claude@2`, `claude.previous-1`). */
  name: string;
  /** The name it was recorded under (the probe, or record's program or `--name`). */
  probe: string;
  /** When it started (ISO); for a folder the database does not hold, when its records were last written. */
  startedAt: string;
  /** The database row's status (`captured`, `passed`, `interrupted`…), or `folder` for a folder alone. */
  status: string;
  /** Exchanges relayed but never written (the database row's `lost`); 0 for a folder alone. */
  lost: number;
}

function databaseRuns(lookup: RunLookup): RunRow[] {
  const path = runDatabasePath(lookup.runsDir);
  if (!existsSync(path)) return [];
  const db = RunDatabaseReader.open(path);
  try {
    return db.allRuns();
  } finally {
    db.close();
  }
}

/** The run folders under the runs folder, each with the run id of its first record. */
function runFolders(runsDir: string): { name: string; id: string | null; mtime: Date }[] {
  if (!existsSync(runsDir)) return [];
  const folders = [];
  for (const name of readdirSync(runsDir)) {
    const requests = runFiles(join(runsDir, name)).requests;
    if (!isRunName(name) || !existsSync(requests)) continue;
    folders.push({ name, id: firstRunId(join(runsDir, name)), mtime: statSync(requests).mtime });
  }
  return folders;
}

/** Every run, newest first (see the module's comment for the names). */
export function listRuns(lookup: RunLookup): RunEntry[] {
  const rows = databaseRuns(lookup);
  const folders = runFolders(lookup.runsDir);
  const folderOf = new Map(folders.map((f) => [f.name, f.id]));
  const seen = new Map<string, number>();
  const entries: RunEntry[] = rows.map((row) => {
    const n = (seen.get(row.probe) ?? 0) + 1;
    seen.set(row.probe, n);
    // `claude` reaches the folder: it names the latest run only when the folder holds that run.
    const name = n === 1 && folderOf.get(row.probe) === row.id ? row.probe : `${row.probe}@${n}`;
    return { name, probe: row.probe, startedAt: row.startedAt, status: row.status, lost: row.lost };
  });
  const known = new Set(rows.map((row) => row.id));
  for (const folder of folders)
    if (folder.id === null || !known.has(folder.id))
      entries.push({
        name: folder.name,
        probe: folder.name,
        startedAt: folder.mtime.toISOString(),
        status: "folder",
        lost: 0,
      });
  return entries.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
}

/** The run `spec` names, or the latest run when none is named (a bare `report`, `show <seq>`, `view`). */
export function resolveRunOrLatest(spec: string | undefined, lookup: RunLookup): RunSource {
  if (spec !== undefined) return resolveRun(spec, lookup);
  const latest = listRuns(lookup)[0];
  if (!latest)
    throw new UserError(
      `no runs in ${lookup.runsDir}: record one first (record -- <agent>, or a probe), or name a run folder`,
    );
  return resolveRun(latest.name, lookup);
}
