/**
 * `report --cost`: the prices' source and the model each request is priced as, then one row per
 * request — prompt tokens, predicted cache reads and writes, the predicted dollars, the provider's
 * reported dollars beside them and whether the two agree — then the run's total. A model without a
 * price keeps its tokens and says "price unknown", once, with the nearest priced names.
 *
 * At 80 columns the table keeps every figure and every word: a model column only when the run's
 * requests are priced as more than one model (else the line above names it), its names given as
 * `m1`, `m2`… when whole names do not fit (the legend says which is which), kind only when not every
 * request is a loop request, and the check column breaks onto more lines rather than being cut.
 */

import { wrapLines } from "../../text/text-wrap.js";
import { mdHeader, mdRow } from "../format.js";
import type { ReportFormat } from "../report.js";
import type { LineWriter } from "../table/output.js";
import { type Align, TableOutput } from "../table/table-output.js";
import { legendLines, narrowedLegend, PLAIN_LOOK, type TableLook } from "../table/table-style.js";
import { dollars, dollarsSideBySide, money, moneyJson, PRICE_UNKNOWN, roundDollars } from "./money.js";
import type { PriceSource } from "./pricing.js";
import type { Rebill, RequestCost, RunCost } from "./run-cost.js";

/** The one sentence a break gets: what it re-billed, over how many requests, for how much. */
export function breakSentence(b: Rebill): string {
  const requests = `${b.requests} request${b.requests === 1 ? "" : "s"}`;
  return `this break re-billed ${b.tokens.toLocaleString("en-US")} tokens × ${requests} = ${money(b.dollars)}`;
}

/** `prices: @pydantic/genai-prices 0.1.8 (2026-09-23), then FILE`. */
export function priceSourceLine(source: PriceSource): string {
  return `prices: ${source.table}${source.files.length > 0 ? `, then ${source.files.join(", ")}` : ""}`;
}

/** `priced: qwen3.8-flash as gpt-4.1 (openai)`: each model the run sent, and the table's model it was priced as. */
function pricedAsLine(cost: RunCost): string | null {
  const seen = new Set<string>();
  for (const r of cost.requests)
    if (r.price) seen.add(`${r.sent === r.pricedAs ? r.sent : `${r.sent} as ${r.pricedAs}`} (${r.price.provider})`);
  return seen.size === 0 ? null : `priced: ${[...seen].join(", ")}`;
}

interface Columns {
  kind: boolean;
  model: boolean;
}

function columnsOf(cost: RunCost): Columns {
  return {
    kind: cost.requests.some((r) => r.kind !== "loop"),
    model: new Set(cost.requests.map((r) => r.model)).size > 1,
  };
}

function head(c: Columns): { names: string[]; align: Align[] } {
  const names = ["seq", ...(c.kind ? ["kind"] : []), ...(c.model ? ["model"] : [])];
  const align: Align[] = ["right", ...(c.kind ? ["left" as const] : []), ...(c.model ? ["left" as const] : [])];
  names.push("prompt", "read", "write", "predicted", "reported", "check");
  align.push("right", "right", "right", "right", "right", "left");
  return { names, align };
}

/**
 * The reported cache split beside the row's predicted one (the read and write columns): `agrees:
 * read 1957, write 49`, `DISAGREE: read 0, write 0`, or `estimated: …` for a mock's usage, which
 * checks nothing; the reported prompt is named only when it is not the row's.
 */
function checkText(r: RequestCost): string {
  if (r.failure !== null) return `failed: ${r.failure}`;
  const rep = r.reported;
  if (!rep) return "";
  const verdict = rep.source !== "provider" ? "estimated" : r.disagreement ? "DISAGREE" : "agrees";
  const of = rep.inputTokens === r.predicted.inputTokens ? "" : ` of ${rep.inputTokens}`;
  return `${verdict}: read ${rep.cacheRead}, write ${rep.cacheWrite5m + rep.cacheWrite1h}${of}`;
}

function cells(r: RequestCost, c: Columns): (string | number)[] {
  const p = r.predicted;
  return [
    r.seq,
    ...(c.kind ? [r.kind] : []),
    ...(c.model ? [r.model] : []),
    p.inputTokens,
    p.cacheRead,
    `${p.cacheWrite5m}/${p.cacheWrite1h}`,
    // An unpriced row shows a dash: the line under the table says once why.
    r.predictedCost === null ? "—" : dollars(r.predictedCost),
    r.reportedCost === null ? "—" : dollars(r.reportedCost),
    checkText(r),
  ];
}

const LEGEND = [
  "prompt: tokens sent",
  "read: predicted from the cache",
  "write: predicted written for 5m/1h",
  "predicted: our cache model's dollars",
  "reported: the response's usage priced",
  "check: the reported cache read and write beside the predicted (DISAGREE: a share apart by over 10 points; estimated: a mock's, not a provider's)",
];

/**
 * Whose usage the reported total is priced from: a provider's count is what the bill follows; a mock's
 * estimate is our own token count in the provider's fields, no more trustworthy than the prediction.
 */
function reportedSource(cost: RunCost): string {
  const sources = new Set(cost.requests.flatMap((r) => (r.reported ? [r.reported.source] : [])));
  if (sources.size === 1 && sources.has("provider")) return "the provider's usage: what it bills, trust it first";
  if (sources.has("provider")) return "the provider's usage where it reported, a mock's estimate elsewhere";
  return "a mock's estimated usage, not a bill: the predicted figure is the one to read";
}

/** The total, then one line per model without a price, then disagreements. */
export function costTotalLines(cost: RunCost): string[] {
  const { predicted, reported, inputTokens, cacheRead } = cost.total;
  // Both at the places the finer needs, so each is the sum of its column as printed.
  const shown = dollarsSideBySide(predicted, reported);
  const priced =
    predicted === null
      ? ""
      : `predicted ${shown.a} (our cache model)${reported === null ? "" : `, reported ${shown.b} (${reportedSource(cost)})`} for `;
  const lines = [`total: ${priced}${inputTokens} prompt tokens, ${cacheRead} read from the cache`];
  for (const u of cost.unpriced) lines.push(unpricedLine(u));
  const failed = cost.requests.filter((r) => r.failure !== null).length;
  if (failed > 0)
    lines.push(`${failed} failed request(s) reached no model: billed nothing, left out of the cache rates`);
  const disagreements = cost.requests.filter((r) => r.disagreement !== null).length;
  if (disagreements > 0) lines.push(`${disagreements} request(s) where predicted and reported caching disagree`);
  return lines;
}

/** Said once per model: what has no price, the names nearest to it, and the flags that help. */
export function unpricedLine(u: RunCost["unpriced"][number]): string {
  const near = u.nearest.length > 0 ? ` (nearest priced: ${u.nearest.join(", ")})` : "";
  return `${PRICE_UNKNOWN} for ${u.model}${near}: its requests count tokens only; price them with --model ID or --pricing FILE`;
}

/**
 * Cost JSON: dollars rounded as printed; a request's price entry is left out (its `pricedAs` names
 * it, and `prices` the table). For cost objects only: the rounding goes by field name.
 */
export function costJson(value: unknown): string {
  return JSON.stringify(
    value,
    (key, v) => (key === "price" && typeof v === "object" ? undefined : moneyJson(key, v)),
    2,
  );
}

/**
 * The table at the look's width: the check column (the last) wraps; the model column, when there is
 * one, shows `m1`, `m2`… in order of first use when whole names leave it too wide.
 */
function costTable(cost: RunCost, columns: Columns, look: TableLook): TableOutput {
  const { names, align } = head(columns);
  const models = [...new Set(cost.requests.map((r) => r.model))];
  const alias = (model: string) => `m${models.indexOf(model) + 1}`;
  const modelColumn = names.indexOf("model");
  const table = new TableOutput(names, {
    align,
    look,
    wrap: names.map((name) => name === "check"),
    narrow:
      modelColumn < 0
        ? []
        : [
            {
              column: modelColumn,
              short: { head: "model", cell: alias, note: models.map((m) => `${alias(m)}: ${m}`).join(", ") },
            },
          ],
  });
  for (const r of cost.requests) table.push(cells(r, columns));
  return table;
}

export async function writeCostReport(
  cost: RunCost,
  out: LineWriter,
  format: ReportFormat,
  look: TableLook = PLAIN_LOOK,
): Promise<void> {
  const intro = [priceSourceLine(cost.prices), pricedAsLine(cost)].filter((l): l is string => l !== null);
  const columns = columnsOf(cost);
  if (format === "json") {
    await out.line(costJson({ ...cost, requests: cost.requests.map((r) => ({ ...r, priced: r.price !== null })) }));
  } else if (format === "markdown") {
    for (const line of intro) await out.line(`${line}  `);
    await out.line("");
    await out.line(mdHeader(head(columns).names));
    for (const r of cost.requests) await out.line(mdRow(cells(r, columns)));
    await out.line("");
    for (const line of costTotalLines(cost)) await out.line(line);
  } else if (format === "plain") {
    for (const line of intro) await out.line(line);
    for (const r of cost.requests) {
      const p = r.predicted;
      const price = (n: number | null) => (n === null ? "unknown" : String(roundDollars(n)));
      await out.line(
        `seq=${r.seq} model=${r.model} input=${p.inputTokens} read=${p.cacheRead} write5m=${p.cacheWrite5m} ` +
          `write1h=${p.cacheWrite1h} uncached=${p.uncached} cost=${price(r.predictedCost)}` +
          (r.reported ? ` reported_read=${r.reported.cacheRead} reported_cost=${price(r.reportedCost)}` : "") +
          (r.disagreement ? " disagree=1" : "") +
          (r.failure === null ? "" : " failed=1"),
      );
    }
    for (const line of costTotalLines(cost)) await out.line(line);
  } else {
    for (const line of wrapLines(intro, look.maxWidth)) await out.line(line);
    const table = costTable(cost, columns, look);
    for (const line of legendLines([...LEGEND, ...narrowedLegend(table.narrowed())], look)) await out.line(line);
    await table.write(out);
    for (const line of wrapLines(costTotalLines(cost), look.maxWidth)) await out.line(line);
  }
  await out.flush();
}

/** `show --cost`: one request's split, predicted dollars and, beside them, what the provider reported. */
export function requestCostLines(r: RequestCost, source?: PriceSource): string[] {
  const p = r.predicted;
  const as = r.pricedAs && r.pricedAs !== r.model ? ` as ${r.pricedAs}` : "";
  if (r.failure !== null)
    return [`cost (${r.model}${as}): nothing billed, no cache read or written — the request failed: ${r.failure}`];
  const lines = [
    `cost (${r.model}${as}): predicted ${money(r.predictedCost)} for ${p.inputTokens} prompt tokens — ` +
      `${p.cacheRead} read from the cache, ${p.cacheWrite5m} written for 5m, ${p.cacheWrite1h} for 1h, ${p.uncached} in full`,
  ];
  if (r.reported)
    lines.push(
      `reported (${r.reported.source}): ${money(r.reportedCost)} for ${r.reported.inputTokens} prompt tokens — ` +
        `${r.reported.cacheRead} read, ${r.reported.cacheWrite5m + r.reported.cacheWrite1h} written` +
        (r.disagreement ? ` — DISAGREES: ${r.disagreement}` : ""),
    );
  if (r.rebill) lines.push(`${r.breakDetail}: ${breakSentence(r.rebill)}`);
  if (!r.price) lines.push(`${PRICE_UNKNOWN} for ${r.model}: price it with --model ID or --pricing FILE`);
  if (source) lines.push(priceSourceLine(source));
  return lines;
}
