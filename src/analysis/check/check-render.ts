/** `check` results as a terminal table, a CI job summary in markdown, JUnit XML, or JSON. */

import { mdCell, mdHeader, mdRow } from "../format.js";
import type { LineWriter } from "../table/output.js";
import { TableOutput } from "../table/table-output.js";
import { legendLines, PLAIN_LOOK, type TableLook, type Tone } from "../table/table-style.js";
import { type Finding, findingMessage, type ProbeCheck } from "./check.js";

const STATUS_WORD: Record<ProbeCheck["status"], string> = {
  pass: "pass",
  regression: "REGRESSION",
  error: "ERROR",
  updated: "baseline updated",
};

/** The result column's colour, by the word it shows. */
const RESULT_TONE: Record<string, Tone> = {
  [STATUS_WORD.pass]: "green",
  [STATUS_WORD.regression]: "red",
  [STATUS_WORD.error]: "red",
  [STATUS_WORD.updated]: "yellow",
};

/**
 * The table (a legend line, then one row per probe) and a line per error, regression and saving.
 * A failing run's "what changed" line (`check --run`) comes before everything; where a check has
 * one, its figures follow only under `verbose`, so a CI log leads with the cause.
 */
export async function writeCheckText(
  checks: ProbeCheck[],
  out: LineWriter,
  look: TableLook = PLAIN_LOOK,
  verbose = false,
): Promise<void> {
  // A finding wider than the terminal carries on two spaces in.
  const line = (text: string) => out.wrappedLine(text, look.maxWidth, 2);
  for (const c of checks) if (c.summary) await line(c.summary);
  const table = new TableOutput(["probe", "requests", "result", "regressions", "savings"], {
    align: ["left", "right", "left", "right", "right"],
    look,
    tone: (row, column) => (column === 2 ? (RESULT_TONE[row[2]!] ?? null) : null),
  });
  for (const c of checks)
    table.push([c.probe, c.requests, STATUS_WORD[c.status], c.regressions.length, c.savings.length]);
  const legend = ["regressions: figures over their baseline by more than its tolerance", "savings: figures under it"];
  for (const line of legendLines(legend, look)) await out.line(line);
  await table.write(out);
  for (const c of checks) {
    if (c.error) await line(`error: ${c.probe}: ${c.error}`);
    if (c.summary && !verbose) {
      if (c.regressions.length > 0)
        await line(`${c.probe}: ${c.regressions.length} finding(s); --verbose prints every figure`);
      continue;
    }
    for (const f of c.regressions) await line(`regression: ${findingMessage(f)}`);
    const update = c.updateCommand ?? `check ${c.probe} --update`;
    for (const f of c.savings) await line(`saving: ${findingMessage(f)} — '${update}' locks it in`);
  }
  await out.flush();
}

const findingRow = (f: Finding) => mdRow([f.probe, f.request ?? "—", f.metric, f.baseline, f.actual, f.tolerance]);

/** A titled table of the job summary, or nothing when it has no rows. */
const mdSection = (title: string, header: string[], rows: string[]): string[] =>
  rows.length === 0 ? [] : ["", `### ${title}`, "", mdHeader(header), ...rows];

/** A titled list of lines (one per check), or nothing when there are none. */
const mdLines = (title: string, lines: string[]): string[] =>
  lines.length === 0 ? [] : ["", `### ${title}`, "", ...lines.map((line) => `- ${mdCell(line)}`)];

const FINDING_HEADER = ["probe", "request", "metric", "baseline", "actual", "tolerance"];

export function renderCheckMarkdown(checks: ProbeCheck[]): string {
  const out = [
    "## payload-probe check",
    "",
    mdHeader(["probe", "requests", "result"]),
    ...checks.map((c) => mdRow([c.probe, c.requests, STATUS_WORD[c.status]])),
    ...mdLines(
      "What changed",
      checks.flatMap((c) => (c.summary ? c.summary.split("\n") : [])),
    ),
    ...mdLines(
      "Against budget",
      checks.flatMap((c) => (c.figures ? [`${c.probe}: ${c.figures}`] : [])),
    ),
    ...mdSection("Regressions", FINDING_HEADER, checks.flatMap((c) => c.regressions).map(findingRow)),
    ...mdSection(
      "Could not evaluate",
      ["probe", "error"],
      checks.filter((c) => c.error).map((c) => mdRow([c.probe, c.error])),
    ),
    ...mdSection("Savings (smaller than baseline)", FINDING_HEADER, checks.flatMap((c) => c.savings).map(findingRow)),
  ];
  return `${out.join("\n")}\n`;
}

function xml(text: string): string {
  return (
    text
      .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters, so they are dropped.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "")
  );
}

/** Test cases with a failure: one per request (and the run) with findings, whatever their number. */
const failedCases = (c: ProbeCheck) => new Set(c.regressions.map((f) => f.request)).size;

/**
 * A test case's findings as its one `<failure>` (some report viewers reject a second): the first
 * finding is the message, all of them its text.
 */
function junitFailure(findings: Finding[]): string {
  if (findings.length === 0) return "";
  const more = findings.length > 1 ? ` (+${findings.length - 1} more)` : "";
  const message = `${findingMessage(findings[0]!)}${more}`;
  const text = findings.map(findingMessage).join("\n");
  return `<failure message="${xml(message)}" type="${xml(findings[0]!.metric)}">${xml(text)}</failure>`;
}

/** A testsuite per probe, a testcase per request (and one for the run as a whole). */
export function renderCheckJunit(checks: ProbeCheck[]): string {
  const suites = checks.map((c) => {
    const cases: string[] = [];
    if (c.error) {
      cases.push(`    <testcase classname="${xml(c.probe)}" name="run"><error message="${xml(c.error)}"/></testcase>`);
    } else {
      const byRequest = new Map<number | null, Finding[]>([[null, []]]);
      for (let seq = 1; seq <= c.requests; seq++) byRequest.set(seq, []);
      for (const f of c.regressions) byRequest.set(f.request, [...(byRequest.get(f.request) ?? []), f]);
      for (const [request, findings] of byRequest) {
        const name = request === null ? "run" : `request ${request}`;
        cases.push(`    <testcase classname="${xml(c.probe)}" name="${name}">${junitFailure(findings)}</testcase>`);
      }
    }
    const failures = failedCases(c);
    const errors = c.error ? 1 : 0;
    return `  <testsuite name="${xml(c.probe)}" tests="${cases.length}" failures="${failures}" errors="${errors}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  const total = (f: (c: ProbeCheck) => number) => checks.reduce((s, c) => s + f(c), 0);
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="payload-probe check" tests="${total((c) => (c.error ? 1 : c.requests + 1))}" failures="${total(failedCases)}" errors="${total((c) => (c.error ? 1 : 0))}">
${suites.join("\n")}
</testsuites>
`;
}
