/** `report --context` written out: a table of the sources, then the tools never called; or JSON, plain, markdown. */
import { TOKEN_ENCODING } from "../../capture/tokens.js";
import { mdHeader, mdRow } from "../format.js";
import type { ReportFormat } from "../report.js";
import type { LineWriter } from "../table/output.js";
import { TableOutput } from "../table/table-output.js";
import { legendLines, PLAIN_LOOK, type TableLook } from "../table/table-style.js";
import type { ContextSummary } from "./context-summary.js";

const SOURCE_HEAD = ["source", "first", "last", "session", "share"];
/** With the provider's counts: the session's figure scaled to them. */
const SCALED_HEAD = [...SOURCE_HEAD, "provider"];

const scaledShown = (summary: ContextSummary) => summary.scaledRequests > 0;
const UNUSED_HEAD = ["never called", "source", "requests", "tokens"];
const UNUSED_SKILL_HEAD = ["skill never loaded", "requests", "tokens"];

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

function sourceRows(summary: ContextSummary): (string | number)[][] {
  return summary.sources.map((s) => [
    s.source,
    s.first,
    s.last,
    s.session,
    percent(s.share),
    ...(scaledShown(summary) ? [s.sessionScaled ?? 0] : []),
  ]);
}

function unusedRows(summary: ContextSummary): (string | number)[][] {
  return summary.unused.map((u) => [u.tool, u.source, u.requests, u.tokens]);
}

function unusedSkillRows(summary: ContextSummary): (string | number)[][] {
  return summary.unusedSkills.map((u) => [u.skill, u.requests, u.tokens]);
}

function dominantLine({ source, tokens, total }: NonNullable<ContextSummary["dominant"]>): string {
  return `at the end ${source} takes the most: ${tokens} of ${total} tokens (${percent(total === 0 ? 0 : tokens / total)})`;
}

function legend(summary: ContextSummary): string[] {
  return [
    `tokens ${TOKEN_ENCODING}`,
    summary.lastSeq === null
      ? "last: no request"
      : `first, last: requests ${summary.firstSeq} and ${summary.lastSeq}, the main conversation's first and last`,
    ...(summary.dominant ? [dominantLine(summary.dominant)] : []),
    `session: over ${summary.requests.length} request(s)`,
    "share: of the session's tokens",
    ...(scaledShown(summary)
      ? [
          `provider: session scaled to the input tokens the provider reported (${summary.scaledRequests} of ${summary.requests.length} request(s) reported them; each request's sources in proportion to ours)`,
        ]
      : []),
  ];
}

async function writeTables(summary: ContextSummary, out: LineWriter, look: TableLook): Promise<void> {
  for (const line of legendLines(legend(summary), look)) await out.line(line);
  const head = scaledShown(summary) ? SCALED_HEAD : SOURCE_HEAD;
  const sources = new TableOutput(head, { align: ["left", ...head.slice(1).map(() => "right" as const)], look });
  for (const row of sourceRows(summary)) sources.push(row);
  await sources.write(out);
  if (summary.unused.length > 0) {
    for (const line of legendLines(["tools sent and never called: what their definitions cost over the run"], look))
      await out.line(line);
    const unused = new TableOutput(UNUSED_HEAD, { align: ["left", "left", "right", "right"], look });
    for (const row of unusedRows(summary)) unused.push(row);
    await unused.write(out);
  }
  if (summary.unusedSkills.length === 0) return;
  for (const line of legendLines(["skills listed and never loaded: what their index entries cost over the run"], look))
    await out.line(line);
  const skills = new TableOutput(UNUSED_SKILL_HEAD, { align: ["left", "right", "right"], look });
  for (const row of unusedSkillRows(summary)) skills.push(row);
  await skills.write(out);
}

async function writePlain(summary: ContextSummary, out: LineWriter): Promise<void> {
  for (const s of summary.sources) {
    const scaled = s.sessionScaled === null ? "" : ` provider=${s.sessionScaled}`;
    await out.line(
      `source=${s.source} first=${s.first} last=${s.last} session=${s.session} share=${percent(s.share)}${scaled}`,
    );
  }
  for (const u of summary.unused)
    await out.line(`neverCalled=${u.tool} source=${u.source} requests=${u.requests} tokens=${u.tokens}`);
  for (const u of summary.unusedSkills)
    await out.line(`neverLoaded=${u.skill} requests=${u.requests} tokens=${u.tokens}`);
}

async function writeMarkdown(summary: ContextSummary, out: LineWriter): Promise<void> {
  await out.line(mdHeader(scaledShown(summary) ? SCALED_HEAD : SOURCE_HEAD));
  for (const row of sourceRows(summary)) await out.line(mdRow(row));
  for (const [head, rows] of [
    [UNUSED_HEAD, unusedRows(summary)],
    [UNUSED_SKILL_HEAD, unusedSkillRows(summary)],
  ] as const) {
    if (rows.length === 0) continue;
    await out.line("");
    await out.line(mdHeader(head));
    for (const row of rows) await out.line(mdRow(row));
  }
}

export async function writeContextReport(
  summary: ContextSummary,
  out: LineWriter,
  format: ReportFormat,
  look: TableLook = PLAIN_LOOK,
): Promise<void> {
  if (format === "json") {
    const { requests, firstSeq, lastSeq, dominant, sources, unused, unusedSkills, scaledRequests } = summary;
    const json = {
      encoding: TOKEN_ENCODING,
      ...{ requests, firstSeq, lastSeq, dominant, sources, unused, unusedSkills, scaledRequests },
    };
    await out.line(JSON.stringify(json, null, 2));
  } else if (format === "plain") await writePlain(summary, out);
  else if (format === "markdown") await writeMarkdown(summary, out);
  else await writeTables(summary, out, look);
  await out.flush();
}
