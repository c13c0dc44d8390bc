import { PassThrough } from "node:stream";
import Table from "cli-table3";
import { describe, expect, it } from "vitest";
import { LineWriter } from "../../../src/analysis/table/output.js";
import {
  type Align,
  type TableCell,
  type TableOptions,
  TableOutput,
} from "../../../src/analysis/table/table-output.js";
import type { TableLook } from "../../../src/analysis/table/table-style.js";
import { printable } from "../../../src/text/terminal-text.js";

const HEAD = ["seq", "tools", "roles", "prefix"];
// biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes are taken out to compare the layout.
const COLOUR_CODES = /\u001b\[\d+m/g;

const ALIGN: Align[] = ["right", "left", "left", "left"];

/**
 * What cli-table3 prints for the same rows as one compact table (no rule between rows), right-aligned
 * seq, each text made printable first as TableOutput makes it.
 */
function oneTable(rows: TableCell[][], colWidths?: number[]): string {
  const table = new Table({
    head: HEAD,
    colAligns: ALIGN,
    ...(colWidths ? { colWidths } : {}),
    style: { head: [], border: [], compact: true },
  });
  for (const row of rows)
    table.push(row.map((cell) => (typeof cell === "string" ? printable(cell, { lines: true }) : cell)));
  return `${table.toString()}\n`;
}

async function written(rows: TableCell[][], look?: TableLook, tone?: TableOptions["tone"]): Promise<string> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const table = new TableOutput(HEAD, { align: ALIGN, look, tone });
  for (const row of rows) table.push(row);
  const out = new LineWriter(stream);
  await table.write(out);
  await out.flush();
  return chunks.join("");
}

const plainRow = (i: number): TableCell[] => [
  i,
  `${i % 3} [read, bash]`,
  "system>user>(assistant>tool)×2",
  "kept 12 B — ok…",
];
const unusualRows: TableCell[][] = [
  [1, "名前 [読む]", "system>user", "wide characters"],
  [2, "two\nlines", "system", "a line break"],
  [3, "\u001b[31mred\u001b[0m", "user", "a captured colour code, shown as its escape"],
  [4, "e\u0301", "user", "a combining accent"],
  [5, "", "", ""],
];

describe("TableOutput", () => {
  it("prints the head alone as cli-table3 does when there are no rows", async () => {
    expect(await written([])).toBe(oneTable([]));
  });

  it("prints plain rows exactly as one cli-table3 table would", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => plainRow(i + 1));
    expect(await written(rows)).toBe(oneTable(rows));
  });

  it("prints wide, multi-line and escaped cells among plain rows exactly as one table would", async () => {
    const rows = [
      plainRow(1),
      ...unusualRows,
      plainRow(6),
      ...unusualRows,
      ...unusualRows,
      ...unusualRows,
      plainRow(9),
    ];
    expect(await written(rows)).toBe(oneTable(rows));
    expect(await written(unusualRows)).toBe(oneTable(unusualRows));
  });

  it("holds a table longer than cli-table3 can take in one call", async () => {
    const rows = Array.from({ length: 130_000 }, (_, i) => plainRow(i));
    expect(() => oneTable(rows)).toThrow(RangeError);
    const lines = (await written(rows)).trimEnd().split("\n");
    expect(lines).toHaveLength(4 + rows.length);
    expect(lines.at(-2)).toBe(lines[3]!.replace("     0", "129999"));
  });

  it("fitted to a width, cuts the text columns with … as cli-table3 cuts cells of those widths, and keeps figures whole", async () => {
    const rows = [...Array.from({ length: 20 }, (_, i) => plainRow(i * 997)), ...unusualRows];
    const fitted = await written(rows, { maxWidth: 40, colour: false });
    const lines = fitted.trimEnd().split("\n");
    expect(lines[0]).toHaveLength(40);
    expect(fitted).toContain("…");
    expect(fitted).toContain("│ 18943 │");
    const widths = [...lines[0]!.matchAll(/─+/g)].map((m) => m[0].length);
    expect(fitted).toBe(oneTable(rows, widths));
  });

  it("leaves a table that already fits as it is", async () => {
    const rows = [plainRow(1), plainRow(2)];
    expect(await written(rows, { maxWidth: 200, colour: false })).toBe(oneTable(rows));
  });

  it("colours the head and the cells its tone picks only when the look asks for colour", async () => {
    const rows = [plainRow(1), unusualRows[0]!];
    const tone: TableOptions["tone"] = (_row, column) => (column === 3 ? "yellow" : null);
    const plain = await written(rows, { maxWidth: null, colour: false }, tone);
    expect(plain).toBe(oneTable(rows));
    const coloured = await written(rows, { maxWidth: null, colour: true }, tone);
    expect(coloured).toContain("\u001b[1mseq\u001b[22m");
    expect(coloured).toContain("\u001b[33mkept 12 B — ok…\u001b[39m");
    expect(coloured).toContain("\u001b[33mwide characters\u001b[39m");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes are taken out to compare the layout.
    expect(coloured.replace(/\u001b\[\d+m/g, "")).toBe(plain);
  });

  it("on a narrow look takes its narrowing steps in order, wraps a wrapping column, and says what it left out", async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
    const toned: string[] = [];
    const table = new TableOutput(HEAD, {
      align: ALIGN,
      look: { maxWidth: 50, colour: true },
      tone: (row, column) => {
        toned.push(`${column}:${row[column]}`);
        return null;
      },
      narrow: [
        { column: 2 },
        { column: 1, short: { head: "#", cell: (text) => text.replace(/ .*/, ""), note: "tools as a count" } },
        { column: 0 },
      ],
      wrap: [false, false, false, true],
    });
    table.push([
      7,
      "2 [read, bash]",
      "system>user>(assistant>tool)×2",
      "breaks in tools: tools[1] added: bash (shared 12 B)",
    ]);
    table.push([8, "2 [read, bash]", "system>user", "kept 40 B"]);
    expect(table.narrowed()).toEqual({ left: ["roles"], shortened: ["tools as a count"] });
    const out = new LineWriter(stream);
    await table.write(out);
    await out.flush();
    const lines = chunks.join("").replace(COLOUR_CODES, "").trimEnd().split("\n");
    expect(lines).toEqual([
      "┌─────┬───┬──────────────────────────────────────┐",
      "│ seq │ # │ prefix                               │",
      "├─────┼───┼──────────────────────────────────────┤",
      "│   7 │ 2 │ breaks in tools: tools[1] added:     │",
      "│     │   │ bash (shared 12 B)                   │",
      "│   8 │ 2 │ kept 40 B                            │",
      "└─────┴───┴──────────────────────────────────────┘",
    ]);
    // The tone sees each cell by its column in the head, whole, whatever was left out or shortened.
    expect(toned).toContain("3:kept 40 B");
    expect(toned).toContain("1:2 [read, bash]");
    expect(toned.some((t) => t.startsWith("2:"))).toBe(false);
  });

  it("takes no narrowing step when the table fits", async () => {
    const table = new TableOutput(HEAD, {
      align: ALIGN,
      look: { maxWidth: 200, colour: false },
      narrow: [{ column: 2 }],
    });
    table.push(plainRow(1));
    expect(table.narrowed()).toEqual({ left: [], shortened: [] });
  });
});
