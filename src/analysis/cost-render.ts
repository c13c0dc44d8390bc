/**
 * `report --cost`: one row per request — prompt tokens, predicted cache reads and writes, the
 * predicted dollars, the provider's reported figures beside them, and a flag where they disagree —
 * then the run's total. A model without a price keeps its tokens and says "price unknown".
 */
import { mdHeader, mdRow } from "./format.js";
import type { LineWriter } from "./output.js";
import { dollars, money, PRICE_UNKNOWN } from "./pricing.js";
import type { ReportFormat } from "./report.js";
import type { Rebill, RequestCost, RunCost } from "./run-cost.js";
import { type Align, TableOutput } from "./table-output.js";
import type { TableLook } from "./table-style.js";

/** Figures right-aligned, so a fitted table never cuts them; names and the check text may be cut. */
const HEAD_ALIGN: Align[] = [
  "right",
  "left",
  "left",
  "right",
  "right",
  "right",
  "right",
  "right",
  "left",
  "right",
  "left",
];

const HEAD = [
  "seq",
  "kind",
  "model",
  "input tok",
  "cache read",
  "cache write 5m/1h",
  "uncached",
  "predicted $",
  "reported read/write",
  "reported $",
  "check",
];

/** The one sentence a break gets: what it re-billed, over how many requests, for how much. */
export function breakSentence(b: Rebill): string {
  const requests = `${b.requests} request${b.requests === 1 ? "" : "s"}`;
  return `this break re-billed ${b.tokens.toLocaleString("en-US")} tokens × ${requests} = ${money(b.dollars)}`;
}

function cells(r: RequestCost): (string | number)[] {
  const p = r.predicted;
  const rep = r.reported;
  return [
    r.seq,
    r.kind,
    r.model,
    p.inputTokens,
    p.cacheRead,
    `${p.cacheWrite5m}/${p.cacheWrite1h}`,
    p.uncached,
    money(r.predictedCost),
    rep ? `${rep.cacheRead}/${rep.cacheWrite5m + rep.cacheWrite1h} of ${rep.inputTokens} (${rep.source})` : "—",
    rep ? money(r.reportedCost) : "—",
    r.disagreement ? `DISAGREE: ${r.disagreement}` : rep?.source === "provider" ? "agrees" : "",
  ];
}

export function costTotalLines(cost: RunCost): string[] {
  const lines = [
    `total: ${cost.total.inputTokens} prompt tokens, ${cost.total.cacheRead} predicted from cache, ` +
      `predicted ${money(cost.total.predicted)}` +
      (cost.total.reported === null ? "" : `, reported ${dollars(cost.total.reported)}`),
  ];
  if (cost.unpriced.length > 0)
    lines.push(
      `${PRICE_UNKNOWN} for ${cost.unpriced.join(", ")}: its requests count tokens only (see --model, --pricing)`,
    );
  const unconfirmed = [...new Set(cost.requests.filter((r) => r.price && !r.price.confirmed).map((r) => r.model))];
  if (unconfirmed.length > 0)
    lines.push(
      `unconfirmed prices (not read on the provider's own page, see pricing/models.yaml): ${unconfirmed.join(", ")}`,
    );
  const disagreements = cost.requests.filter((r) => r.disagreement !== null).length;
  if (disagreements > 0) lines.push(`${disagreements} request(s) where predicted and reported caching disagree`);
  return lines;
}

export async function writeCostReport(
  cost: RunCost,
  out: LineWriter,
  format: ReportFormat,
  look?: TableLook,
): Promise<void> {
  if (format === "json") {
    await out.line(
      JSON.stringify(
        { ...cost, requests: cost.requests.map(({ price, ...r }) => ({ ...r, priced: price !== null })) },
        null,
        2,
      ),
    );
  } else if (format === "markdown") {
    await out.line(mdHeader(HEAD));
    for (const r of cost.requests) await out.line(mdRow(cells(r)));
    await out.line("");
    for (const line of costTotalLines(cost)) await out.line(line);
  } else if (format === "plain") {
    for (const r of cost.requests) {
      const p = r.predicted;
      await out.line(
        `seq=${r.seq} model=${r.model} input=${p.inputTokens} read=${p.cacheRead} write5m=${p.cacheWrite5m} ` +
          `write1h=${p.cacheWrite1h} uncached=${p.uncached} cost=${r.predictedCost ?? "unknown"}` +
          (r.reported ? ` reported_read=${r.reported.cacheRead} reported_cost=${r.reportedCost ?? "unknown"}` : "") +
          (r.disagreement ? " disagree=1" : ""),
      );
    }
    for (const line of costTotalLines(cost)) await out.line(line);
  } else {
    const table = new TableOutput(HEAD, { align: HEAD_ALIGN, look });
    for (const r of cost.requests) table.push(cells(r));
    await table.write(out);
    for (const line of costTotalLines(cost)) await out.line(line);
  }
  await out.flush();
}

/** `show --cost`: one request's split, predicted dollars and, beside them, what the provider reported. */
export function requestCostLines(r: RequestCost): string[] {
  const p = r.predicted;
  const lines = [
    `cost (${r.model}): ${p.inputTokens} prompt tokens — ${p.cacheRead} read from the cache, ` +
      `${p.cacheWrite5m} written for 5m, ${p.cacheWrite1h} written for 1h, ${p.uncached} in full — predicted ${money(r.predictedCost)}`,
  ];
  if (r.reported)
    lines.push(
      `reported (${r.reported.source}): ${r.reported.inputTokens} prompt tokens — ${r.reported.cacheRead} read, ` +
        `${r.reported.cacheWrite5m + r.reported.cacheWrite1h} written — ${money(r.reportedCost)}` +
        (r.disagreement ? ` — DISAGREES: ${r.disagreement}` : ""),
    );
  if (r.rebill) lines.push(`${r.breakDetail}: ${breakSentence(r.rebill)}`);
  return lines;
}
