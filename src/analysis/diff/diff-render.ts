/**
 * Renders a diff of two runs as text, JSON or markdown, a request at a time as the diff is read.
 * Only what differs is spelled out; a part equal on both sides is named once as equal.
 */
import { TOKEN_ENCODING } from "../../capture/tokens.js";
import { compactRoles, mdHeader, mdRow, signed } from "../format.js";
import type { LineWriter } from "../table/output.js";
import { TableOutput } from "../table/table-output.js";
import { legendLines, PLAIN_LOOK, type TableLook } from "../table/table-style.js";
import { FIELDS_LISTED, fieldValue } from "./body-fields.js";
import { type DiffSummary, PARTS, type Pair, type RequestDiff } from "./diff.js";

export type DiffFormat = "text" | "json" | "markdown";

export interface DiffLabels {
  a: string;
  b: string;
}

function position(d: RequestDiff): string {
  if (d.seqA === d.seqB) return `#${d.seqA}`;
  return `#${d.seqA ?? "—"}/#${d.seqB ?? "—"}`;
}

/** `814→420 (-394)`, or `= 814` when both sides agree. */
function change(p: Pair): string {
  if (p.a === p.b) return `= ${p.a ?? "n/a"}`;
  if (p.a === null || p.b === null) return `${p.a ?? "—"}→${p.b ?? "—"}`;
  return `${p.a}→${p.b} (${signed(p.b - p.a)})`;
}

function toolsPhrase(d: RequestDiff): string {
  const list = (names: string[] | null) => (names === null ? "—" : `[${names.join(", ")}]`);
  if (d.toolsA?.join() === d.toolsB?.join()) return `same ${list(d.toolsA)}`;
  const moves = [...d.toolsAdded.map((n) => `+${n}`), ...d.toolsRemoved.map((n) => `-${n}`)];
  const what = d.toolsReordered ? "reordered" : moves.join(" ");
  return `A ${list(d.toolsA)} B ${list(d.toolsB)} (${what})`;
}

/** Where the two requests' tools and system text differ beyond the names: from the wire bodies. */
function detailLines(d: RequestDiff): string[] {
  const lines = d.toolsChanged.map((t) => `  changed  ${t.name} (${t.keys})`);
  for (const line of d.systemLines?.removed ?? []) lines.push(`  system - ${JSON.stringify(line)}`);
  for (const line of d.systemLines?.added ?? []) lines.push(`  system + ${JSON.stringify(line)}`);
  const paths = d.systemLines?.workspaceOnly ?? 0;
  if (paths > 0) lines.push(`  system   (${paths} more line(s) differ only in the probe name of a workspace path)`);
  return lines;
}

function partsPhrase(d: RequestDiff, measure: "tokens" | "bytes"): string {
  const pairs = d[measure] as Record<string, Pair>;
  return [...PARTS, measure === "tokens" ? "total" : "body"]
    .map((part) => `${part} ${change(pairs[part]!)}`)
    .join(" · ");
}

/**
 * Requests that differ in the same way as the one before them — same tools moved, same system
 * lines, same tools and system deltas, same markers, no prefix break on either side — are folded
 * into one line in text output, so a long run reads as its few distinct changes. Messages are left
 * out of the comparison: they grow on both sides in every request.
 */
function foldKey(d: RequestDiff): string | null {
  if (d.seqA === null || d.seqB === null || d.breakA?.breakAt || d.breakB?.breakAt || d.roles) return null;
  const delta = (p: Pair) => (p.a === null || p.b === null ? null : p.b - p.a);
  // JSON never holds a raw U+0001, so joining the parts' JSON with it keeps them apart.
  return [
    JSON.stringify([d.identical, d.divergesIn, d.ignoredFields]),
    JSON.stringify(d.bodyFields?.map((f) => f.path) ?? null),
    listJson(d.toolsA),
    listJson(d.toolsB),
    d.toolsChanged.length === 0 && d.systemLines === null && d.markers.length === 0
      ? NOTHING_CHANGED
      : JSON.stringify([d.toolsChanged, d.systemLines, d.markers]),
    JSON.stringify([delta(d.tokens.tools), delta(d.tokens.system), delta(d.bytes.tools), delta(d.bytes.system)]),
  ].join("\u0001");
}

/** The JSON of [toolsChanged, systemLines, markers] when the bodies add nothing: most requests. */
const NOTHING_CHANGED = JSON.stringify([[], null, []]);

/** A run's requests share one tool list object while their tools stay the same: its JSON is made once. */
const listJsonCache = new WeakMap<string[], string>();

function listJson(list: string[] | null): string {
  if (list === null) return "null";
  let json = listJsonCache.get(list);
  if (json === undefined) {
    json = JSON.stringify(list);
    listJsonCache.set(list, json);
  }
  return json;
}

function foldedLine(first: RequestDiff, last: RequestDiff, count: number): string {
  const range = count === 1 ? position(first) : `${position(first)}…${position(last)} (${count} requests)`;
  if (first.identical) return `${range}  identical`;
  return `${range}  ${count === 1 ? "differs" : "differ"} as the request above: same tools, system and markers, no prefix break`;
}

/** `  body     metadata.user_id A "x" B "y"`: each field outside the parts that differs, and what was set apart. */
function fieldLines(d: RequestDiff): string[] {
  const lines = (d.bodyFields ?? []).map((f) => `  body     ${f.path}: A ${fieldValue(f.a)} B ${fieldValue(f.b)}`);
  if (d.moreFields > 0)
    lines.push(`  body     … and ${d.moreFields} more field(s) (--json lists the first ${FIELDS_LISTED})`);
  if (d.ignoredFields.length > 0) lines.push(`  ignored  ${d.ignoredFields.join(", ")}`);
  return lines;
}

function textLines(d: RequestDiff): string[] {
  const head = `${position(d)} (turn ${d.turn})`;
  if (d.identical && d.ignoredFields.length > 0)
    return [`${head}  identical but for ignored fields: ${d.ignoredFields.join(", ")}`];
  if (d.identical) return [`${head}  identical`];
  if (d.seqA === null || d.seqB === null) {
    return [`${head}  only in ${d.seqA === null ? "B" : "A"}: tools ${toolsPhrase(d)} · ${partsPhrase(d, "tokens")}`];
  }
  const lines = [
    `${head}  differs, first in ${d.divergesIn}`,
    `  tools    ${toolsPhrase(d)}`,
    ...detailLines(d),
    ...fieldLines(d),
    `  tokens   ${partsPhrase(d, "tokens")}`,
    `  bytes    ${partsPhrase(d, "bytes")}`,
  ];
  lines.push(
    `  roles    ${d.roles ? `A ${compactRoles(d.roles.a.split(">"))} B ${compactRoles(d.roles.b.split(">"))}` : "same"}`,
  );
  lines.push(
    `  markers  ${d.markers.length > 0 ? d.markers.map((m) => `${m.name} ${m.a ?? "—"}→${m.b ?? "—"}`).join(" · ") : "same"}`,
  );
  lines.push(`  prefix   A ${d.prefixA} · B ${d.prefixB}`);
  return lines;
}

function breaksPhrase(side: DiffSummary["a"]): string {
  if (side.breakCount === 0) return "none";
  const listed = side.breaks
    .map((b) => `#${b.seq} in ${b.at} after ${b.sharedBytes} shared B (${b.detail})`)
    .join("; ");
  const more = side.breakCount - side.breaks.length;
  return more > 0 ? `${listed}; … and ${more} more` : listed;
}

function firstDivergencePhrase(s: DiffSummary): string {
  const f = s.firstDivergence;
  if (!f) return "none: every request is byte-identical";
  const at = f.seqA === f.seqB ? `request #${f.seqA}` : `A #${f.seqA ?? "—"} / B #${f.seqB ?? "—"}`;
  return f.part === "missing" ? `${at}: present on one side only` : `${at}, in ${f.part}`;
}

function summaryRows(s: DiffSummary): string[][] {
  const delta = (a: number, b: number) => signed(b - a);
  return [
    ["requests", String(s.a.requests), String(s.b.requests), delta(s.a.requests, s.b.requests)],
    [
      `total tokens, ours by ${TOKEN_ENCODING} (all requests)`,
      String(s.a.tokens),
      String(s.b.tokens),
      delta(s.a.tokens, s.b.tokens),
    ],
    ["body bytes (all requests)", String(s.a.bytes), String(s.b.bytes), delta(s.a.bytes, s.b.bytes)],
    [
      "prefix breaks",
      `${s.a.breakCount}: ${breaksPhrase(s.a)}`,
      `${s.b.breakCount}: ${breaksPhrase(s.b)}`,
      delta(s.a.breakCount, s.b.breakCount),
    ],
  ];
}

const MARKDOWN_HEAD = [
  "request",
  "turn",
  "differs in",
  "tools A → B",
  "tokens tools",
  "tokens system",
  "tokens messages",
  "tokens total",
  "roles",
  "markers",
  "prefix A",
  "prefix B",
];

export async function writeDiff(
  diffs: Generator<RequestDiff, DiffSummary>,
  labels: DiffLabels,
  out: LineWriter,
  format: DiffFormat,
  look: TableLook = PLAIN_LOOK,
): Promise<DiffSummary> {
  if (format === "json")
    await out.line(`{"a":${JSON.stringify(labels.a)},"b":${JSON.stringify(labels.b)},"requests":[`);
  else if (format === "markdown")
    await out.line(`Diff of **A** \`${labels.a}\` and **B** \`${labels.b}\`\n\n${mdHeader(MARKDOWN_HEAD)}`);
  else await out.wrappedLine(`A ${labels.a}\nB ${labels.b}\n`, look.maxWidth, 2);
  const summary = await writeRequests(diffs, out, format, look.maxWidth);
  if (format === "json") await out.line(`],"summary":${JSON.stringify(summary)}}`);
  else if (format === "markdown") await writeMarkdownSummary(summary, out);
  else await writeTextSummary(summary, out, look);
  await out.flush();
  return summary;
}

/**
 * Where a text line carries on when the terminal is too narrow for it: a request's detail lines under
 * their text, past the label column (`  tokens   `); a heading or summary line two spaces in.
 */
const TEXT_INDENT = (line: string) => (line.startsWith("  ") ? 11 : 2);

/** Each request's difference as it is read; text output folds runs of requests that differ alike. */
async function writeRequests(
  diffs: Generator<RequestDiff, DiffSummary>,
  out: LineWriter,
  format: DiffFormat,
  width: number | null,
): Promise<DiffSummary> {
  let first = true;
  let fold: { key: string | null; first?: RequestDiff; last?: RequestDiff; count: number } = { key: null, count: 0 };
  const endFold = async () => {
    if (fold.count > 0) await out.wrappedLine(foldedLine(fold.first!, fold.last!, fold.count), width, TEXT_INDENT);
  };
  let step = diffs.next();
  while (!step.done) {
    const d = step.value;
    if (format === "json") await out.line(`${first ? "" : ","}${JSON.stringify(d)}`);
    else if (format === "markdown") await out.line(markdownRow(d));
    else {
      const key = foldKey(d);
      if (key !== null && key === fold.key) {
        fold.first ??= d;
        fold.last = d;
        fold.count++;
      } else {
        await endFold();
        fold = { key, count: 0 };
        for (const line of textLines(d)) await out.wrappedLine(line, width, TEXT_INDENT);
      }
    }
    first = false;
    step = diffs.next();
  }
  if (format === "text") await endFold();
  return step.value;
}

function alignedLine(summary: DiffSummary): string {
  return `Aligned by ${summary.alignedBy}; ${summary.differing} request(s) differ; first divergence: ${firstDivergencePhrase(summary)}.`;
}

async function writeMarkdownSummary(summary: DiffSummary, out: LineWriter): Promise<void> {
  await out.line(`\n${alignedLine(summary)}\n`);
  await out.line(mdHeader(["", "A", "B", "Δ"]));
  for (const row of summaryRows(summary)) await out.line(mdRow(row));
}

/** The totals as a table of figures with their units; where each side's prefix broke, as lines below it. */
async function writeTextSummary(s: DiffSummary, out: LineWriter, look: TableLook): Promise<void> {
  const table = new TableOutput(["", "A", "B", "Δ"], { align: ["left", "right", "right", "right"], look });
  const row = (label: string, a: number, b: number, unit: string) =>
    table.push([label, `${a}${unit}`, `${b}${unit}`, `${signed(b - a)}${unit}`]);
  row("requests", s.a.requests, s.b.requests, "");
  row("tokens, all requests", s.a.tokens, s.b.tokens, " tok");
  row("body, all requests", s.a.bytes, s.b.bytes, " B");
  row("prefix breaks", s.a.breakCount, s.b.breakCount, "");
  await out.line("");
  await out.wrappedLine(alignedLine(s), look.maxWidth, 2);
  const legend = [`tokens ${TOKEN_ENCODING}`, "B: UTF-8 bytes of the request bodies", "Δ = B − A"];
  for (const line of legendLines(legend, look)) await out.line(line);
  await table.write(out);
  await out.wrappedLine(`prefix breaks A: ${breaksPhrase(s.a)}`, look.maxWidth, 2);
  await out.wrappedLine(`prefix breaks B: ${breaksPhrase(s.b)}`, look.maxWidth, 2);
}

function markdownRow(d: RequestDiff): string {
  return mdRow([
    position(d),
    d.turn,
    d.identical ? "identical" : (d.divergesIn ?? "one side only"),
    [toolsPhrase(d), ...detailLines(d).map((l) => l.trim()), ...fieldLines(d).map((l) => l.trim())].join("<br>"),
    change(d.tokens.tools),
    change(d.tokens.system),
    change(d.tokens.messages),
    change(d.tokens.total),
    d.roles ? `A ${d.roles.a} B ${d.roles.b}` : "same",
    d.markers.map((m) => `${m.name} ${m.a ?? "—"}→${m.b ?? "—"}`).join(", ") || "same",
    d.prefixA ?? "—",
    d.prefixB ?? "—",
  ]);
}
