/**
 * What payload-probe wrote into a probe workspace, at every depth. A run writes the workspace's whole
 * tree into a list beside it (`<root>/<probe>.written.json`) when it has prepared the folder, and
 * again when it ends (its lock still held; on exit too, so a stopped run lists what it left). Files
 * the agent, pi, an MCP server or a shell command of the run wrote are in it: the run started them.
 * The next run removes the folder only when every entry in it is in the list as listed (a file with
 * its size and modification time, a link with its target): anything else — a folder the name happens
 * to match, a file put into `cwd` since — means the folder is not only ours, and nothing is removed.
 * A run killed outright lists nothing past its preparation, so what it wrote is refused as well: the
 * user removes that folder by hand, as the message says.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { inputError } from "../errors.js";
import { replaceFile } from "../files/replace-file.js";
import { ownFolderEntries, removeInside } from "../files/safe-path.js";

/** Each path under the workspace (`/`-separated) and what it was when listed. */
type Listing = Record<string, string>;

const writtenListPath = (base: string) => `${base}.written.json`;

function entryState(path: string): string {
  const stats = lstatSync(path);
  if (stats.isDirectory()) return "folder";
  if (stats.isSymbolicLink()) return `link ${readlinkSync(path)}`;
  if (stats.isFile()) return `file ${stats.size} ${stats.mtimeMs}`;
  return "other";
}

/**
 * The first entry under `dir` (sorted, depth first) that `visit` refuses; a folder's entries are
 * visited only when the folder itself was accepted, so a stranger folder is named, not its contents.
 */
function firstRefused(base: string, visit: (rel: string, state: string) => boolean, dir = ""): string | undefined {
  for (const name of readdirSync(join(base, dir)).sort()) {
    const rel = dir ? `${dir}/${name}` : name;
    const state = entryState(join(base, rel));
    if (!visit(rel, state)) return rel;
    if (state === "folder") {
      const inner = firstRefused(base, visit, rel);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

function listWorkspace(base: string): void {
  const entries: Listing = {};
  firstRefused(base, (rel, state) => {
    entries[rel] = state;
    return true;
  });
  replaceFile(writtenListPath(base), JSON.stringify({ writtenBy: "payload-probe", entries }));
}

/** The list of the workspace's last run; null when there is none (or it is not one of ours). */
function readListing(base: string): Listing | null {
  try {
    const entries = (JSON.parse(readFileSync(writtenListPath(base), "utf8")) as { entries?: unknown }).entries;
    return typeof entries === "object" && entries !== null ? (entries as Listing) : null;
  } catch {
    return null;
  }
}

/**
 * Removes the workspace `base` (inside `root`) when everything in it is listed as a run wrote it;
 * a link, a file, or a folder holding anything else is bad input naming the first stranger.
 */
export function removeWorkspace(root: string, base: string): void {
  if (ownFolderEntries(base, "a probe workspace") === null) return;
  const listing = readListing(base);
  const stranger = firstRefused(base, (rel, state) => listing?.[rel] === state);
  if (stranger !== undefined)
    throw inputError(
      base,
      undefined,
      `expected a probe workspace made by payload-probe, but it holds "${stranger}", which no run of it wrote ` +
        (listing
          ? `(${writtenListPath(base)} lists what runs wrote)`
          : `(no ${writtenListPath(base)} lists what runs wrote: an older payload-probe, which kept no list, or something else made it)`) +
        "; nothing was removed: move that folder away or choose another place",
    );
  removeInside(root, base);
}

/** Workspaces this process prepared and has not listed at their run's end. */
const open = new Set<string>();

/** Lists a workspace just prepared, and again if the process exits before its run ends. */
export function openWorkspace(base: string): void {
  if (open.size === 0) process.once("exit", listOpenWorkspaces);
  open.add(base);
  listWorkspace(base);
}

/** Lists what the run wrote, before its lock is released; nothing for a workspace this process did not open. */
export function closeWorkspace(base: string): void {
  if (!open.delete(base)) return;
  if (open.size === 0) process.removeListener("exit", listOpenWorkspaces);
  listWorkspace(base);
}

function listOpenWorkspaces(): void {
  for (const base of open) {
    try {
      listWorkspace(base);
    } catch {
      // Exiting anyway: an unlisted workspace is only refused by the next run, never removed.
    }
  }
}
