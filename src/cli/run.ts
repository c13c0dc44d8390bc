import Table from "cli-table3";
import { type FidelityRow, fidelityRow, writeFidelityTable } from "../analysis/fidelity.js";
import { LineWriter } from "../analysis/output.js";
import { renderRunTable } from "../analysis/run-table.js";
import { UserError } from "../errors.js";
import { DEFAULT_LIMITS, REQUESTS_PER_PROMPT } from "../probes/limits.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { requirePi, runProbeOnPi } from "../probes/pi-runner.js";
import { allProbeNames } from "../probes/probe-names.js";
import { type RunResult, runProbe } from "../probes/runner.js";
import type { Probe } from "../probes/types.js";
import { PROJECT_ROOT } from "../project-root.js";
import { positiveIntegerArg, runsDirArg } from "./arg-values.js";
import { parseCommandArgs } from "./args.js";
import { interruptRunsOnSignal } from "./signals.js";

export const help = `Usage: payload-probe run <probe...|all> [options]

Runs probes on the scripted model, records every provider request to runs/<probe>/ and
runs/payload-probe.db, prints one row per request and whether the probe's expect block held.

  <probe>       a name under probes/ (p1) or a path to a probe file
  all           every probe under probes/
  --agent A     runtime, pi (the real pi against the mock: runs/<probe>@pi/; see
                'payload-probe agents install pi'), or both (each probe on both, then the fidelity table);
                default: each probe's agent.kind (runtime unless it says pi)
  --json        print the results as JSON instead of tables
  --no-db       do not write runs/payload-probe.db
  --runs DIR    where run folders and payload-probe.db go (default: runs/)
  --max-requests N       provider requests one run may make (default ${DEFAULT_LIMITS.requests})
  --max-payload-bytes N  request and response bytes one run may send and receive (default ${DEFAULT_LIMITS.payloadBytes})
  -h, --help    show this help

A run of a probe that is already running (in this clone or another) waits for it and says so.
One prompt may take at most ${REQUESTS_PER_PROMPT} model requests before a text answer; a probe over a limit is bad input.

Exit: 0 every expect held, 1 an expect did not hold, 2 bad input (probe, config, skill file, a limit),
130/143 stopped by SIGINT/SIGTERM (the run is recorded as interrupted).`;

function printResult(result: RunResult): void {
  const { probe, records, failures } = result;
  const label = result.agent === "pi" ? `${probe.name} on pi` : probe.name;
  if (result.skipped) {
    console.log(`${label}: skipped — ${result.skipped}`);
    return;
  }
  console.log(`${label}${probe.title ? ` — ${probe.title}` : ""}`);
  console.log(renderRunTable(records));
  if (failures.length === 0) console.log(`expect: held (${records.length} requests) → ${result.dir}`);
  else {
    console.log(`expect: FAILED (${failures.length})`);
    for (const failure of failures) console.log(`  - ${failure}`);
  }
}

function resultJson(r: RunResult) {
  return {
    probe: r.probe.name,
    agent: r.agent ?? "runtime",
    ...(r.skipped ? { skipped: r.skipped } : {}),
    run: r.runId,
    dir: r.dir,
    passed: r.failures.length === 0,
    failures: r.failures,
    records: r.records,
  };
}

/**
 * The runtime's and pi's results of each probe side by side; a difference in a probe that states its
 * pi expectations apart is a recorded finding.
 */
function fidelityRows(results: RunResult[]): FidelityRow[] {
  const rows: FidelityRow[] = [];
  for (const runtime of results.filter((r) => r.agent !== "pi")) {
    const pi = results.find((r) => r.agent === "pi" && r.probe === runtime.probe);
    if (!pi) continue;
    const side = pi.skipped ? { skipped: pi.skipped } : pi.records;
    rows.push(fidelityRow(runtime.probe.name, runtime.records, side, runtime.probe.pi?.expect !== undefined));
  }
  return rows;
}

/** `--agent`: which agents run each probe, in order; without it, each probe's `agent.kind`. */
function agentArg(value: string | undefined): ("runtime" | "pi")[] | undefined {
  if (value === undefined) return undefined;
  if (value === "runtime") return ["runtime"];
  if (value === "pi") return ["pi"];
  if (value === "both") return ["runtime", "pi"];
  throw new UserError(`run: --agent expected runtime, pi or both, got ${JSON.stringify(value)}`);
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("run", argv, {
    json: { type: "boolean" },
    "no-db": { type: "boolean" },
    runs: { type: "string" },
    "max-requests": { type: "string" },
    "max-payload-bytes": { type: "string" },
    agent: { type: "string" },
  } as const);
  if (values.help || positionals.length === 0) {
    console.log(help);
    return values.help ? 0 : 2;
  }
  const runsDir = runsDirArg("run", values.runs);
  const limits = {
    requests: positiveIntegerArg("run", "max-requests", values["max-requests"]) ?? DEFAULT_LIMITS.requests,
    payloadBytes:
      positiveIntegerArg("run", "max-payload-bytes", values["max-payload-bytes"]) ?? DEFAULT_LIMITS.payloadBytes,
  };
  const names = positionals.includes("all") ? allProbeNames(PROJECT_ROOT) : positionals;
  // Every file is validated before anything runs: a typo in the fifth probe should not cost four runs.
  const probes = names.map((name) => loadProbeFile(resolveProbePath(name, PROJECT_ROOT), PROJECT_ROOT));
  const chosen = agentArg(values.agent);
  const agentsOf = (probe: Probe) => chosen ?? [probe.agent.kind];
  const pi = probes.some((probe) => agentsOf(probe).includes("pi")) ? requirePi() : undefined;
  interruptRunsOnSignal();
  const results: RunResult[] = [];
  for (const [i, probe] of probes.entries()) {
    if (probes.length > 1 && !values.json) process.stderr.write(`[${i + 1}/${probes.length}] ${probe.name} …\n`);
    const options = { database: !values["no-db"], runsDir, limits };
    for (const agent of agentsOf(probe)) {
      const result = agent === "pi" ? await runProbeOnPi(probe, options, pi) : await runProbe(probe, options);
      results.push(result);
      if (!values.json) printResult(result);
    }
  }
  const fidelity = chosen?.length === 2 ? fidelityRows(results) : undefined;
  if (values.json)
    console.log(
      JSON.stringify(fidelity ? { runs: results.map(resultJson), fidelity } : results.map(resultJson), null, 2),
    );
  else if (fidelity) {
    console.log("fidelity: each probe on the runtime and on the real pi");
    await writeFidelityTable(fidelity, new LineWriter(process.stdout));
  } else if (results.length > 1) {
    const summary = new Table({ head: ["probe", "requests", "expect"], style: { head: [], border: [] } });
    for (const r of results)
      summary.push([
        r.probe.name,
        r.records.length,
        r.failures.length === 0 ? "held" : `FAILED (${r.failures.length})`,
      ]);
    console.log(summary.toString());
  }
  const unexplained = fidelity?.some((row) => row.verdict === "differs") ?? false;
  return results.every((r) => r.failures.length === 0) && !unexplained ? 0 : 1;
}
