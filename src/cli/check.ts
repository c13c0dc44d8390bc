import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { CacheLimits } from "../analysis/check/cache-gate.js";
import { type Budget, checkExitCode, loadTolerances, type ProbeCheck } from "../analysis/check/check.js";
import { checkCapturedRun } from "../analysis/check/check-captured.js";
import { renderCheckJunit, renderCheckMarkdown, writeCheckText } from "../analysis/check/check-render.js";
import { parseSourceLimit, type SourceLimits } from "../analysis/check/source-gate.js";
import { type FidelityRow, writeFidelityTable } from "../analysis/fidelity.js";
import { resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { ConversationCounts } from "../analysis/report.js";
import { LineWriter } from "../analysis/table/output.js";
import { UserError } from "../errors.js";
import { runCheck } from "../probes/check-run.js";
import { fidelityRows, unexplainedDifference } from "../probes/fidelity-rows.js";
import { probeRoots } from "../probes/probe-names.js";
import type { RunResult } from "../probes/run-options.js";
import { cliName, shellWord } from "../text/invoked-as.js";
import { wrapLine } from "../text/text-wrap.js";
import { agentsArg } from "./arg-values.js";
import { parseCommand, usageError } from "./args.js";
import { priceAsOfRun } from "./run-pricer.js";
import { interruptRunsOnSignal } from "./signals.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe check [probe...] [options]
       payload-probe check --run <run> --baseline FILE [--update] [options]

Runs every probe of probes/ (yours, in the current folder, else the shipped ones; or the ones
named) and holds each run to its baseline, baselines/<probe>.json beside the probe file: tool
names, roles, markers, request kind and where the cache prefix breaks exactly (a new prefix break
fails); tokens and bytes per part within the tolerances of tolerances.yaml beside the baselines
(absolute and percent, per metric, per probe); the budget and cache limits the baseline keeps. A
count that shrinks is reported as a saving, not a failure. A failing probe prints one "what changed"
line first (tools, system lines, new cache prefix breaks, tokens per request, dollars per run at
its model.priceAs).

  --baseline DIR      baselines folder (default: baselines/ beside each probe); with --run, the
                      baseline FILE
  --run RUN           gate a run already captured (a real agent through proxy or mock, or any run
                      folder, run id or <probe>@N) against --baseline FILE instead of running probes
  --budget-tokens N   fail when a run's prompt tokens (all requests) exceed N
  --budget-dollars X  fail when a run's predicted dollars exceed X (needs a priced model);
                      both replace the budget kept in the baseline ({"budget": {tokens, dollars}});
                      with --update they are written into it
  --min-cache-hit R   fail when a run's cache hit rate (prompt tokens read from the cache over all
                      prompt tokens) is below R, a share from 0 to 1
  --max-write-amplification R
                      fail when more than R (0 to 1) of the tokens written to the cache were never
                      read by a later request (docs/cost.md); both are kept in the baseline as
                      {"cacheLimits": {minHitRate, maxWriteAmplification}} by --update
  --max-source SOURCE=N
                      with --run: fail when a source takes more than N tokens in any one
                      request (a source as 'report --context' names it: mcp:github=2000,
                      tools:builtin=12000, instructions:CLAUDE.md=500); repeat for several
  --model ID          with --run: price the run as model ID
  --pricing FILE      with --run: a pricing file that adds or overrides models (--model and
                      --pricing without --run are a usage error, exit 2)
  --verbose           every figure of a failing check, not only its summary line
  --tolerances FILE   tolerance config (default: tolerances.yaml in the baselines folder; missing =
                      exact)
  --update            rewrite the baselines from this run; refused (exit 1, nothing written) for a
                      probe whose expect failed or a run that breaks the baseline's own budget or
                      cache limits
  --force             with --update: write the baseline even when it breaks its own limits
  --markdown FILE     also write a markdown report (for a CI job summary): the "what changed" line
                      of each failing check, and each check's figures against its budget
  --junit FILE        also write JUnit XML (one test case per probe and request, at most one
                      <failure> each; errors as errors)
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

/** check's options, as parseCommand takes them. */
const CHECK_OPTIONS = {
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
  "max-source": { type: "string", multiple: true },
  agent: { type: "string" },
  force: { type: "boolean" },
} as const;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, { name: "check", help, options: CHECK_OPTIONS });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const agents = agentsArg("check", values.agent);
  const runOnly = (["model", "pricing", "max-source"] as const).filter((f) => values[f] !== undefined);
  if (values.run === undefined && runOnly.length > 0)
    throw usageError("check", `--${runOnly[0]} applies to a captured run only; give it with --run RUN --baseline FILE`);
  if (values.run !== undefined) {
    if (positionals.length > 0) throw new UserError("check: --run gates one captured run; name no probes with it");
    return report([await checkCaptured(values.run, values, runsDir)], values);
  }
  interruptRunsOnSignal();
  const results: RunResult[] = [];
  const checks = await runCheck({
    updateCommand: (probe, onPi) =>
      [
        cliName(),
        "check",
        shellWord(probe),
        ...repeated(values, ["baseline", "tolerances", "runs"]),
        ...(onPi ? ["--agent", "pi"] : []),
        "--update",
      ].join(" "),
    ...limitFlags(values),
    force: values.force ?? false,
    probeRoots: probeRoots(),
    probes: positionals,
    baselineDir: values.baseline === undefined ? undefined : resolve(values.baseline),
    tolerancesPath: values.tolerances === undefined ? undefined : resolve(values.tolerances),
    update: values.update ?? false,
    runsDir,
    agents,
    onResult: (result) => results.push(result),
    progress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  return report(checks, values, agents?.length === 2 ? fidelityRows(results) : undefined);
}

interface CheckValues {
  "max-source"?: string[];
  baseline?: string;
  tolerances?: string;
  update?: boolean;
  force?: boolean;
  pricing?: string;
  model?: string;
  [flag: string]: string | string[] | boolean | undefined;
}

/** `check --run RUN --baseline FILE`: one captured run against its baseline file. */
async function checkCaptured(run: string, values: CheckValues, runsDir: string): Promise<ProbeCheck> {
  if (!values.baseline)
    throw new UserError("check --run: expected --baseline FILE (the run's baseline; --update writes it)");
  const source = resolveRun(run, { runsDir, warn: warnOnStderr });
  const baselinePath = resolve(values.baseline);
  const { loadPricing } = await import("../analysis/cost/pricing.js");
  const check = await checkCapturedRun(source, {
    baselinePath,
    updateCommand: [
      cliName(),
      "check",
      ...repeated(values, ["run", "baseline", "tolerances", "runs"]),
      "--update",
    ].join(" "),
    tolerances: loadTolerances(
      values.tolerances === undefined ? join(dirname(baselinePath), "tolerances.yaml") : resolve(values.tolerances),
    ),
    update: values.update ?? false,
    force: values.force ?? false,
    pricing: loadPricing(values.pricing),
    model: values.model,
    priceAs: await priceAsOfRun(source),
    ...limitFlags(values),
    sourceLimits: sourceLimitFlags(values["max-source"], values.update === true),
  });
  sayConversations(source);
  return check;
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

/** The budget and cache limits given on the command line, only those given (they replace the baseline's one by one). */
function limitFlags(values: Partial<Record<string, unknown>>): { budget: Budget; cacheLimits: CacheLimits } {
  const given = (flag: string) => (typeof values[flag] === "string" ? (values[flag] as string) : undefined);
  const entry = <T>(key: string, value: T | undefined) => (value === undefined ? {} : { [key]: value });
  const budget = given("budget-tokens");
  const dollarBudget = given("budget-dollars");
  return {
    budget: {
      ...entry("tokens", budget === undefined ? undefined : budgetArg("budget-tokens", budget)),
      ...entry("dollars", dollarBudget === undefined ? undefined : budgetArg("budget-dollars", dollarBudget)),
    },
    cacheLimits: {
      ...entry("minHitRate", shareArg("min-cache-hit", given("min-cache-hit"))),
      ...entry("maxWriteAmplification", shareArg("max-write-amplification", given("max-write-amplification"))),
    },
  };
}

/** `--max-source SOURCE=N`, repeated: each source's ceiling in one request. */
function sourceLimitFlags(given: string[] | undefined, update: boolean): SourceLimits {
  if (given === undefined) return {};
  if (update) throw usageError("check", "--max-source is not kept in the baseline; give it without --update");
  return given.reduce((limits, value) => parseSourceLimit("max-source", value, limits), {} as SourceLimits);
}

/** The options that chose the gate's files, as given, for a hint that must reach the same files. */
function repeated(values: Partial<Record<string, unknown>>, flags: string[]): string[] {
  return flags.flatMap((flag) => (typeof values[flag] === "string" ? [`--${flag}`, shellWord(values[flag])] : []));
}

/** A share from 0 to 1 (`--min-cache-hit 0.8`), or undefined when the flag was not given. */
function shareArg(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0 || number > 1)
    throw new UserError(`check: --${flag} expected a share from 0 to 1 (0.8 for 80%), got ${JSON.stringify(value)}`);
  return number;
}

/** A budget: a number of at least 0 (tokens or dollars). */
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
