import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  baselineOf,
  checkExitCode,
  compareWithBaseline,
  errorCheck,
  loadTolerances,
  type ProbeCheck,
  readBaseline,
  writeBaseline,
} from "../analysis/check.js";
import { renderCheckJunit, renderCheckMarkdown, renderCheckText } from "../analysis/check-render.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { type RunResult, runProbe } from "../probes/runner.js";
import { PROJECT_ROOT } from "../project-root.js";
import { parseCommandArgs } from "./args.js";
import { allProbeNames } from "./run.js";

export const help = `Usage: payload-probe check [probe...] [options]

Runs every probe under probes/ (or the ones named) and compares each request with the committed
baseline probes/baselines/<probe>.json: tool names, roles, markers and request kind exactly; tokens
and bytes per part (tools, system, messages; total tokens, body bytes) within the tolerances of
probes/baselines/tolerances.yaml (absolute and percent, per metric, per probe). A count that shrinks is reported
as a saving, not a failure.

  --baseline DIR      baselines folder (default: probes/baselines)
  --tolerances FILE   tolerance config (default: probes/baselines/tolerances.yaml; missing = exact)
  --update            rewrite the baselines of the probes run from this run (exit 0 unless a probe fails to run)
  --markdown FILE     also write a markdown report (for a CI job summary)
  --junit FILE        also write JUnit XML (regressions as failures, errors as errors)
  --json              print the results as JSON
  -h, --help          show this help

Exit: 0 every request within its baseline, 1 a regression (probe, request, metric, baseline, actual
and tolerance are printed), 2 could not evaluate (a probe failed to run, a baseline is missing or corrupt).`;

export interface CheckOptions {
  /** Project root: the probes are probes/<name>.yaml under it. */
  root: string;
  probes: string[];
  baselineDir: string;
  tolerancesPath: string;
  update: boolean;
  /** Where runs go and probe workspaces are made (tests use temp folders). */
  runsDir?: string;
  workspaceRoot?: string;
  database?: boolean;
  progress?: (line: string) => void;
}

export async function runCheck(options: CheckOptions): Promise<ProbeCheck[]> {
  const tolerances = loadTolerances(options.tolerancesPath);
  const names = options.probes.length > 0 ? options.probes : allProbeNames(options.root);
  const checks: ProbeCheck[] = [];
  for (const [i, name] of names.entries()) {
    options.progress?.(`[${i + 1}/${names.length}] ${name} …`);
    checks.push(await checkProbe(name, options, tolerances));
  }
  return checks;
}

async function checkProbe(
  name: string,
  options: CheckOptions,
  tolerances: ReturnType<typeof loadTolerances>,
): Promise<ProbeCheck> {
  const baselinePath = join(options.baselineDir, `${name}.json`);
  let result: RunResult;
  try {
    const probe = loadProbeFile(resolveProbePath(name, options.root), options.root);
    result = await runProbe(probe, {
      root: options.root,
      runsDir: options.runsDir,
      workspaceRoot: options.workspaceRoot,
      database: options.database,
    });
  } catch (error) {
    return errorCheck(name, error);
  }
  if (options.update) {
    writeBaseline(baselinePath, baselineOf(name, result.records));
    return { probe: name, status: "updated", requests: result.records.length, regressions: [], savings: [] };
  }
  let check: ProbeCheck;
  try {
    check = compareWithBaseline(readBaseline(baselinePath, name), result.records, tolerances);
  } catch (error) {
    return errorCheck(name, error);
  }
  // A probe whose expect block failed has drifted from its experiment: that is a regression too.
  const expectFailures = result.failures.map((failure) => ({
    probe: name,
    request: null,
    metric: "expect",
    baseline: "held",
    actual: failure,
    tolerance: "exact",
  }));
  check.regressions.unshift(...expectFailures);
  if (check.regressions.length > 0) check.status = "regression";
  return check;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("check", argv, {
    baseline: { type: "string" },
    tolerances: { type: "string" },
    update: { type: "boolean" },
    markdown: { type: "string" },
    junit: { type: "string" },
    json: { type: "boolean" },
  } as const);
  if (values.help) {
    console.log(help);
    return 0;
  }
  const root = PROJECT_ROOT;
  const checks = await runCheck({
    root,
    probes: positionals,
    baselineDir: values.baseline ?? join(root, "probes", "baselines"),
    tolerancesPath: values.tolerances ?? join(root, "probes", "baselines", "tolerances.yaml"),
    update: values.update ?? false,
    progress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  if (values.markdown) writeFileSync(values.markdown, renderCheckMarkdown(checks));
  if (values.junit) writeFileSync(values.junit, renderCheckJunit(checks));
  console.log(values.json ? JSON.stringify(checks, null, 2) : renderCheckText(checks));
  return checkExitCode(checks);
}
