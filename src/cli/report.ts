import { warnOnStderr } from "../analysis/load-run.js";
import { type ReportFormat, writeLedger, writeReport } from "../analysis/report.js";
import { resolveRunOrLatest } from "../analysis/run-list.js";
import { type SecretCount, secretCount, secretsNote, tallyingSecrets } from "../analysis/secret-count.js";
import { tokenLedger } from "../analysis/segments.js";
import { lostRequestNote, sideRequestNote } from "../analysis/side-requests.js";
import { LineWriter } from "../analysis/table/output.js";
import { wrapLines } from "../text/text-wrap.js";
import { parseCommand } from "./args.js";
import { outputFormat } from "./format-flag.js";
import { type RatedPass, ratedPass, runPricer } from "./run-pricer.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe report [<run>] [options]

One row per provider request of a run: seq, kind, tools, tokens and sizes per part (tools, system,
messages; the body), roles, markers, the request's conversation (c1 main, c2 subagent, c3 side)
and the cache prefix it reads from the earlier request of its model it shares most with (#n), or
"new conversation", or where and why it broke against that request (and, when the provider was asked, its own cache diagnostics beside it:
"provider (anthropic): miss: tools_changed, agrees"). Under the table: the requests of each
conversation, the run's cache hit rate and
write amplification (docs/cost.md). Requests with no row (a proxy's side requests: other paths, bodies it could
not read) are counted on stderr with the reason, by seq.

  <run>         a run folder (runs/p1), a run's name (p1), <name>@N (the N-th latest run of a
                name; @1 latest), or a run id from runs/payload-probe.db; left out, the latest
                run ('runs' lists them)
  --plain       one line per request, each figure named: seq=1 kind=loop toolCount=2 tools=3511B
                system=1688B messages=239B body=5647B tokens=1282 roles=system>user schema=0 result=0
  --chars       string lengths (UTF-16 units) instead of UTF-8 bytes
  --segments    the token ledger: tokens each tool definition, system part and message adds
                (reads the wire bodies in payloads.jsonl)
  --context     where the context goes: the run's tokens by source (each system part, instruction
                files, skills, built-in tools, each MCP server's tools, history, tool results by
                tool, reasoning) on the first and last request and over the session, with each
                source's share, and scaled to the provider's input tokens where it reported them;
                then the tools never called and skills never loaded, with what they cost over the
                run (docs/analysis.md); with --json, each request's sources, adding up to its total
  --cost        money: per request the prompt tokens a provider's cache would read, write and
                bill in full (OpenAI: automatic from 1,024 tokens in steps of 128; Anthropic: at
                cache_control breakpoints), the predicted dollars beside the reported usage, and
                the run's total; prices from the bundled @pydantic/genai-prices table, whose
                release and date are printed; a model without a price prints tokens and says
                "price unknown" once, with the nearest priced names
  --model ID    price every request as model ID (default: each request's own, or for a probe's
                run the probe's model.priceAs)
  --pricing FILE  a pricing file that adds or overrides models (default: $PAYLOAD_PROBE_PRICING;
                format in docs/cost.md)
  --json        JSON: an array with one object per request
  --markdown    a markdown table
  --wide        every cell whole (the table is otherwise fitted to the terminal, or to COLUMNS,
                cutting long cells with …)
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 printed, 2 bad usage or a run that cannot be found or read (a corrupt line names file and line; a last line cut off
by a crash is skipped and said on stderr).`;

/**
 * The run's cache hit rate and write amplification, under the table (cost/cache-rates.ts), tallied
 * in the table's own pass.
 */
async function writeCacheRates(rated: RatedPass, out: LineWriter, width: number | null) {
  const { cacheRatesLine } = await import("../analysis/cost/cache-rates.js");
  for (const line of wrapLines([cacheRatesLine(await rated.totals())], width)) await out.line(line);
  await out.flush();
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "report",
    help,
    options: {
      plain: { type: "boolean" },
      chars: { type: "boolean" },
      segments: { type: "boolean" },
      context: { type: "boolean" },
      cost: { type: "boolean" },
      model: { type: "string" },
      pricing: { type: "string" },
      json: { type: "boolean" },
      markdown: { type: "boolean" },
      wide: { type: "boolean" },
    } as const,
    positionals: ["[<run>]"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const format: ReportFormat = outputFormat("report", values, "table");
  const source = resolveRunOrLatest(positionals[0], { runsDir, warn: warnOnStderr });
  const out = new LineWriter(process.stdout);
  const look = tableLook(values.wide ?? false);
  // Counted while the report reads the records, when it does: a long run is read once less.
  let secrets: SecretCount | null = null;
  if (values.cost) {
    const { writeCostReport } = await import("../analysis/cost/cost-render.js");
    const cost = await (await runPricer(values))(source);
    await writeCostReport(cost, out, format, look);
  } else if (values.context) {
    const { writeContext } = await import("./report-context.js");
    await writeContext(source, out, format, look);
  } else if (values.segments) await writeLedger(tokenLedger(source.payloads()), out, format, look);
  else {
    secrets = { replaced: 0, kinds: {} };
    const summaries = tallyingSecrets(source.summaries(), secrets);
    // The cache rates under a table are tallied in the table's own pass: a long run is read once.
    const rated = format === "table" ? await ratedPass(values, source) : null;
    const rows = await writeReport(rated ? rated.observing(summaries) : summaries, out, {
      format,
      unit: values.chars ? "chars" : "bytes",
      look,
    });
    if (rows > 0 && rated) await writeCacheRates(rated, out, look.maxWidth);
  }
  // On stderr, so --json and --markdown output stays data.
  const notes = [
    sideRequestNote(source),
    lostRequestNote(source),
    secretsNote(secrets ?? secretCount(source.summaries())),
  ];
  for (const note of notes) if (note) process.stderr.write(`${note}\n`);
  return 0;
}
