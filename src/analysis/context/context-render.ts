/** `report --context` written out: a table of the sources, then the tools never called; or JSON, plain, markdown. */
import { TOKEN_ENCODING } from "../../capture/tokens.js";
import { mdHeader, mdRow } from "../format.js";
import type { ReportFormat } from "../report.js";
import type { LineWriter } from "../table/output.js";
import { TableOutput } from "../table/table-output.js";
import { legendLines, PLAIN_LOOK, type TableLook } from "../table/table-style.js";
import type { ContextSummary } from "./context-summary.js";

const SOURCE_HEAD = ["source", "last", "session", "share"];
const UNUSED_HEAD = ["never called", "source", "requests", "tokens"];

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

function sourceRows(summary: ContextSummary): (string | number)[][] {
  return summary.sources.map((s) => [s.source, s.last, s.session, percent(s.share)]);
}

function unusedRows(summary: ContextSummary): (string | number)[][] {
  return summary.unused.map((u) => [u.tool, u.source, u.requests, u.tokens]);
}

function legend(summary: ContextSummary): string[] {
  return [
    `tokens ${TOKEN_ENCODING}`,
    summary.lastSeq === null ? "last: no request" : `last: request ${summary.lastSeq}, the main conversation's last`,
    `session: over ${summary.requests.length} request(s)`,
    "share: of the session's tokens",
  ];
}

async function writeTables(summary: ContextSummary, out: LineWriter, look: TableLook): Promise<void> {
  for (const line of legendLines(legend(summary), look)) await out.line(line);
  const sources = new TableOutput(SOURCE_HEAD, { align: ["left", "right", "right", "right"], look });
  for (const row of sourceRows(summary)) sources.push(row);
  await sources.write(out);
  if (summary.unused.length === 0) return;
  for (const line of legendLines(["tools sent and never called: what their definitions cost over the run"], look))
    await out.line(line);
  const unused = new TableOutput(UNUSED_HEAD, { align: ["left", "left", "right", "right"], look });
  for (const row of unusedRows(summary)) unused.push(row);
  await unused.write(out);
}

async function writePlain(summary: ContextSummary, out: LineWriter): Promise<void> {
  for (const s of summary.sources)
    await out.line(`source=${s.source} last=${s.last} session=${s.session} share=${percent(s.share)}`);
  for (const u of summary.unused)
    await out.line(`neverCalled=${u.tool} source=${u.source} requests=${u.requests} tokens=${u.tokens}`);
}

async function writeMarkdown(summary: ContextSummary, out: LineWriter): Promise<void> {
  await out.line(mdHeader(SOURCE_HEAD));
  for (const row of sourceRows(summary)) await out.line(mdRow(row));
  if (summary.unused.length === 0) return;
  await out.line("");
  await out.line(mdHeader(UNUSED_HEAD));
  for (const row of unusedRows(summary)) await out.line(mdRow(row));
}

export async function writeContextReport(
  summary: ContextSummary,
  out: LineWriter,
  format: ReportFormat,
  look: TableLook = PLAIN_LOOK,
): Promise<void> {
  if (format === "json") {
    const { requests, lastSeq, sources, unused } = summary;
    await out.line(JSON.stringify({ encoding: TOKEN_ENCODING, requests, lastSeq, sources, unused }, null, 2));
  } else if (format === "plain") await writePlain(summary, out);
  else if (format === "markdown") await writeMarkdown(summary, out);
  else await writeTables(summary, out, look);
  await out.flush();
}
