import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The checkout this code runs from (the folder holding `package.json`, `probes/`, `profiles/`,
 * `runs/`): the nearest folder above this module that holds `package.json`. This module may be
 * `src/project-root.ts`, `dist/project-root.js` or part of a bundle under `dist/bundles/`, so
 * its depth below the root is not fixed; the answer does not depend on the cwd.
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = join(findRoot(dirname(fileURLToPath(import.meta.url))), "/");
