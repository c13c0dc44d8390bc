import { existsSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { UserError } from "../errors.js";
import { isSafeName, SAFE_NAME_RULE } from "../files/safe-path.js";
import { resolveProbePath } from "../probes/load.js";
import { allProbeNames, probeRoots } from "../probes/probe-names.js";
import { PROJECT_ROOT } from "../project-root.js";
import { nearest } from "../text/nearest.js";

/**
 * Where run folders and payload-probe.db live unless `--runs` says otherwise: the checkout's `runs/`,
 * or, for payload-probe installed as a package (under node_modules, which is no place to write), the
 * user's folder's `runs/`.
 */
export const defaultRunsDir = () =>
  join(PROJECT_ROOT.split(sep).includes("node_modules") ? process.cwd() : PROJECT_ROOT, "runs");

/** Every probe `check` and `run all` take: those of the first probe root with a `probes/` folder of probes. */
export function allProbeFiles(): string[] {
  for (const root of probeRoots()) {
    const names = allProbeNames(root);
    if (names.length > 0) return names.map((name) => join(root, "probes", `${name}.yaml`));
  }
  return [];
}

/** `--runs DIR`: the folder run folders and payload-probe.db live in (default `runs/` of the project). */
export function runsDirArg(command: string, value: string | undefined): string {
  if (value === undefined) return defaultRunsDir();
  if (value.includes("\0")) throw new UserError(`${command}: --runs expected a folder path without NUL characters`);
  const dir = resolve(value);
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UserError(`${command}: --runs expected a folder, but ${dir} is not one`);
  return dir;
}

/** A probe named on the command line (`p1`, or a file's path): its file; a name with none names the nearest probe. */
export function probeFileArg(command: string, nameOrPath: string): string {
  const roots = probeRoots();
  const path = resolveProbePath(nameOrPath, roots);
  if (existsSync(path) || roots.every((root) => path !== join(root, "probes", `${nameOrPath}.yaml`))) return path;
  const near = nearest(nameOrPath, [...new Set(roots.flatMap(allProbeNames))]);
  throw new UserError(`${command}: no probe "${nameOrPath}" in probes/${near ? `; did you mean ${near}?` : ""}`);
}

/** A flag whose value names a folder under the runs folder (`proxy --name`). */
export function folderNameArg(command: string, flag: string, value: string | undefined): string | undefined {
  if (value === undefined || isSafeName(value)) return value;
  throw new UserError(`${command}: --${flag} expected ${SAFE_NAME_RULE}, got ${JSON.stringify(value)}`);
}

/** A whole number of at least 1 (`--max-requests 500`). */
export function positiveIntegerArg(command: string, flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1)
    throw new UserError(`${command}: --${flag} expected a whole number of at least 1, got ${JSON.stringify(value)}`);
  return number;
}

/** `--agent runtime|pi|both`: the agents that run each probe, in order; undefined runs each on its `agent.kind`. */
export function agentsArg(command: string, value: string | undefined): ("runtime" | "pi")[] | undefined {
  if (value === undefined) return undefined;
  if (value === "runtime" || value === "pi") return [value];
  if (value === "both") return ["runtime", "pi"];
  throw new UserError(`${command}: --agent expected runtime, pi or both, got ${JSON.stringify(value)}`);
}
