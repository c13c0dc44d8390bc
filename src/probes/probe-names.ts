import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The probes of a project: every `probes/<name>.yaml` under its root, by name. */
export function allProbeNames(root: string): string[] {
  return readdirSync(join(root, "probes"))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.slice(0, -5))
    .sort();
}
