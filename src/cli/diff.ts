import { diffItems, diffRuns } from "../analysis/diff.js";
import { writeDiff } from "../analysis/diff-render.js";
import { resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { LineWriter } from "../analysis/output.js";
import { parseCommand } from "./args.js";
import { outputFormat } from "./format-flag.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe diff <runA> <runB> [options]

Compares two runs request by request — aligned by seq, or by user turn when the request counts
differ — and shows per request the tools added and removed, token and byte deltas per part
(tools, system, messages), role and marker differences, and where each side's cacheable prefix
broke; then a summary: total tokens, prefix breaks of each side, the first divergence.

  <run>         a run folder, a probe name with a folder under runs/, a run id from
                runs/payload-probe.db, or <probe>@N (the N-th latest run of a probe; @1 latest)
  --json        JSON: {a, b, requests: [...], summary}
  --markdown    a markdown table and summary
  --wide        the summary table's cells whole (otherwise fitted to the terminal or COLUMNS)
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 printed (whether or not the runs differ), 2 bad usage or a run that cannot be found or read.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "diff",
    help,
    options: { json: { type: "boolean" }, markdown: { type: "boolean" }, wide: { type: "boolean" } } as const,
    positionals: { min: 2, max: 2 },
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const lookup = { runsDir, warn: warnOnStderr };
  const [a, b] = positionals.map((spec) => resolveRun(spec, lookup)) as [
    ReturnType<typeof resolveRun>,
    ReturnType<typeof resolveRun>,
  ];
  const format = outputFormat("diff", values, "text");
  const bodies = a.hasPayloads && b.hasPayloads;
  const diffs = diffRuns(diffItems(a, bodies), diffItems(b, bodies), { a: a.count(), b: b.count() });
  await writeDiff(
    diffs,
    { a: a.label, b: b.label },
    new LineWriter(process.stdout),
    format === "plain" ? "text" : format,
    tableLook(values.wide ?? false),
  );
  return 0;
}
