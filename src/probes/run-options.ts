/**
 * What a probe run is given and what it gives back, the same on the runtime and on the real pi, so
 * `run`, `check` and the fidelity table read one result whichever agent made it.
 */
import { join } from "node:path";
import type { PathAlias } from "../capture/path-alias.js";
import type { RequestRecord } from "../capture/types.js";
import { PROJECT_ROOT } from "../project-root.js";
import type { SkillDiagnostic } from "../skills/types.js";
import { DEFAULT_LIMITS, type RunLimits } from "./limits.js";
import type { Probe } from "./types.js";
import { workspacePlace } from "./workspace.js";

export interface RunOptions {
  root?: string;
  runsDir?: string;
  /** Also write to runs/payload-probe.db (default true). */
  database?: boolean;
  /** Where probe workspaces are made (default: see `workspacePlace`); tests use their own. */
  workspaceRoot?: string;
  /** Requests and payload bytes a run may make (default `DEFAULT_LIMITS`). */
  limits?: RunLimits;
  /** Store the secrets found in bodies and events as they were instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /**
   * Send the model's requests over HTTP to this base URL (the form `mock` prints:
   * `http://host:port/v1`) instead of answering them in process from the probe's script.
   */
  providerUrl?: string;
  /** Told when another run of the probe holds its folders and this one waits (default: a line on stderr). */
  onWait?: (message: string) => void;
}

export interface RunResult {
  probe: Probe;
  runId: string;
  dir: string;
  records: RequestRecord[];
  failures: string[];
  skillDiagnostics: SkillDiagnostic[];
  /** Why the probe was not run on this agent (its set-up cannot be expressed there); no records then. */
  skipped?: string;
  /** Which agent ran it: the runtime, or the real pi. */
  agent?: "runtime" | "pi";
}

/** Where a run reads and writes, and how far it may go. */
export interface RunPlace {
  root: string;
  runsDir: string;
  workspaceRoot: string;
  /** The workspace root stored under the path every checkout shares (the default root only). */
  pathAlias?: PathAlias;
  limits: RunLimits;
  providerUrl?: string;
}

export function runPlace(options: RunOptions): RunPlace {
  const root = options.root ?? PROJECT_ROOT;
  const runsDir = options.runsDir ?? join(root, "runs");
  return {
    root,
    runsDir,
    ...workspacePlace(runsDir, options.workspaceRoot),
    limits: options.limits ?? DEFAULT_LIMITS,
    providerUrl: options.providerUrl,
  };
}
