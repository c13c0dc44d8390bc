/**
 * The `check` gate: run each probe and hold its requests against the committed baseline. Input
 * that cannot be used (a probe file, a baseline) marks that probe "could not be evaluated" and the
 * gate goes on; a check that did not hold while running (the scripted model ran out) is a
 * regression; anything else is a bug and propagates with its stack.
 */

import { dirname, join } from "node:path";
import type { CacheLimits } from "../analysis/check/cache-gate.js";
import {
  type Budget,
  errorCheck,
  type Finding,
  loadTolerances,
  type ProbeCheck,
  type Tolerances,
} from "../analysis/check/check.js";
import { checkCapturedRun } from "../analysis/check/check-captured.js";
import { loadPricing } from "../analysis/cost/pricing.js";
import { folderSource } from "../analysis/load-run.js";
import { CheckFailed, UserError } from "../errors.js";
import { piRunName } from "../files/safe-path.js";
import { PROJECT_ROOT } from "../project-root.js";
import { poolPerProbe, runProgressLine } from "./in-order-pool.js";
import { loadProbeFile, resolveProbePath } from "./load.js";
import { probePriceAs } from "./price-as.js";
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
  /** Budget and cache limits from the command line; they replace the baselines' own, field by field. */
  budget?: Budget;
  cacheLimits?: CacheLimits;
  /** `--update --force`: write a baseline even when the run breaks the limits it keeps. */
  force?: boolean;
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
  return namedFor(onPi, await compareRun(name, result, onPi, options, gate));
}

/** A check of pi's run is named as its run and baseline are, `<probe>@pi`, findings and summary lines included. */
function namedFor(onPi: boolean, check: ProbeCheck): ProbeCheck {
  if (!onPi) return check;
  const named = (finding: Finding) => ({ ...finding, probe: piRunName(finding.probe) });
  const lead = `${check.probe}: `;
  const summary = check.summary
    ?.split("\n")
    .map((line) => (line.startsWith(lead) ? `${piRunName(check.probe)}: ${line.slice(lead.length)}` : line))
    .join("\n");
  return {
    ...check,
    probe: piRunName(check.probe),
    regressions: check.regressions.map(named),
    savings: check.savings.map(named),
    ...(summary !== undefined && { summary }),
  };
}

/**
 * The run held against its baseline (or written as it, with --update) by the same gate as `check
 * --run`: exact fields, tolerances, prefix breaks, the budget and cache limits the baseline keeps, and
 * one "what changed" line; its dollars are the probe's `model.priceAs`.
 */
async function compareRun(
  given: string,
  result: RunResult,
  onPi: boolean,
  options: CheckOptions,
  gate: GateFiles,
): Promise<ProbeCheck> {
  const { probe } = result;
  // The check, its findings and its baseline carry the probe's name; the hint repeats the argument as given.
  const name = probe.name;
  // A probe whose expect block failed has drifted from its experiment: its run is no baseline.
  if (options.update && result.failures.length > 0) return expectFailed(name, result.failures);
  // Named by the probe's checked name, not the argument: a path argument would reach outside the folder.
  const baselinePath = join(gate.baselineDir(probe.file), `${onPi ? piRunName(probe.name) : probe.name}.json`);
  const updateCommand = options.updateCommand?.(given, onPi) ?? `check ${given} --update`;
  let check: ProbeCheck;
  try {
    check = await checkCapturedRun(folderSource(result.dir, { runsDir: result.dir, warn: () => undefined }), {
      name,
      baselinePath,
      updateCommand,
      subject: `probe "${name}"`,
      tolerances: gate.tolerancesOf(probe.file),
      update: options.update,
      force: options.force,
      pricing: loadPricing(undefined),
      priceAs: probePriceAs(probe),
      budget: options.budget,
      cacheLimits: options.cacheLimits,
    });
  } catch (error) {
    return unusableInput(name, error);
  }
  if (check.status === "updated") return check;
  check.updateCommand = updateCommand;
  if (result.failures.length === 0) return check;
  const failed = expectFailed(name, result.failures);
  return {
    ...check,
    status: "regression",
    regressions: [...failed.regressions, ...check.regressions],
    summary: check.summary ? `${failed.summary}\n${check.summary}` : failed.summary,
  };
}

/** The expect block did not hold: one finding per failure, the first named on the summary line. */
function expectFailed(name: string, failures: string[]): ProbeCheck {
  const more = failures.length > 1 ? ` (+${failures.length - 1} more; --verbose)` : "";
  return {
    probe: name,
    status: "regression",
    requests: 0,
    regressions: failures.map((failure) => expectFinding(name, failure)),
    savings: [],
    summary: `${name}: expect failed: ${failures[0]}${more}`,
  };
}

/** Bad input makes a probe "could not be evaluated" (exit 2); any other error is a bug and is rethrown. */
function unusableInput(name: string, error: unknown): ProbeCheck {
  if (error instanceof UserError) return errorCheck(name, error);
  throw error;
}

/** The run stopped on a check that did not hold (the script ran out): the probe drifted, a regression. */
const failedWhileRunning = (name: string, error: CheckFailed): ProbeCheck =>
  expectFailed(name, [error.message, ...error.failures]);

function expectFinding(probe: string, failure: string): Finding {
  return { probe, request: null, metric: "expect", baseline: "held", actual: failure, tolerance: "exact" };
}
