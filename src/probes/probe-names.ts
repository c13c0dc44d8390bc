import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PROJECT_ROOT } from "../project-root.js";

/**
 * Where a probe named without a path (`p1`) is looked for: `probes/` in the user's folder first (a
 * team's own), then the checkout's shipped probes.
 */
export const probeRoots = (): string[] => [...new Set([resolve(process.cwd()), resolve(PROJECT_ROOT)])];

/** The probes of a project: every `probes/<name>.yaml` under its root, by name (none without a `probes/`). */
export function allProbeNames(root: string): string[] {
  const dir = join(root, "probes");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.slice(0, -5))
    .sort();
}
