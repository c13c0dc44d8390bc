/**
 * What the memos share (the probe and prime memos of probes/, the price facts of analysis/cost/):
 * they keep results that depend only on this build of the CLI (and of the stubs) and on their
 * inputs, so they are only ever used from the bundles, whose builds dist/build-id.json names
 * (written by scripts/bundle.mjs). Run from tsc's output or the sources (unit tests), nothing is
 * remembered and every result is worked out again.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { replaceFile } from "./replace-file.js";
import { userCacheDir } from "./user-cache.js";

export type BuildIds = Record<string, { entry: string; build: string }>;

export const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
export const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** Read once per process: a build does not change under the process running it. */
const buildIdsByRoot = new Map<string, BuildIds | null>();

/** The build ids when this code is itself part of a bundle under `<root>/dist/bundles/`, else null. */
export function bundleBuildIds(root: string): BuildIds | null {
  let ids = buildIdsByRoot.get(root);
  if (ids === undefined) {
    ids = readBuildIds(root);
    buildIdsByRoot.set(root, ids);
  }
  return ids;
}

function readBuildIds(root: string): BuildIds | null {
  const here = relative(root, fileURLToPath(import.meta.url))
    .split(sep)
    .join("/");
  const ids = join(root, "dist", "build-id.json");
  if (!here.startsWith("dist/bundles/") || !isFile(ids)) return null;
  return JSON.parse(readFileSync(ids, "utf8")) as BuildIds;
}

/** A memo entry's key: the build it belongs to, and the sha256 of what it was made from. */
export const memoKey = (build: string, made: string) => `${build}/${sha256(made)}`;

/**
 * Where the memo `kind` keeps the entry `key` (`<build>/<hash>`): in the user's cache, outside any
 * checkout, one folder per build, so a build's entries go together.
 */
export const memoPath = (kind: string, key: string, ext: string) => join(userCacheDir(), kind, `${key}.${ext}`);

/** How many builds a memo keeps entries for: this checkout's, and a few of other clones and branches. */
const BUILDS_KEPT = 8;
const BUILD_ID = /^[0-9a-f]{64}$/;

/**
 * Whole or not at all, as two runs may store the same entry at once. The first entry of a
 * build drops the entries of all but the newest BUILDS_KEPT builds (each build made a folder of its
 * own, which would otherwise pile up with every rebuild). A memo that cannot be stored is no error:
 * the next run works its entry out again.
 */
export function storeMemo(path: string, data: string | Buffer): void {
  const buildDir = dirname(path);
  try {
    if (!existsSync(buildDir)) {
      mkdirSync(buildDir, { recursive: true });
      dropOldBuilds(dirname(buildDir));
    }
    replaceFile(path, data);
  } catch {
    // A read-only cache, or another run dropping this build's folder at the same moment.
  }
}

/** Only folders named as a build id, and only where they resolve to inside the memo's own folder. */
function dropOldBuilds(memoDir: string): void {
  const home = realpathSync(memoDir);
  const builds = readdirSync(home, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && BUILD_ID.test(entry.name))
    .map((entry) => ({ path: join(home, entry.name), at: statSync(join(home, entry.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { path } of builds.slice(BUILDS_KEPT)) {
    const target = realpathSync(path);
    if (dirname(target) === home) rmSync(target, { recursive: true, force: true });
  }
}
