import Table from "cli-table3";
import { renderRunTable } from "../analysis/run-table.js";
import { DEFAULT_LIMITS, REQUESTS_PER_PROMPT } from "../probes/limits.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { allProbeNames } from "../probes/probe-names.js";
import { type RunResult, runProbe } from "../probes/runner.js";
import { PROJECT_ROOT } from "../project-root.js";
import { positiveIntegerArg, runsDirArg } from "./arg-values.js";
import { parseCommandArgs } from "./args.js";
import { OTEL_FLAG_HELP, otelFlag } from "./otel-flag.js";
import { interruptRunsOnSignal } from "./signals.js";

export const help = `Usage: payload-probe run <probe...|all> [options]

Runs probes on the scripted model, records every provider request to runs/<probe>/ and
runs/payload-probe.db, prints one row per request and whether the probe's expect block held.

  <probe>       a name under probes/ (p1) or a path to a probe file
  all           every probe under probes/
  --json        print the results as JSON instead of tables
  --no-db       do not write runs/payload-probe.db
  --runs DIR    where run folders and payload-probe.db go (default: runs/)
  --max-requests N       provider requests one run may make (default ${DEFAULT_LIMITS.requests})
  --max-payload-bytes N  request and response bytes one run may send and receive (default ${DEFAULT_LIMITS.payloadBytes})
${OTEL_FLAG_HELP}; each probe run is sent when it has finished
  -h, --help    show this help

A run of a probe that is already running (in this clone or another) waits for it and says so.
One prompt may take at most ${REQUESTS_PER_PROMPT} model requests before a text answer; a probe over a limit is bad input.

Exit: 0 every expect held, 1 an expect did not hold, 2 bad input (probe, config, skill file, a limit),
130/143 stopped by SIGINT/SIGTERM (the run is recorded as interrupted).`;

function printResult(result: RunResult): void {
  const { probe, records, failures } = result;
  console.log(`${probe.name}${probe.title ? ` — ${probe.title}` : ""}`);
  console.log(renderRunTable(records));
  if (failures.length === 0) console.log(`expect: held (${records.length} requests) → ${result.dir}`);
  else {
    console.log(`expect: FAILED (${failures.length})`);
    for (const failure of failures) console.log(`  - ${failure}`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("run", argv, {
    json: { type: "boolean" },
    "no-db": { type: "boolean" },
    runs: { type: "string" },
    "max-requests": { type: "string" },
    "max-payload-bytes": { type: "string" },
    otel: { type: "string" },
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
  interruptRunsOnSignal();
  // The exporter loads while the first probe runs; its settings were checked already.
  const otel = otelFlag(values.otel);
  const results: RunResult[] = [];
  for (const [i, probe] of probes.entries()) {
    if (probes.length > 1 && !values.json) process.stderr.write(`[${i + 1}/${probes.length}] ${probe.name} …\n`);
    const result = await runProbe(probe, { database: !values["no-db"], runsDir, limits });
    results.push(result);
    await (await otel)?.exportProbeRun(result.dir, result.records);
    if (!values.json) printResult(result);
  }
  if (values.json) {
    console.log(
      JSON.stringify(
        results.map((r) => ({
          probe: r.probe.name,
          run: r.runId,
          dir: r.dir,
          passed: r.failures.length === 0,
          failures: r.failures,
          records: r.records,
        })),
        null,
        2,
      ),
    );
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
  await (await otel)?.close();
  return results.every((r) => r.failures.length === 0) ? 0 : 1;
}
