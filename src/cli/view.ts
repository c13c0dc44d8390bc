import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { diffSources } from "../analysis/diff/diff.js";
import { type RunSource, resolveRun } from "../analysis/load-run.js";
import { resolveRunOrLatest } from "../analysis/run-list.js";
import { runFileBytes, segmentMeasure, viewReplies } from "../analysis/view/view-inputs.js";
import { writeViewPage } from "../analysis/view/view-page.js";
import type { MarkerSpec } from "../capture/types.js";
import { UserError } from "../errors.js";
import { isRunName, isSafeName } from "../files/safe-path.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { probeRoots } from "../probes/probe-names.js";
import { PROJECT_ROOT } from "../project-root.js";
import { parseCommand } from "./args.js";
import { openPage } from "./open-page.js";
import { type PriceFlags, runPricer } from "./run-pricer.js";

export const help = `Usage: payload-probe view [<run>] [options]

Writes one HTML file to explore a run in a browser, offline (no server, nothing loaded from any
network): one stacked bar per request (tools, system parts, messages; tokens or bytes), the kept
cache prefix apart from what follows its break, markers and tool-set changes (+a_tool1) as badges,
laid out by conversation (each main one, then the subagents and side calls it started beneath it;
a heading folds); click a request for the model's reply, its usage as reported beside our count,
its tool definitions, system prompt (skills block and tool lines picked out), messages and the raw
wire JSON. Identical tools, prompts and messages are stored once.

  <run>           a run folder (runs/p1), a run's name (p1), <name>@N (the N-th latest run of a
                  name; @1 latest), or a run id from runs/payload-probe.db; left out, the latest
                  run ('runs' lists them)
  --diff RUN      a second run: both sequences side by side, aligned as 'diff' aligns them, each
                  pair's tools, system prompt and messages compared line by line and its other
                  body fields that differ listed; "next change" (or the key n) steps through
                  the pairs that differ
  --out FILE      where to write the page (default: runs/<run>/view.html, or
                  runs/<run>/view-diff-<other run>.html with --diff)
  --open          open the page with xdg-open when there is one (else the path is printed)
  --cost          each request's detail also shows its money, as show --cost prints it: the
                  predicted cache split and dollars, the reported usage priced, a break's re-billing
  --model ID      with --cost: price the run(s) as model ID
  --pricing FILE  with --cost: a pricing file that adds or overrides models
  --runs DIR      where run folders and payload-probe.db live (default: runs/)
  -h, --help      show this help

Marker patterns are read from probes/<probe>.yaml when the run's probe has one, to highlight what
each marker matched. Prints the page's path and size.

Exit: 0 written, 2 bad usage or a run that cannot be found or read.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "view",
    help,
    options: {
      diff: { type: "string" },
      out: { type: "string" },
      open: { type: "boolean" },
      cost: { type: "boolean" },
      model: { type: "string" },
      pricing: { type: "string" },
    } as const,
    positionals: ["[<run>]"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const lookup = { runsDir };
  const a = resolveRunOrLatest(positionals[0], lookup);
  const b = values.diff === undefined ? null : resolveRun(values.diff, lookup);
  const out = resolve(values.out ?? defaultOut(a, b, lookup.runsDir));
  const sources = b ? [a, b] : [a];
  const pairs = b ? diffSources(a, b) : null;
  const bytes = await writeViewPage(out, sources, pairs, {
    counter: await segmentMeasure(sources),
    markers: await markersOf(sources),
    rawBytes: sources.reduce((n, s) => n + runFileBytes(s), 0),
    replies: await viewReplies(sources),
    ...(values.cost ? { costLines: await costLinesOf(sources, values) } : {}),
  });
  console.log(`${out} (${(bytes / 1024).toFixed(1)} KiB)`);
  if (values.open) openPage(out);
  return 0;
}

/**
 * Each run's requests in money, the lines `show --cost` prints, and the request's cache figures
 * (cost/cache-rates.ts), for the page's request details.
 */
async function costLinesOf(sources: RunSource[], flags: PriceFlags) {
  const { requestCostLines } = await import("../analysis/cost/cost-render.js");
  const { cacheRates, requestCacheLine } = await import("../analysis/cost/cache-rates.js");
  const price = await runPricer(flags);
  const maps: Map<number, string[]>[] = [];
  for (const source of sources) {
    const cost = await price(source);
    // A failed request has no cache figures: it is left out of the rates.
    const rates = new Map(cacheRates(cost).requests.map((rate) => [rate.seq, [requestCacheLine(rate)]]));
    maps.push(
      new Map(cost.requests.map((r) => [r.seq, [...requestCostLines(r, cost.prices), ...(rates.get(r.seq) ?? [])]])),
    );
  }
  return maps;
}

/**
 * `runs/<run>/view.html` beside the run's files; a run read from the database (an older run of a
 * name) gets `view-<run id>.html` in its name's folder.
 */
function defaultOut(a: RunSource, b: RunSource | null, runsDir: string): string {
  const name = (s: RunSource) => (s.recordsFile ? basename(resolve(s.recordsFile, "..")) : s.label);
  const probe = firstProbeName(a);
  const folder = a.recordsFile ? resolve(a.recordsFile, "..") : join(runsDir, probe ?? a.label);
  const other = b ? name(b) : null;
  if (other !== null && !isRunName(other))
    throw new UserError(`view: run "${other}" cannot name a file; give the page's path with --out`);
  if (!a.recordsFile && !(isRunName(name(a)) && (probe === null || isRunName(probe))))
    throw new UserError(`view: run "${name(a)}" cannot name a folder; give the page's path with --out`);
  if (!existsSync(folder))
    throw new UserError(`view: ${folder} does not exist (run ${a.label} is only in the database); give --out`);
  const page = a.recordsFile ? "view" : `view-${a.label}`;
  return join(folder, other === null ? `${page}.html` : `${page}-diff-${other}.html`);
}

/** The marker patterns of each run's probe file, when the probe has one (a proxy or mock run may not). */
async function markersOf(sources: RunSource[]): Promise<Record<string, MarkerSpec>> {
  const markers: Record<string, MarkerSpec> = {};
  for (const source of sources) {
    const probe = firstProbeName(source);
    if (!probe || !isSafeName(probe)) continue;
    const file = resolveProbePath(probe, probeRoots());
    if (!existsSync(file)) continue;
    try {
      Object.assign(markers, (await loadProbeFile(file, PROJECT_ROOT)).markers);
    } catch (error) {
      // A probe file that no longer loads only costs the highlighting; the page is still right.
      if (!(error instanceof UserError)) throw error;
    }
  }
  return markers;
}

function firstProbeName(source: RunSource): string | null {
  for (const record of source.records()) return record.probe;
  return null;
}
