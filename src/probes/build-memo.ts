/**
 * What the memos of this folder share: they keep results that depend only on this build of the
 * CLI (and of the stubs) and on their inputs, so they are only ever used from the bundles, whose
 * builds dist/build-id.json names (written by scripts/bundle.mjs). Run from tsc's output or the
 * sources (unit tests), nothing is remembered and every result is worked out again.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { userCacheDir } from "../user-cache.js";

export type BuildIds = Record<string, { entry: string; build: string }>;

export const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
export const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** The build ids when this code is itself part of a bundle under `<root>/dist/bundles/`, else null. */
export function bundleBuildIds(root: string): BuildIds | null {
  const here = relative(root, fileURLToPath(import.meta.url))
    .split(sep)
    .join("/");
  const ids = join(root, "dist", "build-id.json");
  if (!here.startsWith("dist/bundles/") || !isFile(ids)) return null;
  return JSON.parse(readFileSync(ids, "utf8")) as BuildIds;
}

/** Where the memo `kind` keeps the entry `file`: in the user's cache, outside any checkout. */
export const memoPath = (kind: string, file: string, env: NodeJS.ProcessEnv = process.env) =>
  join(userCacheDir(env), kind, file);

/** Through a temp file and a rename, as two runs may store the same entry at once. */
export function storeMemo(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}
