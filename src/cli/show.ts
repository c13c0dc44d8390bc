import type { RunSource } from "../analysis/load-run.js";
import { resolveRunOrLatest } from "../analysis/run-list.js";
import { secretCount, secretsNote } from "../analysis/secret-count.js";
import { SHOW_PARTS, type ShowPart, showJson, writeShow } from "../analysis/show/show-render.js";
import { decodeReply } from "../analysis/show/show-reply.js";
import { decodeRequest } from "../analysis/show/show-request.js";
import { LineWriter } from "../analysis/table/output.js";
import { UserError } from "../errors.js";
import { wrapLines } from "../text/text-wrap.js";
import { parseCommand, usageError } from "./args.js";
import { type PriceFlags, runPricer } from "./run-pricer.js";
import { tableLook } from "./terminal.js";

export const help = `Usage: payload-probe show [<run>] <seq> [options]

One request of a run as it was sent, decoded: first where its tokens come from (by source, as
report --context names them), then each tool definition pretty-printed, the system prompt
as it reads, the messages with their roles, tool calls and results — each segment headed by the
tokens (o200k_base) and bytes it adds — and a line where the cache prefix kept from the previous
loop request ends. Then the model's reply: how it came (HTTP status, time to first byte, duration,
error), its stop reason, thinking (its size), text and tool calls with their arguments, and its
usage as the provider reported it beside our count of the prompt.

  <run>         a run folder (runs/p1), a run's name (p1), <name>@N (the N-th latest run of a
                name; @1 latest), or a run id from runs/payload-probe.db; left out, the latest
                run ('runs' lists them)
  <seq>         the request's number in the run (1-based, as report prints it)
  --part P      only one part: tools, system, messages, reply, or body (the whole wire body,
                pretty-printed)
  --cost        first the request in money: the prompt tokens the provider's cache would read, write
                and bill in full, the predicted dollars, what the provider reported beside them,
                and what a prefix break at this request re-billed (as report --cost and diff --cost)
  --model ID    with --cost: price the request as model ID (default: its own, or for a probe's
                run the probe's model.priceAs)
  --pricing FILE  with --cost: a pricing file that adds or overrides models
  --json        JSON: the record's figures, its sources, and every segment (tool definitions and
                messages parsed)
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 printed, 2 bad usage, a run that cannot be found or read, or a seq the run does not have.`;

/** The request's cost needs the run up to it: a cache read depends on the requests before. */
async function requestCost(source: RunSource, seq: number, flags: PriceFlags) {
  const cost = await (await runPricer(flags))(source);
  return { request: cost.requests.find((r) => r.seq === seq)!, prices: cost.prices };
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "show",
    help,
    options: {
      part: { type: "string" },
      json: { type: "boolean" },
      cost: { type: "boolean" },
      model: { type: "string" },
      pricing: { type: "string" },
    } as const,
    positionals: ["[<run>]", "<seq>"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  // One word is the seq of the latest run; a word that is no number is a run given without its seq.
  if (positionals.length === 1 && !/^\d+$/.test(positionals[0]!)) throw usageError("show", "missing <seq>");
  const [runSpec, seqArg] = (positionals.length === 1 ? [undefined, positionals[0]] : positionals) as [
    string | undefined,
    string,
  ];
  if (!/^\d+$/.test(seqArg) || Number(seqArg) < 1)
    throw new UserError(`show: <seq> must be a request number (1, 2, …), got "${seqArg}"`);
  const part = values.part ?? null;
  if (part !== null && !SHOW_PARTS.includes(part as ShowPart))
    throw new UserError(`show: --part must be one of ${SHOW_PARTS.join(", ")}, got "${part}"`);
  const source = resolveRunOrLatest(runSpec, { runsDir });
  const decoded = await decodeRequest(source, Number(seqArg));
  const reply = await decodeReply(source, decoded.record);
  // On stderr, so --json output stays data: the request's own count, then the run's.
  const notes = [
    secretsNote(secretCount([decoded.record]), `request ${seqArg}'s stored bodies`),
    secretsNote(secretCount(source.records())),
  ];
  for (const note of notes) if (note) process.stderr.write(`${note}\n`);
  const cost = values.cost ? await requestCost(source, Number(seqArg), values) : null;
  if (values.json) {
    const json = showJson(decoded, reply, part as ShowPart | null) as Record<string, unknown>;
    if (!cost) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    else {
      const { costJson } = await import("../analysis/cost/cost-render.js");
      // Rounded and stripped as cost JSON is, without touching the request's own figures.
      const money = JSON.parse(costJson({ ...cost.request, prices: cost.prices }));
      process.stdout.write(`${JSON.stringify({ ...json, cost: money }, null, 2)}\n`);
    }
    return 0;
  }
  const out = new LineWriter(process.stdout);
  if (cost) {
    const { requestCostLines } = await import("../analysis/cost/cost-render.js");
    const lines = requestCostLines(cost.request, cost.prices);
    for (const line of wrapLines(lines, tableLook(false).maxWidth)) await out.line(line);
  }
  await writeShow(decoded, reply, out, part as ShowPart | null, tableLook(false).maxWidth);
  return 0;
}
