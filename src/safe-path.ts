import { realpathSync, rmSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

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
