import { PassThrough } from "node:stream";
import Table from "cli-table3";
import { describe, expect, it } from "vitest";
import { LineWriter } from "../../src/analysis/output.js";
import { type TableCell, TableOutput } from "../../src/analysis/table-output.js";

const HEAD = ["seq", "tools", "roles", "prefix"];

/** What cli-table3 prints for the same rows as one table, with the report's style. */
function oneTable(rows: TableCell[][]): string {
  const table = new Table({ head: HEAD, style: { head: [], border: [] } });
  for (const row of rows) table.push(row);
  return `${table.toString()}\n`;
}

async function written(rows: TableCell[][]): Promise<string> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const table = new TableOutput(HEAD);
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
  [3, "\u001b[31mred\u001b[0m", "user", "a colour code"],
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

  it("prints wide, multi-line and coloured cells among plain rows exactly as one table would", async () => {
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
    expect(lines).toHaveLength(3 + 2 * rows.length);
    expect(lines.at(-2)).toBe(lines[3]!.replace("0     ", "129999"));
  });
});
