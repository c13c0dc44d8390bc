import { resolve } from "node:path";
import { dollars, PRICE_UNKNOWN } from "../analysis/cost/money.js";
import { type FidelityRow, writeFidelityTable } from "../analysis/fidelity.js";
import { resolveRun } from "../analysis/load-run.js";
import { writeReport } from "../analysis/report.js";
import { LineWriter } from "../analysis/table/output.js";
import { TableOutput } from "../analysis/table/table-output.js";
import type { TableLook } from "../analysis/table/table-style.js";
import { piRunName } from "../files/safe-path.js";
import { fidelityRows, unexplainedDifference } from "../probes/fidelity-rows.js";
import { poolPerProbe, runProgressLine } from "../probes/in-order-pool.js";
import { DEFAULT_LIMITS, REQUESTS_PER_PROMPT } from "../probes/limits.js";
import { loadProbeFile } from "../probes/load.js";
import { probePriceAs } from "../probes/price-as.js";
import { agentOf, piFor, runOn } from "../probes/run-on.js";
import type { RunResult } from "../probes/run-options.js";
import type { Probe } from "../probes/types.js";
import { PROJECT_ROOT } from "../project-root.js";
import { agentsArg, allProbeFiles, positiveIntegerArg, probeFileArg } from "./arg-values.js";
import { parseCommand } from "./args.js";
import { KEEP_SECRETS_HELP, keepSecretsFlag } from "./keep-secrets-flag.js";
import { OTEL_FLAG_HELP, otelFlag } from "./otel-flag.js";
import { type RunPricer, runPricer } from "./run-pricer.js";
import { seeItLine } from "./see-it.js";
import { interruptRunsOnSignal } from "./signals.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe run <probe...|all> [options]

Runs probes on the scripted model, records every provider request to runs/<probe>/ and
runs/payload-probe.db, prints one row per request and whether the probe's expect block held.

  <probe>       a name under probes/ (p1) or a path to a probe file
  all           every probe under probes/
  --agent A     runtime, pi (the real pi against the mock: runs/<probe>@pi/; see
                'payload-probe agents install pi'), or both (each probe on both, then the fidelity table);
                default: each probe's agent.kind (runtime unless it says pi)
  --json        print the results as JSON instead of tables
  --wide        every table cell whole (tables are otherwise fitted to the terminal or COLUMNS)
  --no-db       do not write runs/payload-probe.db
  --profile F   the profile file every probe runs with, in place of its agent.profile (see
                'payload-probe profile import')
  --runs DIR    where run folders and payload-probe.db go (default: runs/)
  --max-requests N       provider requests one run may make (default ${DEFAULT_LIMITS.requests})
  --max-payload-bytes N  request and response bytes one run may send and receive (default ${DEFAULT_LIMITS.payloadBytes})
${KEEP_SECRETS_HELP}
${OTEL_FLAG_HELP}; each probe run is sent when it has finished
  -h, --help    show this help

A run of a probe that is already running (in this clone or another) waits for it and says which
process holds its lock; after PAYLOAD_PROBE_LOCK_WAIT seconds (default 300) it gives up with exit 2.
A database another program keeps locked is waited for PAYLOAD_PROBE_DB_WAIT seconds (default 5).
One prompt may take at most ${REQUESTS_PER_PROMPT} model requests before a text answer; a probe over a limit is bad input.

Exit: 0 every expect held, 1 an expect did not hold, 2 bad input (probe, config, skill file, a limit),
130/143 stopped by SIGINT/SIGTERM (the run is recorded as interrupted).`;

async function printResult(result: RunResult, look: TableLook, runsDir: string, price: RunPricer): Promise<void> {
  const { probe, records, failures } = result;
  const out = new LineWriter(process.stdout);
  const label = result.agent === "pi" ? `${probe.name} on pi` : probe.name;
  // Lines wider than the terminal carry on two spaces in (four under a failure's dash).
  const line = (text: string, indent = 2) => out.wrappedLine(text, look.maxWidth, indent);
  if (result.skipped) {
    await line(`${label}: skipped — ${result.skipped}`);
    await out.flush();
    return;
  }
  await line(`${label}${probe.title ? ` — ${probe.title}` : ""}`);
  await writeReport(records, out, { format: "table", unit: "bytes", look });
  if (failures.length === 0) await line(`expect: held (${records.length} requests) → ${result.dir}`);
  else {
    await line(`expect: FAILED (${failures.length})`);
    for (const failure of failures) await line(`  - ${failure}`, 4);
  }
  if (records.length > 0) await line(await costLine(result, runsDir, price));
  await line(seeItFor(result, runsDir));
  await out.flush();
}

/** `cost: $0.0123 predicted as gpt-4.1 (@pydantic/genai-prices 0.1.8)`: the run's total, as report --cost has it. */
async function costLine(result: RunResult, runsDir: string, price: RunPricer): Promise<string> {
  const cost = await price(resolveRun(result.dir, { runsDir }), undefined, probePriceAs(result.probe));
  const models = [...new Set(cost.requests.map((r) => r.pricedAs ?? r.model))].join(", ");
  const total = cost.total.predicted === null ? PRICE_UNKNOWN : dollars(cost.total.predicted);
  return `cost: ${total} predicted as ${models} (${cost.prices.table.replace(/ \(.*\)$/, "")})`;
}

/**
 * Where to look next at a probe's run. On a narrow terminal the line breaks between the three
 * commands, each whole where it fits the width.
 */
function seeItFor(result: RunResult, runsDir: string): string {
  const name = result.agent === "pi" ? piRunName(result.probe.name) : result.probe.name;
  return seeItLine(name, result.dir, runsDir, result.records[0]?.seq ?? 1);
}

async function printSummary(results: RunResult[], look: TableLook): Promise<void> {
  const out = new LineWriter(process.stdout);
  const summary = new TableOutput(["probe", "requests", "expect"], {
    align: ["left", "right", "left"],
    look,
    tone: (row, column) => (column === 2 ? (row[2] === "held" ? "green" : "red") : null),
  });
  for (const r of results)
    summary.push([r.probe.name, r.records.length, r.failures.length === 0 ? "held" : `FAILED (${r.failures.length})`]);
  await summary.write(out);
  await out.flush();
}

const OPTIONS = {
  json: { type: "boolean" },
  "no-db": { type: "boolean" },
  wide: { type: "boolean" },
  profile: { type: "string" },
  "max-requests": { type: "string" },
  "max-payload-bytes": { type: "string" },
  agent: { type: "string" },
  otel: { type: "string" },
  "keep-secrets": { type: "boolean" },
} as const;

/** The probes named (or all), every file validated before anything runs: a typo in the fifth should not cost four runs. */
async function loadProbes(positionals: string[], profilePath: string | undefined): Promise<Probe[]> {
  const files = positionals.includes("all") ? allProbeFiles() : positionals.map((name) => probeFileArg("run", name));
  const profile = profilePath === undefined ? undefined : resolve(profilePath);
  const probes: Probe[] = [];
  for (const file of files) {
    const probe = await loadProbeFile(file, PROJECT_ROOT);
    probes.push(profile ? { ...probe, agent: { ...probe.agent, profile } } : probe);
  }
  return probes;
}

/** After every run: the JSON, the fidelity table of a run on both agents, or the summary of several probes. */
async function printEnd(
  results: RunResult[],
  fidelity: FidelityRow[] | undefined,
  json: boolean,
  look: TableLook,
): Promise<void> {
  if (json) {
    const runs = results.map(resultJson);
    console.log(JSON.stringify(fidelity ? { runs, fidelity } : runs, null, 2));
  } else if (fidelity) {
    const out = new LineWriter(process.stdout);
    await out.line("fidelity: each probe on the runtime and on the real pi");
    await writeFidelityTable(fidelity, out, look);
  } else if (results.length > 1) await printSummary(results, look);
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, { name: "run", help, options: OPTIONS, positionals: ["<probe...|all>"] });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const look = tableLook(values.wide ?? false);
  const limits = {
    requests: positiveIntegerArg("run", "max-requests", values["max-requests"]) ?? DEFAULT_LIMITS.requests,
    payloadBytes:
      positiveIntegerArg("run", "max-payload-bytes", values["max-payload-bytes"]) ?? DEFAULT_LIMITS.payloadBytes,
  };
  const probes = await loadProbes(positionals, values.profile);
  const chosen = agentsArg("run", values.agent);
  const agentsOf = (probe: Probe) => chosen ?? [agentOf(probe)];
  const pi = await piFor(probes.flatMap(agentsOf));
  interruptRunsOnSignal();
  const keepSecrets = keepSecretsFlag("run", values["keep-secrets"]);
  const options = { database: !values["no-db"], runsDir, limits, keepSecrets };
  // The exporter loads while the first probe runs; its settings were checked already.
  const otel = otelFlag(values.otel);
  const price = values.json ? undefined : await runPricer({});
  const results = await poolPerProbe(
    probes,
    agentsOf,
    (probe, agent, n, total) => {
      if (total > 1 && !values.json) process.stderr.write(`${runProgressLine(n, total, probe.name, agent)}\n`);
      return runOn(agent, probe, options, pi);
    },
    async (result) => {
      await (await otel)?.exportProbeRun(result.dir, result.records);
      if (price) await printResult(result, look, runsDir, price);
    },
  );
  const fidelity = chosen?.length === 2 ? fidelityRows(results) : undefined;
  await printEnd(results, fidelity, values.json === true, look);
  await (await otel)?.close();
  const unexplained = fidelity !== undefined && unexplainedDifference(fidelity);
  return results.every((r) => r.failures.length === 0) && !unexplained ? 0 : 1;
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
