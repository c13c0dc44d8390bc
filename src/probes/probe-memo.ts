/**
 * A probe file's validated fields, kept under the sha256 of the CLI's build and the file's text: a
 * probe run again is not parsed as YAML or validated, and its schema is not even made (zod builds
 * schemas slowly), which was about 30 ms of a 0.4 s `run p1`. What validation makes of a file depends
 * on its text and on the schema and nothing else (the schema is part of the build); the checks that
 * look at the file system (load.ts) run at every load. Only a text that validated is kept, and only
 * from the bundle (files/build-memo.ts): under unit tests every load validates.
 *
 * Stored with the structured clone of node:v8, which keeps what JSON would not (the RegExp of a
 * marker, a field that is present and undefined).
 */
import { readFileSync } from "node:fs";
import { deserialize, serialize } from "node:v8";
import { bundleBuildIds, memoKey, memoPath, storeMemo } from "../files/build-memo.js";

/** Raised when the key or the stored form changes. */
const MEMO_FORMAT = 1;

/** The key for `text` under this build, or null when not run from the bundle. */
function textKey(text: string, root: string): string | null {
  const cli = bundleBuildIds(root)?.["dist/cli/main.js"];
  return cli ? memoKey(cli.build, `${MEMO_FORMAT}\0${text}`) : null;
}

const entryPath = (key: string) => memoPath("probe-memo", key, "v8");

/** The fields validation made of `text` before, under this build, or null. */
export function recalledProbeFields<T>(text: string, root: string): T | null {
  const key = textKey(text, root);
  if (key === null) return null;
  try {
    return deserialize(readFileSync(entryPath(key))) as T;
  } catch {
    return null; // not there yet, or cut short by a crash: validate, and store it
  }
}

/** Keeps what validation made of `text`. */
export function rememberProbeFields(text: string, root: string, fields: unknown): void {
  const key = textKey(text, root);
  if (key !== null) storeMemo(entryPath(key), serialize(fields));
}
