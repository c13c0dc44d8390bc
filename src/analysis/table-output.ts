/**
 * A cli-table3 table of any length, in time linear in its rows.
 *
 * cli-table3 0.6.5 lays a table out in time quadratic in its rows (layout-manager.js `fillInTable`
 * checks every cell against every cell above it for spans: 5,000 report rows took 12 s) and passes
 * all rows as the arguments of one call (`push.apply` in table.js: a RangeError from about 120,000
 * rows). Drawn a few rows at a time with fixed widths it is linear, but still spends about 100 µs
 * on a row (it builds string-width's regular expressions anew for every measure of every cell).
 *
 * So the rows are gathered with the width of every column, cli-table3 draws the head and the
 * border lines for those fixed widths, and a row of plain one-line cells is laid into that frame
 * the way cli-table3 lays it (one space, the text, spaces up to the width). A row with anything
 * else in it (a line break, a colour code, a wide character) is drawn by cli-table3 itself, as a
 * piece stitched in at its borders. Either way the output is byte for byte one table of all rows
 * (test/analysis/table-output.test.ts holds it against cli-table3).
 */
import { createRequire } from "node:module";
import Table from "cli-table3";
import type { LineWriter } from "./output.js";

// cli-table3 sizes a column by this function (display width, colour codes left out); measuring
// with the same one keeps every column exactly as wide as the library alone would make it.
const { strlen } = createRequire(import.meta.url)("cli-table3/src/utils.js") as { strlen(text: string): number };

export type TableCell = string | number;

/** The padding cli-table3 puts on either side of a cell's text. */
const PADDING = 1;
/** Rows of one piece cli-table3 draws; its layout cost per row grows with the piece. */
const PIECE_ROWS = 16;
/**
 * Text whose display width is its length: printable ASCII and Latin-1, and the dash, ellipsis and
 * quotes our cells use. No line break, colour code, combining or wide character.
 */
const PLAIN = /^[\x20-\x7e\xa0-\xff\u2013\u2014\u2018\u2019\u201c\u201d\u2026]*$/;

const NO_BORDER_COLOURS = { head: [], border: [] };
/** The row separator in place of the top border: what cli-table3 draws above every row after the first. */
const CONTINUED_TOP = { top: "─", "top-left": "├", "top-mid": "┼", "top-right": "┤" };
/** An empty line is not drawn, so a piece that is not the last ends at its last row. */
const OPEN_BOTTOM = { bottom: "", "bottom-left": "", "bottom-mid": "", "bottom-right": "" };

interface Frame {
  /** The line cli-table3 draws between two rows, and the one under the last. */
  separator: string;
  bottom: string;
  /** The vertical border before each column, and the one after the last. */
  edges: string[];
}

export class TableOutput {
  private readonly rows: { texts: string[]; plain: boolean }[] = [];
  private readonly widths: number[];

  constructor(private readonly head: string[]) {
    this.widths = head.map((text) => strlen(text) + 2 * PADDING);
  }

  push(cells: TableCell[]): void {
    const texts = cells.map(String);
    let plain = true;
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!;
      const textPlain = PLAIN.test(text);
      plain &&= textPlain;
      const width = (textPlain ? text.length : strlen(text)) + 2 * PADDING;
      if (width > this.widths[i]!) this.widths[i] = width;
    }
    this.rows.push({ texts, plain });
  }

  async write(out: LineWriter): Promise<void> {
    const rows = this.rows;
    await out.line(this.drawn([], { head: true, last: rows.length === 0 }));
    if (rows.length === 0) return;
    const frame = this.frame();
    let pending: string[][] = [];
    for (const { texts, plain } of rows) {
      if (plain) {
        if (pending.length > 0) await out.line(this.drawn(pending, { head: false, last: false }));
        pending = [];
        await out.line(frame.separator);
        await out.line(this.laidOut(texts, frame));
      } else {
        pending.push(texts);
        if (pending.length === PIECE_ROWS) {
          await out.line(this.drawn(pending, { head: false, last: false }));
          pending = [];
        }
      }
    }
    await out.line(pending.length > 0 ? this.drawn(pending, { head: false, last: true }) : frame.bottom);
  }

  /** Rows drawn by cli-table3 with the fixed widths: the head's piece, or a piece that follows rows. */
  private drawn(rows: string[][], piece: { head: boolean; last: boolean }): string {
    const table = new Table({
      ...(piece.head ? { head: this.head } : {}),
      colWidths: this.widths,
      style: NO_BORDER_COLOURS,
      chars: { ...(piece.head ? {} : CONTINUED_TOP), ...(piece.last ? {} : OPEN_BOTTOM) },
    });
    table.push(...rows);
    return table.toString();
  }

  /** The frame's lines, taken from a table of two empty rows that cli-table3 draws. */
  private frame(): Frame {
    const empty = this.widths.map(() => "");
    const table = new Table({ colWidths: this.widths, style: NO_BORDER_COLOURS });
    table.push(empty, empty);
    const [, row, separator, , bottom] = table.toString().split("\n");
    const edges: string[] = [];
    let at = 0;
    for (const width of this.widths) {
      edges.push(row!.slice(at, at + 1));
      at += 1 + width;
    }
    edges.push(row!.slice(at));
    return { separator: separator!, bottom: bottom!, edges };
  }

  private laidOut(row: string[], frame: Frame): string {
    let line = "";
    for (let i = 0; i < this.widths.length; i++) {
      const text = row[i] ?? "";
      line += `${frame.edges[i]} ${text}${" ".repeat(this.widths[i]! - 2 * PADDING - text.length)} `;
    }
    return line + frame.edges[this.widths.length];
  }
}
