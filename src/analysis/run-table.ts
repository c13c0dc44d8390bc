/**
 * `runs`: one line per run of a runs folder, newest first — its name as a command takes it, when it
 * started, what made it, requests, conversations, prompt tokens, dollars, cache hit rate and
 * failures — as a table fitted to the terminal, or as JSON.
 */
import type { RequestRecord } from "../capture/types.js";
import { cacheRates } from "./cost/cache-rates.js";
import { dollars, moneyJson } from "./cost/money.js";
import type { RunCost } from "./cost/run-cost.js";
import type { RunSource } from "./load-run.js";
import type { RunEntry } from "./run-list.js";
import type { LineWriter } from "./table/output.js";
import { TableOutput } from "./table/table-output.js";
import { legendLines, narrowedLegend, type TableLook } from "./table/table-style.js";

export interface RunFacts extends RunEntry {
  /**
   * `probe` for a probe's run (run, check); for one captured through record, mock or proxy, the
   * program its requests came from (`claude-code`, `codex`, `gemini-cli`, `pi`, `sdk/node`…, the
   * records' `agent`), or `capture` when they name none.
   */
  what: string;
  requests: number;
  /** Distinct `record.conversation` ids; null when the run's records carry none. */
  conversations: number | null;
  /** Prompt tokens sent, by our count (the records' token totals). */
  tokens: number;
  /** Our cache model's dollars for the priced requests; null when no request had a price. */
  predictedCost: number | null;
  /** Prompt tokens read from the cache over all sent (the provider's usage where reported). */
  hitRate: number | null;
  /** Requests that failed (an error status, no response, a cut or cancelled one) and exchanges never written. */
  failures: number;
}

const PROBE_STATUSES = new Set(["passed", "failed", "error"]);

/** A request that did not get a whole answer: an error status, none at all, or a stream that stopped. */
function failed(record: Pick<RequestRecord, "status" | "ending">): boolean {
  if (record.status === undefined) return false;
  return (
    record.status === null || record.status >= 400 || (record.ending !== undefined && record.ending !== "complete")
  );
}

/** What the list says of one run, from its records and its price. */
export function runFacts(entry: RunEntry, source: RunSource, cost: RunCost): RunFacts {
  let requests = 0;
  let tokens = 0;
  let failures = entry.lost;
  const conversations = new Set<string>();
  let agent: string | undefined;
  for (const record of source.records()) {
    requests++;
    agent ??= record.agent;
    tokens += record.tokens?.total ?? 0;
    if (failed(record)) failures++;
    if (record.conversation) conversations.add(record.conversation.id);
  }
  return {
    ...entry,
    what: PROBE_STATUSES.has(entry.status)
      ? "probe"
      : (agent ?? (entry.status === "captured" ? "capture" : entry.status)),
    requests,
    conversations: conversations.size > 0 ? conversations.size : null,
    tokens,
    predictedCost: cost.total.predicted,
    hitRate: cacheRates(cost).hitRate,
    failures,
  };
}

/** `2026-12-04 18:31`: minutes are enough to tell runs apart, and UTC says the same on every machine. */
const minuteOf = (iso: string) => iso.slice(0, 16).replace("T", " ");

const HEAD = ["run", "when (UTC)", "what", "req", "conv", "tokens", "cost", "hit", "fail"];

export async function writeRunTable(runs: RunFacts[], out: LineWriter, look: TableLook): Promise<void> {
  const table = new TableOutput(HEAD, {
    align: ["left", "left", "left", "right", "right", "right", "right", "right", "right"],
    look,
    wrap: [true, false, true, false, false, false, false, false, false],
    tone: (row, column) => (column === 8 && row[8] !== "0" ? "red" : null),
    narrow: [
      { column: 1, short: { head: "when", cell: (text) => text.slice(5), note: "when: UTC, without the year" } },
      // The dollars say the run's size; what made it is said nowhere else.
      { column: 5 },
      { column: 2 },
    ],
  });
  for (const r of runs)
    table.push([
      r.name,
      minuteOf(r.startedAt),
      r.what,
      r.requests,
      r.conversations ?? "—",
      r.tokens,
      r.predictedCost === null ? "—" : dollars(r.predictedCost),
      r.hitRate === null ? "n/a" : `${Math.round(r.hitRate * 100)}%`,
      r.failures,
    ]);
  const legend = [
    "req: requests",
    "conv: conversations",
    "tokens: prompt tokens, our count",
    "cost: our cache model's prediction (report --cost)",
    "hit: prompt tokens read from the cache (provider's usage where reported)",
    "fail: requests without a whole answer, or never written",
    ...narrowedLegend(table.narrowed()),
  ];
  for (const line of legendLines(legend, look)) await out.line(line);
  await table.write(out);
  await out.flush();
}

/** The same as data, dollars rounded as the table prints them. */
export function runTableJson(runs: RunFacts[]): string {
  return JSON.stringify(runs, moneyJson, 2);
}
