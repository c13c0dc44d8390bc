import { type Dirent, lstatSync, readdirSync, realpathSync, rmSync, type Stats } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { inputError } from "../errors.js";

/**
 * Names that become a folder (a probe, a run, a capture) are one plain path segment: a letter,
 * digit or underscore first, then letters, digits, `.`, `_` and `-`, at most 64 characters. That
 * rules out `.`, `..`, separators, NUL and absolute paths, and keeps `@` free for `<probe>@N`.
 */
export const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

/** What a safe name is, for error messages. */
export const SAFE_NAME_RULE =
  "a name of 1-64 characters: a letter, digit or underscore, then letters, digits, '.', '_' or '-'";

export function isSafeName(name: unknown): name is string {
  return typeof name === "string" && SAFE_NAME.test(name);
}

/**
 * A probe's run on another agent than the runtime is named `<probe>@<agent>` (`p1@pi`): the agent part
 * is lowercase letters only, so it can never read as `<probe>@N`, and the name stays one path segment.
 */
const AGENT_RUN_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}@[a-z]{1,16}$/;

/** A run folder's name: a safe name, or a safe name with an agent suffix (`p1@pi`). */
export function isRunName(name: unknown): name is string {
  return isSafeName(name) || (typeof name === "string" && AGENT_RUN_NAME.test(name));
}

/** The run folder of a probe run on the real pi: `<probe>@pi`, beside the runtime's `<probe>`. */
export const piRunName = (probe: string) => `${probe}@pi`;

/** The real path of a folder that may not exist yet: its existing ancestor resolved, the rest appended. */
function realPathOf(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = resolve(absolute, "..");
    if (parent === absolute) return absolute;
    return resolve(realPathOf(parent), relative(parent, absolute));
  }
}

/** True when `target` lies strictly inside `parent` once both are resolved (links followed). */
export function isInside(parent: string, target: string): boolean {
  const rel = relative(realPathOf(parent), realPathOf(target));
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Removes `target` recursively only when it lies strictly inside `parent`, the folder it belongs
 * to; anything else is refused with an error, so a bad name can never reach outside its folder.
 */
export function removeInside(parent: string, target: string): void {
  if (!isInside(parent, target)) {
    throw new Error(`refusing to remove ${target}: it is not inside ${parent}`);
  }
  rmSync(target, { recursive: true, force: true });
}

/**
 * The folder at `target`, as lstat sees it: null when there is none; a link or anything that is not a
 * folder is bad input (`what` names what payload-probe makes there), never followed or replaced.
 */
export function ownFolderEntries(target: string, what: string): Dirent[] | null {
  let stats: Stats;
  try {
    stats = lstatSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  if (!stats.isDirectory())
    throw inputError(
      target,
      undefined,
      `expected ${what} made by payload-probe, but it is ${stats.isSymbolicLink() ? "a link" : "not a folder"}; ` +
        "nothing was removed: move it away or choose another place",
    );
  return readdirSync(target, { withFileTypes: true });
}

/**
 * Replaces a folder of files the code made earlier (a run folder): it is removed only when every entry
 * in it is a plain file of a name the code writes there (`own`), so a name that happens to match a
 * user's folder can never wipe it. Anything else in it is bad input naming the folder and the stranger.
 */
export function removeOwnFolder(parent: string, target: string, own: readonly string[], what: string): void {
  if (isOwnFolder(target, own, what)) removeInside(parent, target);
}

/**
 * Whether `target` exists, once it is known to hold only plain files the code writes there (`own`); a
 * stranger in it is bad input, as for removeOwnFolder, checked before anything is replaced.
 */
export function isOwnFolder(target: string, own: readonly string[], what: string): boolean {
  const entries = ownFolderEntries(target, what);
  if (entries === null) return false;
  const stranger = entries.find((entry) => !(entry.isFile() && own.includes(entry.name)));
  if (stranger !== undefined)
    throw inputError(
      target,
      undefined,
      `expected ${what} made by payload-probe (holding only the files ${own.join(", ")}), but it also holds ` +
        `"${stranger.name}"${stranger.isDirectory() ? " (a folder)" : ""}; nothing was removed: move that folder away or choose another place`,
    );
  return true;
}
