import { runOrBaseline } from "../analysis/check/baseline-run.js";
import type { ContextSummary } from "../analysis/context/context-summary.js";
import type { RunCost } from "../analysis/cost/run-cost.js";
import { diffSources } from "../analysis/diff/diff.js";
import { writeDiff } from "../analysis/diff/diff-render.js";
import { type RunSource, warnOnStderr } from "../analysis/load-run.js";
import type { ReportFormat } from "../analysis/report.js";
import { LineWriter } from "../analysis/table/output.js";
import type { TableLook } from "../analysis/table/table-style.js";
import { readInputFile } from "../files/input-file.js";
import { wrapLines } from "../text/text-wrap.js";
import { parseCommand, usageError } from "./args.js";
import { outputFormat } from "./format-flag.js";
import { type PriceFlags, type RatedPass, ratedPass, runPricer } from "./run-pricer.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe diff <runA> <runB> [options]

Compares two runs request by request — aligned by seq, or by user turn when the request counts
differ — and shows per request the tools added and removed, token and byte deltas per part
(tools, system, messages), every other field of the body that differs with its path and both
values (metadata.user_id: A "…" B "…"), role and marker differences, and where each side's
cacheable prefix broke; then a summary: total tokens, prefix breaks of each side, the first
divergence.

  <run>         a run folder, a probe name with a folder under runs/, a run id from
                runs/payload-probe.db, <probe>@N (the N-th latest run of a probe; @1 latest), or a
                baseline .json file (check --update wrote it; one written by check --run also
                keeps hashes and prefixes, so equal requests read as equal)
  --cost        then the money: each request's predicted dollars on both sides and the delta, the
                totals, and for each prefix break "this break re-billed N tokens × K requests = $…"
                (with --json, only this comparison is printed, as one JSON object)
                (each side is priced as its own model: its requests' model, or for a probe's run
                the probe's model.priceAs; prices from the bundled @pydantic/genai-prices table)
  --model ID    price both runs as model ID
  --model-a ID  price run A as model ID (overrides --model for A)
  --model-b ID  price run B as model ID (overrides --model for B)
  --pricing FILE  a pricing file that adds or overrides models (default: $PAYLOAD_PROBE_PRICING)
  --ignore PATH  a body field that changes every run (an id, a timestamp), never reported as a
                change: metadata.user_id, or with * for any key or index (metadata.*); a path
                covers the fields under it. Repeat it, or separate paths with commas
  --ignore-file FILE  the same, one path a line (# starts a comment)
  --context     where the context goes, compared: each source's tokens a request on both sides
                and the change, a sentence per source that changed ("adding mcp:github costs
                1,840 tokens on every request"); with --json {a, b, requests, changes, sentences}
  --json        JSON: {a, b, requests: [...], summary}
  --markdown    a markdown table and summary
  --wide        the summary table's cells whole (otherwise fitted to the terminal or COLUMNS)
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 printed (whether or not the runs differ), 2 bad usage or a run that cannot be found or read.`;

type DiffFlags = PriceFlags & { "model-a"?: string; "model-b"?: string };

/**
 * Each side's cache hit rate and write amplification (cost/cache-rates.ts), A then B: from its costs
 * when the diff priced it whole, else as the diff's own pass tallied it.
 */
async function writeCacheRatesAB(
  found: { costs: [RunCost, RunCost] } | { rated: [RatedPass, RatedPass] },
  out: LineWriter,
  width: number | null,
): Promise<void> {
  const { cacheRates, cacheRatesLine } = await import("../analysis/cost/cache-rates.js");
  for (const i of [0, 1] as const) {
    const totals = "costs" in found ? cacheRates(found.costs[i]) : await found.rated[i].totals();
    for (const wrapped of wrapLines([`${"AB"[i]} ${cacheRatesLine(totals)}`], width)) await out.line(wrapped);
  }
  await out.flush();
}

/** The model a side is priced as: --model-a or --model-b, else --model (RunPricer's default). */
const modelOf = (flags: DiffFlags, side: 0 | 1) => (side === 0 ? flags["model-a"] : flags["model-b"]);

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "diff",
    help,
    options: {
      json: { type: "boolean" },
      markdown: { type: "boolean" },
      wide: { type: "boolean" },
      cost: { type: "boolean" },
      model: { type: "string" },
      "model-a": { type: "string" },
      "model-b": { type: "string" },
      pricing: { type: "string" },
      ignore: { type: "string", multiple: true },
      "ignore-file": { type: "string" },
      context: { type: "boolean" },
    } as const,
    positionals: ["<runA>", "<runB>"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const lookup = { runsDir, warn: warnOnStderr };
  const [a, b] = positionals.map((spec) => runOrBaseline(spec, lookup)) as [RunSource, RunSource];
  const format = outputFormat("diff", values, "text");
  const out = new LineWriter(process.stdout);
  const labels = { a: a.label, b: b.label };
  const as = format === "plain" ? "text" : format;
  const look = tableLook(values.wide ?? false);
  if (values.context) {
    if (values.cost || values.ignore || values["ignore-file"])
      throw usageError("diff", "--context compares sources alone; give --cost and --ignore without it");
    await diffContext([a, b], out, format === "text" ? "table" : format, look);
    return 0;
  }
  if (!values.cost && (values["model-a"] ?? values["model-b"] ?? values.model ?? values.pricing) !== undefined)
    throw usageError("diff", "--model, --model-a, --model-b and --pricing price runs; give them with --cost");
  // --cost prices both runs whole; otherwise text's cache rates are tallied in the diff's own pass.
  const costs = values.cost ? await costsOf([a, b], values) : null;
  const rated = as === "text" && !costs ? await ratedPasses([a, b], values) : null;
  const taps = rated ? ([rated[0].observing, rated[1].observing] as const) : undefined;
  const ignore = ignoredPaths(values.ignore ?? [], values["ignore-file"]);
  if (!(values.cost && as === "json")) await writeDiff(diffSources(a, b, taps, { ignore }), labels, out, as, look);
  if (as === "text") await writeCacheRatesAB(costs ? { costs } : { rated: rated! }, out, look.maxWidth);
  if (costs) {
    // Loaded only with --cost, as in report: the money's comparison is no part of a plain diff.
    const { costDiff, writeCostDiff } = await import("../analysis/cost/cost-diff.js");
    await writeCostDiff(costDiff(...costs), labels, out, as, look.maxWidth);
  }
  return 0;
}

/** `diff --context`: both runs' sources compared, and on stderr the requests either side could not attribute. */
async function diffContext(sides: [RunSource, RunSource], out: LineWriter, format: ReportFormat, look: TableLook) {
  const { contextSummary } = await import("../analysis/context/context-summary.js");
  const { contextDiff } = await import("../analysis/context/context-diff.js");
  const { writeContextDiff } = await import("../analysis/context/context-diff-render.js");
  const [a, b] = sides.map((side) => contextSummary(side.records())) as [ContextSummary, ContextSummary];
  await writeContextDiff(contextDiff(a, b), { a: sides[0].label, b: sides[1].label }, out, format, look);
  for (const [i, summary] of [a, b].entries())
    if (summary.uncounted.length > 0)
      process.stderr.write(
        `${"AB"[i]}: ${summary.uncounted.length} request(s) carry no sources (recorded before sources were counted, with token counting off, or a baseline file): left out\n`,
      );
}

/** The paths of --ignore (comma-separated, repeated) and of --ignore-file (one a line, # comments). */
function ignoredPaths(flags: string[], file: string | undefined): string[] {
  const lines = file === undefined ? [] : readInputFile(file, "field list").toString("utf8").split("\n");
  const fromFile = lines.map((line) => line.replace(/#.*/, "").trim());
  return [...flags.flatMap((flag) => flag.split(",")), ...fromFile].map((p) => p.trim()).filter((p) => p !== "");
}

/** Both sides' passes, each tallying its cache rates as the diff reads it. */
async function ratedPasses(sides: [RunSource, RunSource], flags: DiffFlags): Promise<[RatedPass, RatedPass]> {
  return [await ratedPass(flags, sides[0], modelOf(flags, 0)), await ratedPass(flags, sides[1], modelOf(flags, 1))];
}

/** Both runs priced whole, each as its own model (--model-a / --model-b, else --model). */
async function costsOf(sides: [RunSource, RunSource], flags: DiffFlags): Promise<[RunCost, RunCost]> {
  const price = await runPricer(flags);
  return [await price(sides[0], modelOf(flags, 0)), await price(sides[1], modelOf(flags, 1))];
}
