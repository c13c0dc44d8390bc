/**
 * The `check` gate: run each probe and hold its requests against the committed baseline. Input
 * that cannot be used (a probe file, a baseline) marks that probe "could not be evaluated" and the
 * gate goes on; a check that did not hold while running (the scripted model ran out) is a
 * regression; anything else is a bug and propagates with its stack.
 */

import { dirname, join } from "node:path";
import {
  baselineOf,
  compareWithBaseline,
  errorCheck,
  type Finding,
  loadTolerances,
  type ProbeCheck,
  readBaseline,
  type Tolerances,
  writeBaseline,
} from "../analysis/check/check.js";
import { CheckFailed, UserError } from "../errors.js";
import { PROJECT_ROOT } from "../project-root.js";
import { piRunName } from "../safe-path.js";
import { poolPerProbe, runProgressLine } from "./in-order-pool.js";
import { loadProbeFile, resolveProbePath } from "./load.js";
import { allProbeNames } from "./probe-names.js";
import { type AgentKind, agentOf, runOn } from "./run-on.js";
import type { RunResult } from "./run-options.js";

export interface CheckOptions {
  /**
   * Where a probe named without a path is looked for (`<root>/probes/<name>.yaml`, the first root
   * that has it); with no probes named, every probe of the first root that has any is checked.
   */
  probeRoots: readonly string[];
  probes: string[];
  /** The baselines' folder (default: `baselines/` beside each probe file). */
  baselineDir?: string;
  /** The tolerances file (default: `tolerances.yaml` in the baselines' folder; missing = exact). */
  tolerancesPath?: string;
  update: boolean;
  /** Where runs go and probe workspaces are made (tests use temp folders). */
  runsDir?: string;
  workspaceRoot?: string;
  database?: boolean;
  progress?: (line: string) => void;
  /**
   * The agents that run each probe, in order (default: each probe's agent.kind); pi is held against
   * `<probe>@pi.json`, and its checks are named `<probe>@pi`.
   */
  agents?: readonly AgentKind[];
  /**
   * The command that rewrites a probe's baseline (`check <probe> --update` with the options that chose
   * the files), for the hints; `probe` as it was named, `onPi` for its run on pi.
   */
  updateCommand?: (probe: string, onPi: boolean) => string;
  /** Each probe's run as it finishes (`check --agent both` sets the two side by side). */
  onResult?: (result: RunResult) => void;
}

type Agent = AgentKind | undefined;

export async function runCheck(options: CheckOptions): Promise<ProbeCheck[]> {
  const names = options.probes.length > 0 ? options.probes : allProbesOf(options.probeRoots);
  const agents: readonly Agent[] = options.agents ?? [undefined];
  const gate = new GateFiles(options);
  const checks = await poolPerProbe(
    names,
    () => agents,
    (name, agent, n, total) => {
      options.progress?.(runProgressLine(n, total, name, agent));
      return checkProbe(name, agent, options, gate);
    },
  );
  // A probe pi cannot express has no check (its progress line said why).
  return checks.filter((check): check is ProbeCheck => check !== undefined);
}

/** The probes of the first root that has any, by name. */
function allProbesOf(roots: readonly string[]): string[] {
  for (const root of roots) {
    const names = allProbeNames(root);
    if (names.length > 0) return names;
  }
  return [];
}

/**
 * Where each probe's baseline and tolerances are: the folders the options name, else `baselines/`
 * beside the probe file; a tolerances file is read once however many probes share it.
 */
class GateFiles {
  private readonly tolerances = new Map<string, Tolerances>();
  constructor(private readonly options: Pick<CheckOptions, "baselineDir" | "tolerancesPath">) {}

  baselineDir(probeFile: string): string {
    return this.options.baselineDir ?? join(dirname(probeFile), "baselines");
  }

  tolerancesOf(probeFile: string): Tolerances {
    const path = this.options.tolerancesPath ?? join(this.baselineDir(probeFile), "tolerances.yaml");
    const tolerances = this.tolerances.get(path) ?? loadTolerances(path);
    this.tolerances.set(path, tolerances);
    return tolerances;
  }
}

/** One probe against its baseline; undefined for a probe pi cannot express (said on the progress line). */
async function checkProbe(
  name: string,
  agent: Agent,
  options: CheckOptions,
  gate: GateFiles,
): Promise<ProbeCheck | undefined> {
  let result: RunResult;
  let onPi = agent === "pi";
  try {
    const probe = await loadProbeFile(resolveProbePath(name, options.probeRoots), PROJECT_ROOT);
    const on = agentOf(probe, agent);
    onPi = on === "pi";
    result = await runOn(on, probe, {
      runsDir: options.runsDir,
      workspaceRoot: options.workspaceRoot,
      database: options.database,
    });
  } catch (error) {
    return namedFor(onPi, error instanceof CheckFailed ? failedWhileRunning(name, error) : unusableInput(name, error));
  }
  options.onResult?.(result);
  if (result.skipped) {
    options.progress?.(`  skipped on pi: ${result.skipped}`);
    return undefined;
  }
  return namedFor(onPi, compareRun(name, result, onPi, options, gate));
}

/** A check of pi's run is named as its run and baseline are, `<probe>@pi`, findings included. */
function namedFor(onPi: boolean, check: ProbeCheck): ProbeCheck {
  if (!onPi) return check;
  const named = (finding: Finding) => ({ ...finding, probe: piRunName(finding.probe) });
  return {
    ...check,
    probe: piRunName(check.probe),
    regressions: check.regressions.map(named),
    savings: check.savings.map(named),
  };
}

/** The run held against its baseline (or written as it, with --update). */
function compareRun(
  name: string,
  result: RunResult,
  onPi: boolean,
  options: CheckOptions,
  gate: GateFiles,
): ProbeCheck {
  // Named by the probe's checked name, not the argument: a path argument would reach outside the folder.
  const baselineDir = gate.baselineDir(result.probe.file);
  const baselinePath = join(baselineDir, `${onPi ? piRunName(result.probe.name) : result.probe.name}.json`);
  if (options.update) {
    writeBaseline(baselinePath, baselineOf(name, result.records));
    return { probe: name, status: "updated", requests: result.records.length, regressions: [], savings: [] };
  }
  let check: ProbeCheck;
  try {
    const baseline = readBaseline(baselinePath, name, options.updateCommand?.(name, onPi));
    check = compareWithBaseline(baseline, result.records, gate.tolerancesOf(result.probe.file));
  } catch (error) {
    return unusableInput(name, error);
  }
  check.updateCommand = options.updateCommand?.(name, onPi);
  // A probe whose expect block failed has drifted from its experiment: that is a regression too.
  check.regressions.unshift(...result.failures.map((failure) => expectFinding(name, failure)));
  if (check.regressions.length > 0) check.status = "regression";
  return check;
}

/** Bad input makes a probe "could not be evaluated" (exit 2); any other error is a bug and is rethrown. */
function unusableInput(name: string, error: unknown): ProbeCheck {
  if (error instanceof UserError) return errorCheck(name, error);
  throw error;
}

/** The run stopped on a check that did not hold (the script ran out): the probe drifted, a regression. */
function failedWhileRunning(name: string, error: CheckFailed): ProbeCheck {
  const failures = [error.message, ...error.failures];
  return {
    probe: name,
    status: "regression",
    requests: 0,
    regressions: failures.map((failure) => expectFinding(name, failure)),
    savings: [],
  };
}

function expectFinding(probe: string, failure: string): Finding {
  return { probe, request: null, metric: "expect", baseline: "held", actual: failure, tolerance: "exact" };
}
