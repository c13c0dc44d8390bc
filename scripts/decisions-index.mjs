/**
 * docs/decisions-index.md from docs/decisions.md: every record's number, section, decision and status.
 *
 *   node scripts/decisions-index.mjs           writes the index; numbers the records that have none
 *   node scripts/decisions-index.mjs --check   exit 1, naming what is wrong, when the index is stale,
 *                                              a record has no number or no status, or a status names
 *                                              a record that does not exist
 *
 * A record is a line starting `- ` in a `## ` section, with what follows up to the next one. Its
 * number is `D<n>.` at its start, given once and never reused: a new record gets the next free
 * number wherever it sits. Its status is the end of its `*Recorded …; <status>.*` line: `in force`,
 * or `superseded by D<n>` / `in part superseded by D<n>` (several numbers joined by `, `), as
 * records are superseded, never edited.
 */
import "./help.mjs";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DOCS = join(dirname(fileURLToPath(import.meta.url)), "..", "docs");
const DECISIONS = join(DOCS, "decisions.md");
const INDEX = join(DOCS, "decisions-index.md");

const NUMBER = /^- D(\d+)\. /;
const STATUS = /\*Recorded [^;*]*; ([^*]*?)\.?\*\s*$/;
const VALID_STATUS = /^(in force|(in part )?superseded by D\d+(, D\d+)*)$/;

/** The records of the text, in order, with the line each starts on (1-based). */
export function parseDecisions(text) {
  const records = [];
  let section = null;
  let current = null;
  text.split("\n").forEach((line, i) => {
    if (line.startsWith("## ")) {
      section = line.slice(3).trim();
      current = null;
    } else if (section && line.startsWith("- ")) {
      current = { section, line: i + 1, lines: [line] };
      records.push(current);
    } else if (current && line.trim() !== "") current.lines.push(line);
  });
  return records.map(({ section, line, lines }) => {
    const number = NUMBER.exec(lines[0]);
    const body = lines.join(" ").replace(NUMBER, "- ");
    const status =
      lines
        .map((l) => STATUS.exec(l))
        .findLast(Boolean)?.[1]
        ?.replace(/\s+/g, " ") ?? null;
    return { section, line, number: number ? Number(number[1]) : null, title: titleOf(body), status };
  });
}

/** The record's decision: its first bold span, or its first sentence, cut to fit an index row. */
function titleOf(body) {
  const text = body.slice(2).trim();
  const bold = /^\*\*(.+?)\*\*/.exec(text);
  const title = bold ? bold[1] : (/^(.+?[.:])(\s|$)/.exec(text)?.[1] ?? text);
  const plain = title.replace(/\s+/g, " ").replaceAll("|", "\\|");
  return plain.length > 110 ? `${plain.slice(0, 109)}…` : plain;
}

/** What is wrong with the records, one line each. */
export function problems(records) {
  const found = [];
  const numbers = new Set();
  for (const record of records) {
    const where = `docs/decisions.md:${record.line}`;
    if (record.number === null) found.push(`${where}: the record has no number (D<n>. at its start)`);
    else if (numbers.has(record.number)) found.push(`${where}: D${record.number} is used twice`);
    else numbers.add(record.number);
    if (record.status === null) found.push(`${where}: no '*Recorded …; <status>.*' line`);
    else if (!VALID_STATUS.test(record.status))
      found.push(`${where}: status '${record.status}' is not 'in force' or 'superseded by D<n>'`);
  }
  for (const record of records)
    for (const [, n] of record.status?.matchAll(/D(\d+)/g) ?? [])
      if (!numbers.has(Number(n))) found.push(`docs/decisions.md:${record.line}: D${n} does not exist`);
  return found;
}

/** The decisions text with a number given to every record that has none, the next free one each. */
export function numbered(text) {
  const records = parseDecisions(text);
  let next = Math.max(0, ...records.map((r) => r.number ?? 0)) + 1;
  const lines = text.split("\n");
  for (const record of records)
    if (record.number === null) lines[record.line - 1] = lines[record.line - 1].replace(/^- /, `- D${next++}. `);
  return lines.join("\n");
}

/** The index page for the records. */
export function indexPage(records) {
  const out = [
    "# Decisions: the index",
    "",
    "[README](../README.md) · [all pages](README.md) · [the records](decisions.md)",
    "",
    "Every record of [decisions.md](decisions.md) by section: its number (search the page for `D<n>.`),",
    "the decision, and whether it is in force. Written by `node scripts/decisions-index.mjs`; a test",
    "fails when it is stale.",
  ];
  let section = null;
  for (const record of records) {
    if (record.section !== section) {
      section = record.section;
      out.push("", `## ${section}`, "", "| # | decision | status |", "|---|---|---|");
    }
    out.push(`| D${record.number} | ${record.title} | ${record.status} |`);
  }
  return `${out.join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  let text = readFileSync(DECISIONS, "utf8");
  if (!check) {
    text = numbered(text);
    writeFileSync(DECISIONS, text);
  }
  const records = parseDecisions(text);
  const found = problems(records);
  const page = indexPage(records);
  if (check && readFileSync(INDEX, "utf8") !== page)
    found.push("docs/decisions-index.md is stale: run node scripts/decisions-index.mjs");
  if (!check && found.length === 0) writeFileSync(INDEX, page);
  for (const line of found) console.error(line);
  process.exitCode = found.length > 0 ? 1 : 0;
}
