import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

/** Where a command word leads, as a shell would look it up: a program to run, or why there is none. */
export type ProgramLookup = { found: string } | { missing: true } | { notExecutable: string };

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const isFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() === true;

/**
 * Looks a command word up as execvp does: a word with a slash names a file (relative to `cwd`), any
 * other is searched along PATH (an empty entry is the current folder), the first executable file
 * winning. A file found only without the execute bit is reported as such (a shell's 126, not 127).
 */
export function findProgram(word: string, env: NodeJS.ProcessEnv, cwd = process.cwd()): ProgramLookup {
  const candidates = word.includes("/")
    ? [resolve(cwd, word)]
    : (env.PATH ?? "").split(delimiter).map((dir) => resolve(cwd, join(dir || ".", word)));
  let notExecutable: string | undefined;
  for (const path of candidates) {
    if (!isFile(path)) continue;
    if (executable(path)) return { found: path };
    notExecutable ??= path;
  }
  return notExecutable ? { notExecutable } : { missing: true };
}
