/**
 * A cli-table3 table of any length, in time linear in its rows, fitted to a width.
 *
 * cli-table3 0.6.5 lays a table out in time quadratic in its rows (layout-manager.js `fillInTable`
 * checks every cell against every cell above it for spans: 5,000 report rows took 12 s) and passes
 * all rows as the arguments of one call (`push.apply` in table.js: a RangeError from about 120,000
 * rows). Drawn a few rows at a time with fixed widths it is linear, but still spends about 100 µs
 * on a row (it builds string-width's regular expressions anew for every measure of every cell).
 *
 * So the rows are gathered with the width of every column, cli-table3 draws the head and the
 * border lines for those fixed widths, and a row of plain one-line cells is laid into that frame
 * the way cli-table3 lays it (one space, the text cut with … to the width, padded on the side its
 * alignment says, one space). A row with anything else in it (a line break, a colour code, a wide
 * character) is drawn by cli-table3 itself, as a piece stitched in at its borders. Either way the
 * output is byte for byte one compact cli-table3 table of all rows with the same column widths
 * (test/analysis/table-output.test.ts holds it against cli-table3).
 */
import Table from "cli-table3";
// cli-table3 sizes a column by strlen (display width, colour codes left out); measuring with the same
// one keeps every column exactly as wide as the library alone would make it.
import { strlen } from "cli-table3/src/utils.js";
import { printable } from "../terminal-text.js";
import type { LineWriter } from "./output.js";
import { fitWidths } from "./table-fit.js";
import { PLAIN_LOOK, paint, type TableLook, type Tone } from "./table-style.js";

export type TableCell = string | number;
export type Align = "left" | "right";

export interface TableOptions {
  /** Per column; a right-aligned column holds figures and is never cut when the table is fitted. */
  align?: Align[];
  /** Width (borders included; null draws every cell whole) and colour (the head, and cells `tone` picks). */
  look?: TableLook;
  tone?: (row: string[], column: number) => Tone | null;
}

/** The padding cli-table3 puts on either side of a cell's text. */
const PADDING = 1;
/** Rows of one piece cli-table3 draws; its layout cost per row grows with the piece. */
const PIECE_ROWS = 16;
/**
 * Text whose display width is its length: printable ASCII and Latin-1, and the dash, ellipsis and
 * quotes our cells use. No line break, colour code, combining or wide character.
 */
const PLAIN = /^[\x20-\x7e\xa0-\xff\u2013\u2014\u2018\u2019\u201c\u201d\u2026]*$/;

/** No rule between rows: the head's rule and the bottom border are the only lines across. */
const STYLE = { head: [], border: [], compact: true };
const NO_TOP = { top: "", "top-left": "", "top-mid": "", "top-right": "" };
/** An empty line is not drawn, so a piece that is not the last ends at its last row. */
const OPEN_BOTTOM = { bottom: "", "bottom-left": "", "bottom-mid": "", "bottom-right": "" };
/** The head's piece ends with the rule cli-table3 draws under a head. */
const HEAD_RULE = { bottom: "─", "bottom-left": "├", "bottom-mid": "┼", "bottom-right": "┤" };

interface Frame {
  bottom: string;
  /** The vertical border before each column, and the one after the last. */
  edges: string[];
}

export class TableOutput {
  private readonly rows: { texts: string[]; plain: boolean }[] = [];
  private readonly widths: number[];
  private readonly align: Align[];
  private readonly look: TableLook;

  constructor(
    private readonly head: string[],
    private readonly options: TableOptions = {},
  ) {
    this.widths = head.map((text) => strlen(text) + 2 * PADDING);
    this.align = head.map((_, i) => options.align?.[i] ?? "left");
    this.look = options.look ?? PLAIN_LOOK;
  }

  push(cells: TableCell[]): void {
    // Cells are made printable here, before any colour of ours is painted around them.
    const texts = cells.map((cell) => printable(String(cell), { lines: true }));
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
    const { maxWidth } = this.look;
    if (maxWidth !== null) this.fit(maxWidth);
    const rows = this.rows;
    await out.styledLine(this.drawn([], { head: true, last: rows.length === 0 }));
    if (rows.length === 0) return;
    const frame = this.frame();
    let pending: string[][] = [];
    const drawPending = async (last: boolean) => {
      if (pending.length > 0) await out.styledLine(this.drawn(pending, { head: false, last }));
      pending = [];
    };
    for (const { texts, plain } of rows) {
      if (plain) {
        await drawPending(false);
        await out.styledLine(this.laidOut(texts, frame));
      } else {
        pending.push(this.painted(texts));
        if (pending.length === PIECE_ROWS) await drawPending(false);
      }
    }
    if (pending.length > 0) await drawPending(true);
    else await out.styledLine(frame.bottom);
  }

  /** Narrows the text columns so the table is at most `maxWidth` wide; figures stay whole. */
  private fit(maxWidth: number): void {
    const borders = this.widths.length + 1;
    const fitted = fitWidths(
      this.widths,
      this.align.map((a) => a === "left"),
      maxWidth - borders,
    );
    fitted.forEach((width, i) => {
      this.widths[i] = width;
    });
  }

  private painted(texts: string[]): string[] {
    if (!this.look.colour || !this.options.tone) return texts;
    return texts.map((text, i) => paint(text, this.options.tone!(texts, i)));
  }

  /** Rows drawn by cli-table3 with the fixed widths: the head's piece, or a piece that follows rows. */
  private drawn(rows: string[][], piece: { head: boolean; last: boolean }): string {
    const head = this.look.colour ? this.head.map((text) => paint(text, "bold")) : this.head;
    const bottom = piece.last ? {} : piece.head ? HEAD_RULE : OPEN_BOTTOM;
    const table = new Table({
      ...(piece.head ? { head } : {}),
      colWidths: this.widths,
      colAligns: this.align,
      style: STYLE,
      chars: { ...(piece.head ? {} : NO_TOP), ...bottom },
    });
    table.push(...rows);
    return table.toString();
  }

  /** The frame's lines, taken from a table of one empty row that cli-table3 draws. */
  private frame(): Frame {
    const table = new Table({ colWidths: this.widths, style: STYLE });
    table.push(this.widths.map(() => ""));
    const [, row, bottom] = table.toString().split("\n");
    const edges: string[] = [];
    let at = 0;
    for (const width of this.widths) {
      edges.push(row!.slice(at, at + 1));
      at += 1 + width;
    }
    edges.push(row!.slice(at));
    return { bottom: bottom!, edges };
  }

  private laidOut(row: string[], frame: Frame): string {
    let line = "";
    for (let i = 0; i < this.widths.length; i++) {
      const room = this.widths[i]! - 2 * PADDING;
      let text = row[i] ?? "";
      if (text.length > room) text = `${text.slice(0, room - 1)}…`;
      const gap = " ".repeat(room - text.length);
      const shown = this.look.colour && this.options.tone ? paint(text, this.options.tone(row, i)) : text;
      line += `${frame.edges[i]} ${this.align[i] === "right" ? gap + shown : shown + gap} `;
    }
    return line + frame.edges[this.widths.length];
  }
}
