/**
 * `report <run>`: what each request carried — one row per request, streamed as the run is read.
 * Table output is the one form that must see every row before printing (a column is as wide as
 * its widest cell), so it holds the rows' cells, never the records; plain, JSON and markdown are
 * written as the rows arrive.
 */

import { requestFailure } from "../capture/request-failure.js";
import type { RecordSummary } from "../capture/run-index.js";
import { TOKEN_ENCODING } from "../capture/tokens.js";
import type { CacheDiagnostics, RequestRecord } from "../capture/types.js";
import { wrapLine } from "../text/text-wrap.js";
import { type CacheAgreement, cacheAgreement } from "./cache-agreement.js";
import {
  compactRoles,
  kindLabel,
  markerSummary,
  mdHeader,
  mdRow,
  type PartSizes,
  partSizes,
  prefixSummary,
  type SizeUnit,
} from "./format.js";
import type { RequestLedger } from "./segments.js";
import type { LineWriter } from "./table/output.js";
import { type Align, type NarrowStep, type TableCell, TableOutput } from "./table/table-output.js";
import {
  legendLines,
  type Narrowed,
  narrowedLegend,
  PLAIN_LOOK,
  type TableLook,
  type Tone,
} from "./table/table-style.js";
import { providerTokensText, TOKEN_GAP_FLAG, type TokenGap, tokenGap } from "./token-gap.js";

export type ReportFormat = "table" | "plain" | "json" | "markdown";

export interface ReportRow {
  seq: number;
  kind: RequestRecord["kind"];
  tools: string[];
  unit: SizeUnit;
  size: PartSizes;
  tokens: RequestRecord["tokens"];
  usage: RequestRecord["usage"];
  roles: string[];
  markers: Record<string, number>;
  prefix: RequestRecord["prefix"];
  /** The conversation the request belongs to (absent for a record from before conversations). */
  conversation?: RequestRecord["conversation"];
  /** The prefix in a few words (`kept 5647 B/1282 tok`, `breaks in tools: …`), and the provider's word when it gave one. */
  prefixSummary: string;
  /** What the provider said of its cache, and whether our prefix agrees (only when it was asked). */
  cacheDiagnostics?: CacheDiagnostics;
  cacheAgreement?: CacheAgreement;
  /** Why the request failed (no response, an error status); absent when it did not. */
  failure?: string;
  /** Our count beside the provider's, where the provider reported one. */
  tokenGap?: TokenGap;
}

export function reportRow(r: RecordSummary, unit: SizeUnit): ReportRow {
  return {
    seq: r.seq,
    kind: kindLabel(r),
    tools: r.tools,
    unit,
    size: partSizes(r, unit),
    tokens: r.tokens,
    usage: r.usage,
    roles: r.roles,
    markers: r.markers,
    prefix: r.prefix,
    ...(r.conversation && { conversation: r.conversation }),
    prefixSummary: prefixSummary(r),
    ...(r.cacheDiagnostics && { cacheDiagnostics: r.cacheDiagnostics, cacheAgreement: cacheAgreement(r) }),
    ...optional("failure", requestFailure(r)),
    ...optional("tokenGap", tokenGap(r)),
  };
}

const optional = <K extends string, V>(key: K, value: V | null) =>
  value === null ? {} : ({ [key]: value } as Record<K, V>);

/** The prefix cell: a failed request says so first, with why. */
function prefixCell(row: ReportRow): string {
  return row.failure === undefined ? row.prefixSummary : `FAILED: ${row.failure}; ${row.prefixSummary}`;
}

const n = (value: number | null | undefined) => (value === null || value === undefined ? "n/a" : String(value));

/** A size with its unit: `3511B` in bytes, `3511ch` in string lengths. */
function sized(value: number | null, unit: SizeUnit, gap = ""): string {
  return value === null ? "n/a" : `${value}${gap}${UNIT_SUFFIX[unit]}`;
}

const UNIT_SUFFIX: Record<SizeUnit, string> = { bytes: "B", chars: "ch" };

/** One line per request, every figure named: `seq=1 kind=loop toolCount=2 tools=3511B … body=5647B tokens=1282 …`. */
function plainLine(row: ReportRow): string {
  const s = row.size;
  const markers = Object.entries(row.markers)
    .map(([name, count]) => ` ${name}=${count}`)
    .join("");
  return [
    `seq=${row.seq} kind=${row.kind} toolCount=${row.tools.length}`,
    `tools=${sized(s.tools, row.unit)} system=${sized(s.system, row.unit)}`,
    `messages=${sized(s.messages, row.unit)} body=${sized(s.body, row.unit)}`,
    `tokens=${n(row.tokens?.total)}${row.tokenGap ? ` providerTokens=${row.tokenGap.provider}` : ""}`,
    `roles=${row.roles.join(">")}${markers}`,
    ...(row.failure === undefined ? [] : [`failed=${JSON.stringify(row.failure)}`]),
    ...(row.conversation ? [`conversation=${row.conversation.id} role=${row.conversation.role}`] : []),
  ].join(" ");
}

/** `814/386/79 = 1282 tok`: the parts, then the total the column lines up on. */
function tokenCell(row: ReportRow): string {
  const t = row.tokens;
  if (!t) return "n/a";
  const provider = row.tokenGap ? `; ${providerTokensText(row.tokenGap)}` : "";
  return `${t.tools}/${t.system}/${t.messages} = ${t.total} tok${provider}`;
}

const REPORT_HEAD = ["seq", "kind", "tools", "tokens t/s/m = total", "body", "roles", "markers", "prefix"];
const REPORT_ALIGN: Align[] = ["right", "left", "left", "right", "right", "left", "left", "left"];
/** The prefix (where the cache prefix broke, and why) is the point of the report: it wraps, never cut. */
const REPORT_WRAP = [false, false, false, false, false, false, false, true];

const TOKENS_SHORT = { head: "tokens", cell: (text: string) => text.replace(/^.* = /s, ""), note: "tokens as totals" };

/**
 * What gives way on a narrow terminal, first to last, so seq, tokens and the prefix stay whole:
 * roles (`show` has them), the tool list (its count stays), markers, the tokens' parts (the total
 * stays), kind, body, then the tools' count.
 */
const REPORT_NARROW: NarrowStep[] = [
  { column: 5 },
  { column: 2, short: { head: "tools", cell: (text) => text.replace(/ \[.*$/s, ""), note: "tools as a count" } },
  { column: 6 },
  { column: 3, short: TOKENS_SHORT },
  { column: 1 },
  { column: 4 },
  { column: 2 },
];

/** A prefix that broke stands out; so does a request that is not the agent's own turn. */
function reportTone(row: string[], column: number): Tone | null {
  if (column === 7 && row[7]!.startsWith("FAILED")) return "red";
  if (column === 7 && row[7]!.startsWith("breaks")) return "yellow";
  if (column === 3 && row[3]!.includes("apart)")) return "yellow";
  if (column === 1 && row[1] !== "loop") return "dim";
  return null;
}

/**
 * What the table's abbreviations mean, the encoding its tokens were counted in, and what a narrow
 * terminal left out or shortened (with where to see it whole).
 */
function reportLegend(encoding: string | null, unit: SizeUnit, narrowed: Narrowed, reported: boolean): string[] {
  const tokenParts = !narrowed.shortened.includes(TOKENS_SHORT.note);
  const legend = [`tokens ${encoding ?? "n/a"}${tokenParts ? ", t/s/m = tools/system/messages" : ""}`];
  if (reported) legend.push(`provider: the prompt tokens it reported, flagged over ${TOKEN_GAP_FLAG * 100}% from ours`);
  if (!narrowed.left.includes("body"))
    legend.push(`body in ${unit === "bytes" ? "UTF-8 bytes" : "string lengths"} (per part: --plain)`);
  legend.push("prefix: conversation; cache prefix read from an earlier request (#n)");
  return [...legend, ...narrowedLegend(narrowed)];
}

const MARKDOWN_HEAD = (unit: SizeUnit) => [
  "seq",
  "kind",
  "tools",
  "tokens tools",
  "tokens system",
  "tokens messages",
  "tokens total",
  `${unit} tools`,
  `${unit} system`,
  `${unit} messages`,
  `${unit} body`,
  "roles",
  "markers",
  "prefix",
];

function markdownRow(row: ReportRow): string {
  const t = row.tokens;
  return mdRow([
    row.seq,
    row.kind,
    `${row.tools.length} [${row.tools.join(", ")}]`,
    n(t?.tools),
    n(t?.system),
    n(t?.messages),
    row.tokenGap ? `${n(t?.total)}; ${providerTokensText(row.tokenGap)}` : n(t?.total),
    n(row.size.tools),
    n(row.size.system),
    n(row.size.messages),
    n(row.size.body),
    compactRoles(row.roles),
    markerSummary(row),
    prefixCell(row),
  ]);
}

export async function writeReport(
  records: Iterable<RecordSummary>,
  out: LineWriter,
  options: { format: ReportFormat; unit: SizeUnit; look?: TableLook },
): Promise<number> {
  const { format, unit } = options;
  const table = new TableOutput(REPORT_HEAD, {
    align: REPORT_ALIGN,
    look: options.look,
    tone: reportTone,
    narrow: REPORT_NARROW,
    wrap: REPORT_WRAP,
  });
  let encoding: string | null = null;
  let reported = false;
  let failed = 0;
  let count = 0;
  const conversations = new ConversationCounts();
  if (format === "json") await out.line("[");
  if (format === "markdown") await out.line(mdHeader(MARKDOWN_HEAD(unit)));
  for (const record of records) {
    const row = reportRow(record, unit);
    conversations.add(record);
    encoding ??= record.tokens?.encoding ?? null;
    reported ||= row.tokenGap !== undefined;
    if (row.failure !== undefined) failed++;
    if (format === "plain") await out.line(plainLine(row));
    else if (format === "json") await out.line(`${count > 0 ? "," : ""}${JSON.stringify(row)}`);
    else if (format === "markdown") await out.line(markdownRow(row));
    else table.push(tableRow(row));
    count++;
  }
  if (format === "json") await out.line("]");
  if (format === "table") {
    const legend = reportLegend(encoding, unit, table.narrowed(), reported);
    for (const line of legendLines(legend, options.look ?? PLAIN_LOOK)) await out.line(line);
    await table.write(out);
    if (failed > 0)
      await out.line(
        `${failed} request(s) FAILED (no response, or an error status): left out of the cache rates and the cost`,
      );
    const line = conversations.line();
    if (line) for (const wrapped of wrapLine(line, 80, 2, true)) await out.line(wrapped);
  }
  await out.flush();
  return count;
}

/** How many requests each conversation of a run holds, in order of first appearance. */
export class ConversationCounts {
  private readonly counts = new Map<string, { label: string; requests: number }>();

  add(r: Pick<RecordSummary, "conversation">): void {
    const c = r.conversation;
    if (!c) return;
    const entry = this.counts.get(c.id) ?? {
      label: `${c.id} ${c.role}${c.parent ? ` of ${c.parent}` : ""}`,
      requests: 0,
    };
    entry.requests++;
    this.counts.set(c.id, entry);
  }

  /** `conversations: c1 main 3 requests, c2 subagent of c1 1 request`; null when the records had none. */
  line(): string | null {
    if (this.counts.size === 0) return null;
    const each = [...this.counts.values()].map((c) => `${c.label} ${c.requests} request${c.requests === 1 ? "" : "s"}`);
    return `conversations: ${each.join(", ")}`;
  }
}

function tableRow(row: ReportRow): TableCell[] {
  return [
    row.seq,
    row.kind,
    `${row.tools.length} [${row.tools.join(", ")}]`,
    tokenCell(row),
    sized(row.size.body, row.unit, " "),
    compactRoles(row.roles),
    markerSummary(row),
    prefixCell(row),
  ];
}

/** `report --segments`: one row per tool definition, system part and message, and the overhead. */
export async function writeLedger(
  ledgers: AsyncIterable<RequestLedger>,
  out: LineWriter,
  format: ReportFormat,
  look?: TableLook,
): Promise<number> {
  const table = new TableOutput(["seq", "segment", "name", "tokens", "bytes"], {
    align: ["right", "left", "left", "right", "right"],
    look,
  });
  let count = 0;
  if (format === "json") await out.line("[");
  if (format === "markdown") await out.line(mdHeader(["seq", "segment", "name", "tokens", "bytes"]));
  for await (const ledger of ledgers) {
    const rows: unknown[][] = [
      ...ledger.segments.map((s) => [ledger.seq, s.segment, s.name, s.tokens, s.bytes]),
      [ledger.seq, "overhead", "", ledger.overhead, ""],
      [ledger.seq, "total", ledger.kind, ledger.total, ""],
    ];
    if (format === "json") await out.line(`${count > 0 ? "," : ""}${JSON.stringify(ledger)}`);
    else if (format === "markdown") for (const row of rows) await out.line(mdRow(row));
    else if (format === "plain")
      for (const [seq, segment, name, tokens, bytes] of rows)
        await out.line(
          `seq=${seq} segment=${segment}${name ? ` name=${name}` : ""} tokens=${tokens}${bytes === "" ? "" : ` bytes=${bytes}`}`,
        );
    else
      for (const [seq, segment, name, tokens, bytes] of rows)
        table.push([seq, segment, name, `${tokens} tok`, bytes === "" ? "" : `${bytes} B`] as TableCell[]);
    count++;
  }
  if (format === "json") await out.line("]");
  if (format === "table") {
    const legend = [`tokens ${TOKEN_ENCODING}: what each segment adds to the request`, "bytes: its UTF-8 JSON"];
    for (const line of legendLines(legend, look ?? PLAIN_LOOK)) await out.line(line);
    await table.write(out);
  }
  await out.flush();
  return count;
}
