import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkExitCode } from "../analysis/check.js";
import { renderCheckJunit, renderCheckMarkdown, writeCheckText } from "../analysis/check-render.js";
import { LineWriter } from "../analysis/output.js";
import { runCheck } from "../probes/check-run.js";
import { PROJECT_ROOT } from "../project-root.js";
import { parseCommand } from "./args.js";
import { interruptRunsOnSignal } from "./signals.js";
import { tableLook } from "./terminal.js";

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
  --wide              the table's cells whole (otherwise fitted to the terminal or COLUMNS)
  --runs DIR          where run folders and payload-probe.db go (default: runs/)
  -h, --help          show this help

Exit: 0 every request within its baseline, 1 a regression (probe, request, metric, baseline, actual
and tolerance are printed), 2 could not evaluate (a probe, config or skill file that cannot be used, a baseline missing or
corrupt), 3 internal error (a bug; its stack is printed).`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "check",
    help,
    options: {
      baseline: { type: "string" },
      tolerances: { type: "string" },
      update: { type: "boolean" },
      markdown: { type: "string" },
      junit: { type: "string" },
      json: { type: "boolean" },
      wide: { type: "boolean" },
    } as const,
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const root = PROJECT_ROOT;
  interruptRunsOnSignal();
  const checks = await runCheck({
    root,
    probes: positionals,
    baselineDir: values.baseline ?? join(root, "probes", "baselines"),
    tolerancesPath: values.tolerances ?? join(root, "probes", "baselines", "tolerances.yaml"),
    update: values.update ?? false,
    runsDir,
    progress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  if (values.markdown) writeFileSync(values.markdown, renderCheckMarkdown(checks));
  if (values.junit) writeFileSync(values.junit, renderCheckJunit(checks));
  if (values.json) console.log(JSON.stringify(checks, null, 2));
  else await writeCheckText(checks, new LineWriter(process.stdout), tableLook(values.wide ?? false));
  return checkExitCode(checks);
}
