/** `diff --context` written out: a sentence per source that changed, then a table of every source; or JSON, plain, markdown. */
import { TOKEN_ENCODING } from "../../capture/tokens.js";
import { wrapLines } from "../../text/text-wrap.js";
import { mdHeader, mdRow } from "../format.js";
import type { ReportFormat } from "../report.js";
import type { LineWriter } from "../table/output.js";
import { TableOutput } from "../table/table-output.js";
import { legendLines, PLAIN_LOOK, type TableLook } from "../table/table-style.js";
import type { ContextDiff } from "./context-diff.js";

const HEAD = ["source", "A a request", "B a request", "change", "B over run"];

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

function rows(diff: ContextDiff): (string | number)[][] {
  return diff.changes.map((c) => [
    c.source,
    c.a?.perRequest ?? "-",
    c.b?.perRequest ?? "-",
    signed(c.change),
    c.b?.session ?? 0,
  ]);
}

async function writeTables(diff: ContextDiff, labels: { a: string; b: string }, out: LineWriter, look: TableLook) {
  const legend = [
    `A ${labels.a} (${diff.requests.a} request(s))`,
    `B ${labels.b} (${diff.requests.b} request(s))`,
    `tokens ${TOKEN_ENCODING}; a request: the source's tokens over the run divided by its requests`,
  ];
  for (const line of legendLines(legend, look)) await out.line(line);
  for (const line of wrapLines(diff.sentences.length > 0 ? diff.sentences : ["no source changed"], look.maxWidth))
    await out.line(line);
  const table = new TableOutput(HEAD, { align: ["left", "right", "right", "right", "right"], look });
  for (const row of rows(diff)) table.push(row);
  await table.write(out);
}

export async function writeContextDiff(
  diff: ContextDiff,
  labels: { a: string; b: string },
  out: LineWriter,
  format: ReportFormat,
  look: TableLook = PLAIN_LOOK,
): Promise<void> {
  if (format === "json") await out.line(JSON.stringify({ encoding: TOKEN_ENCODING, ...labels, ...diff }, null, 2));
  else if (format === "markdown") {
    for (const sentence of diff.sentences) await out.line(`- ${sentence}`);
    await out.line("");
    await out.line(mdHeader(HEAD));
    for (const row of rows(diff)) await out.line(mdRow(row));
  } else if (format === "plain")
    for (const c of diff.changes)
      await out.line(
        `source=${c.source} a=${c.a?.perRequest ?? "-"} b=${c.b?.perRequest ?? "-"} change=${signed(c.change)}`,
      );
  else await writeTables(diff, labels, out, look);
  await out.flush();
}
