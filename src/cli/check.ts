import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkExitCode, loadTolerances, type ProbeCheck } from "../analysis/check/check.js";
import { checkCapturedRun } from "../analysis/check/check-captured.js";
import { renderCheckJunit, renderCheckMarkdown, writeCheckText } from "../analysis/check/check-render.js";
import { type FidelityRow, writeFidelityTable } from "../analysis/fidelity.js";
import { resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { ConversationCounts } from "../analysis/report.js";
import { LineWriter } from "../analysis/table/output.js";
import { UserError } from "../errors.js";
import { cliName } from "../invoked-as.js";
import { runCheck } from "../probes/check-run.js";
import { fidelityRows, unexplainedDifference } from "../probes/fidelity-rows.js";
import type { RunResult } from "../probes/run-options.js";
import { PROJECT_ROOT } from "../project-root.js";
import { wrapLine } from "../text-wrap.js";
import { agentsArg } from "./arg-values.js";
import { parseCommand, usageError } from "./args.js";
import { priceAsOfRun } from "./run-pricer.js";
import { interruptRunsOnSignal } from "./signals.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe check [probe...] [options]
       payload-probe check --run <run> --baseline FILE [--update] [options]

Runs every probe under probes/ (or the ones named) and compares each request with the committed
baseline probes/baselines/<probe>.json: tool names, roles, markers and request kind exactly; tokens
and bytes per part (tools, system, messages; total tokens, body bytes) within the tolerances of
probes/baselines/tolerances.yaml (absolute and percent, per metric, per probe). A count that shrinks is reported
as a saving, not a failure.

  --baseline DIR      baselines folder (default: probes/baselines); with --run, the baseline FILE
  --run RUN           gate a run already captured (a real agent through proxy or mock, or any run
                      folder, run id or <probe>@N) against --baseline FILE instead of running probes;
                      a failing run prints one "what changed" line first (tools, system lines,
                      tokens per request, dollars per run)
  --budget-tokens N   with --run: fail when the run's prompt tokens (all requests) exceed N
  --budget-dollars X  with --run: fail when the run's predicted dollars exceed X (needs a priced model);
                      both replace the budget kept in the baseline file ({"budget": {tokens, dollars}});
                      a failing budget is the first line printed: the figure, the budget, the excess
  --min-cache-hit R   with --run: fail when the run's cache hit rate (prompt tokens read from the
                      cache over all prompt tokens) is below R, a share from 0 to 1
  --max-write-amplification R
                      with --run: fail when more than R (0 to 1) of the tokens written to the cache
                      were never read by a later request (docs/cost.md)
  --model ID          with --run: price the run as model ID
  --pricing FILE      with --run: a pricing file that adds or overrides models
                      (--budget-*, --model and --pricing without --run are a usage error, exit 2:
                      probes are held to their baselines, not to budgets)
  --verbose           with --run: every figure of a failing run, not only its summary line
  --tolerances FILE   tolerance config (default: probes/baselines/tolerances.yaml; missing = exact)
  --update            rewrite the baselines of the probes run from this run (exit 0 unless a probe fails to run)
  --markdown FILE     also write a markdown report (for a CI job summary)
  --junit FILE        also write JUnit XML (regressions as failures, errors as errors)
  --agent A           runtime, pi or both (default: each probe's agent.kind); pi runs the real pi and
                      holds it against probes/baselines/<probe>@pi.json as check <probe>@pi (probes pi
                      cannot express are skipped, saying why; see 'payload-probe agents install pi');
                      both runs each probe on each, checks both, then prints the fidelity table of
                      'run --agent both' (a difference no probe records as a finding is exit 1)
  --json              print the results as JSON
  --wide              the table's cells whole (otherwise fitted to the terminal or COLUMNS)
  --runs DIR          where run folders and payload-probe.db go (default: runs/)
  -h, --help          show this help

Exit: 0 every request within its baseline, 1 a regression (probe, request, metric, baseline, actual
and tolerance are printed) or, with --agent both, an unexplained difference, 2 could not evaluate (a probe, config or skill file that cannot be used, a baseline missing or
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
      run: { type: "string" },
      verbose: { type: "boolean" },
      model: { type: "string" },
      pricing: { type: "string" },
      "budget-tokens": { type: "string" },
      "budget-dollars": { type: "string" },
      "min-cache-hit": { type: "string" },
      "max-write-amplification": { type: "string" },
      agent: { type: "string" },
    } as const,
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const agents = agentsArg("check", values.agent);
  const root = PROJECT_ROOT;
  const tolerancesPath = values.tolerances ?? join(root, "probes", "baselines", "tolerances.yaml");
  const runOnly = (
    ["budget-tokens", "budget-dollars", "min-cache-hit", "max-write-amplification", "model", "pricing"] as const
  ).filter((f) => values[f] !== undefined);
  if (values.run === undefined && runOnly.length > 0)
    throw usageError("check", `--${runOnly[0]} applies to a captured run only; give it with --run RUN --baseline FILE`);
  if (values.run !== undefined) {
    if (positionals.length > 0) throw new UserError("check: --run gates one captured run; name no probes with it");
    if (!values.baseline)
      throw new UserError("check --run: expected --baseline FILE (the run's baseline; --update writes it)");
    const source = resolveRun(values.run, { runsDir, warn: warnOnStderr });
    const { loadPricing } = await import("../analysis/cost/pricing.js");
    const check = await checkCapturedRun(source, {
      baselinePath: resolve(values.baseline),
      updateCommand: `${cliName()} check --run ${values.run} --baseline ${values.baseline} --update`,
      tolerances: loadTolerances(tolerancesPath),
      update: values.update ?? false,
      pricing: loadPricing(values.pricing),
      model: values.model,
      priceAs: await priceAsOfRun(source),
      budget: {
        ...(values["budget-tokens"] === undefined
          ? {}
          : { tokens: budgetArg("budget-tokens", values["budget-tokens"]) }),
        ...(values["budget-dollars"] === undefined
          ? {}
          : { dollars: budgetArg("budget-dollars", values["budget-dollars"]) }),
      },
      cacheLimits: {
        minHitRate: shareArg("min-cache-hit", values["min-cache-hit"]),
        maxWriteAmplification: shareArg("max-write-amplification", values["max-write-amplification"]),
      },
    });
    sayConversations(source);
    return report([check], values);
  }
  interruptRunsOnSignal();
  const results: RunResult[] = [];
  const checks = await runCheck({
    root,
    probes: positionals,
    baselineDir: values.baseline ?? join(root, "probes", "baselines"),
    tolerancesPath,
    update: values.update ?? false,
    runsDir,
    agents,
    onResult: (result) => results.push(result),
    progress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  return report(checks, values, agents?.length === 2 ? fidelityRows(results) : undefined);
}

/** The checks (and with --agent both the fidelity table) on stdout and in the report files; the exit code. */
async function report(
  checks: ProbeCheck[],
  values: { markdown?: string; junit?: string; json?: boolean; wide?: boolean; verbose?: boolean },
  fidelity?: FidelityRow[],
): Promise<number> {
  if (values.markdown) writeFileSync(values.markdown, renderCheckMarkdown(checks));
  if (values.junit) writeFileSync(values.junit, renderCheckJunit(checks));
  const look = tableLook(values.wide ?? false);
  const out = new LineWriter(process.stdout);
  if (values.json) console.log(JSON.stringify(fidelity ? { checks, fidelity } : checks, null, 2));
  else await writeCheckText(checks, out, look, values.verbose ?? false);
  if (fidelity && !values.json) {
    await out.line("fidelity: each probe on the runtime and on the real pi");
    await writeFidelityTable(fidelity, out, look);
  }
  const code = checkExitCode(checks);
  return code === 0 && fidelity && unexplainedDifference(fidelity) ? 1 : code;
}

/** A budget: a number of at least 0 (tokens or dollars). */
/** A share from 0 to 1 (`--min-cache-hit 0.8`), or undefined when the flag was not given. */
function shareArg(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0 || number > 1)
    throw new UserError(`check: --${flag} expected a share from 0 to 1 (0.8 for 80%), got ${JSON.stringify(value)}`);
  return number;
}

function budgetArg(flag: string, value: string): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0)
    throw new UserError(`check: --${flag} expected a number of at least 0, got ${JSON.stringify(value)}`);
  return number;
}

/** The gated run's conversations and their requests, on stderr (stdout stays the check's output). */
function sayConversations(source: ReturnType<typeof resolveRun>): void {
  const conversations = new ConversationCounts();
  for (const record of source.summaries()) conversations.add(record);
  const line = conversations.line();
  if (line) process.stderr.write(`${wrapLine(line, 80, 2, true).join("\n")}\n`);
}
