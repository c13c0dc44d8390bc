/**
 * `report <run>`: what each request carried — one row per request, streamed as the run is read.
 * Table output is the one form that must see every row before printing (a column is as wide as
 * its widest cell), so it holds the rows' cells, never the records; plain, JSON and markdown are
 * written as the rows arrive.
 */
import type { RequestRecord } from "../capture/types.js";
import {
  compactRoles,
  markerSummary,
  mdHeader,
  mdRow,
  type PartSizes,
  partSizes,
  prefixSummary,
  type SizeUnit,
} from "./format.js";
import type { LineWriter } from "./output.js";
import type { RequestLedger } from "./segments.js";
import { TableOutput } from "./table-output.js";

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
  /** The prefix in a few words (`kept 5647 B/1282 tok`, `breaks in tools: …`). */
  prefixSummary: string;
}

export function reportRow(r: RequestRecord, unit: SizeUnit): ReportRow {
  return {
    seq: r.seq,
    kind: r.kind,
    tools: r.tools,
    unit,
    size: partSizes(r, unit),
    tokens: r.tokens,
    usage: r.usage,
    roles: r.roles,
    markers: r.markers,
    prefix: r.prefix,
    prefixSummary: prefixSummary(r),
  };
}

const n = (value: number | null | undefined) => (value === null || value === undefined ? "n/a" : String(value));

/** The seed's one line per request: `seq=1 tools=2 bytes=3877 roles=system>user schema=0 result=0`. */
export function plainLine(row: ReportRow): string {
  const markers = Object.entries(row.markers)
    .map(([name, count]) => ` ${name}=${count}`)
    .join("");
  return `seq=${row.seq} tools=${row.tools.length} ${row.unit}=${row.size.tools} roles=${row.roles.join(">")}${markers}`;
}

function tokenCell(row: ReportRow): string {
  const t = row.tokens;
  return t ? `${t.tools}/${t.system}/${t.messages} =${t.total}` : "n/a";
}

function sizeCell(row: ReportRow): string {
  const s = row.size;
  return `${n(s.tools)}/${n(s.system)}/${n(s.messages)} =${n(s.body)}`;
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
    n(t?.total),
    n(row.size.tools),
    n(row.size.system),
    n(row.size.messages),
    n(row.size.body),
    compactRoles(row.roles),
    markerSummary(row),
    row.prefixSummary,
  ]);
}

export async function writeReport(
  records: Iterable<RequestRecord>,
  out: LineWriter,
  options: { format: ReportFormat; unit: SizeUnit },
): Promise<number> {
  const { format, unit } = options;
  const table = new TableOutput([
    "seq",
    "kind",
    "tools",
    "tokens t/s/m =total",
    `${unit} t/s/m =body`,
    "roles",
    "markers",
    "prefix",
  ]);
  let count = 0;
  if (format === "json") await out.line("[");
  if (format === "markdown") await out.line(mdHeader(MARKDOWN_HEAD(unit)));
  for (const record of records) {
    const row = reportRow(record, unit);
    if (format === "plain") await out.line(plainLine(row));
    else if (format === "json") await out.line(`${count > 0 ? "," : ""}${JSON.stringify(row)}`);
    else if (format === "markdown") await out.line(markdownRow(row));
    else
      table.push([
        row.seq,
        row.kind,
        `${row.tools.length} [${row.tools.join(", ")}]`,
        tokenCell(row),
        sizeCell(row),
        compactRoles(row.roles),
        markerSummary(row),
        row.prefixSummary,
      ]);
    count++;
  }
  if (format === "json") await out.line("]");
  if (format === "table") await table.write(out);
  await out.flush();
  return count;
}

/** `report --segments`: one row per tool definition, system part and message, and the overhead. */
export async function writeLedger(
  ledgers: AsyncIterable<RequestLedger>,
  out: LineWriter,
  format: ReportFormat,
): Promise<number> {
  const table = new TableOutput(["seq", "segment", "name", "tokens", "bytes"]);
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
    else for (const row of rows) table.push(row as (string | number)[]);
    count++;
  }
  if (format === "json") await out.line("]");
  if (format === "table") await table.write(out);
  await out.flush();
  return count;
}
