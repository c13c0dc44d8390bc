import { resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { listRuns } from "../analysis/run-list.js";
import { runFacts, runTableJson, writeRunTable } from "../analysis/run-table.js";
import { LineWriter } from "../analysis/table/output.js";
import { parseCommand } from "./args.js";
import { runPricer } from "./run-pricer.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe runs [options]

Every run of the runs folder, newest first, one line each: its name as report, show, view and
diff take it, when it started (UTC), what made it (probe, or the agent a capture through record,
mock or proxy came from, as its requests' user-agent names it: claude-code, codex, gemini-cli, pi,
sdk/node, sdk/python…; capture when they name none), its requests, conversations, prompt tokens,
predicted dollars, cache hit rate and failures.

The latest run of a name is its folder (runs/claude, named claude); a new run of the same name
takes the folder, and the one before stays readable from runs/payload-probe.db as claude@2, the
one before that claude@3, and so on. A run written with --no-db is kept as a folder of its own
(claude.previous-1) when a later run takes its name. Nothing is removed.

  --json        JSON: an array with one object per run
  --wide        every cell whole
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 printed (an empty runs folder prints the heading alone), 2 bad usage or a run that cannot
be read.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "runs",
    help,
    options: { json: { type: "boolean" }, wide: { type: "boolean" } } as const,
    positionals: [],
  });
  if (typeof args === "number") return args;
  const { values, runsDir } = args;
  const lookup = { runsDir, warn: warnOnStderr };
  const price = await runPricer({});
  const runs = [];
  for (const entry of listRuns(lookup)) {
    const source = resolveRun(entry.name, lookup);
    runs.push(runFacts(entry, source, await price(source)));
  }
  if (values.json) {
    process.stdout.write(`${runTableJson(runs)}\n`);
    return 0;
  }
  await writeRunTable(runs, new LineWriter(process.stdout), tableLook(values.wide ?? false));
  return 0;
}
