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
 * (test/analysis/table/table-output.test.ts holds it against cli-table3).
 *
 * Fitted to a narrow terminal, a table first takes the narrowing steps it names (a column left out or
 * shortened, least important first) and breaks the cells of its wrapping columns onto more lines;
 * only then are text columns cut with …, and figures never.
 */
import Table from "cli-table3";
// cli-table3 sizes a column by strlen (display width, colour codes left out); measuring with the same
// one keeps every column exactly as wide as the library alone would make it.
import { strlen } from "cli-table3/src/utils.js";
import { printable } from "../../text/terminal-text.js";
import { wrapLine } from "../../text/text-wrap.js";
import type { LineWriter } from "./output.js";
import { fitWidths } from "./table-fit.js";
import { type Narrowed, PLAIN_LOOK, paint, type TableLook, type Tone } from "./table-style.js";

export type TableCell = string | number;
export type Align = "left" | "right";

export interface TableOptions {
  /** Per column; a right-aligned column holds figures and is never cut when the table is fitted. */
  align?: Align[];
  /** Width (borders included; null draws every cell whole) and colour (the head, and cells `tone` picks). */
  look?: TableLook;
  tone?: (row: string[], column: number) => Tone | null;
  /**
   * How the table gives way when it is wider than the look allows, one step at a time in this order
   * (least important first) until it fits, before any cell is cut: a column is left out, or shown in
   * its short form. `tone` still sees the whole row with every column in its place.
   */
  narrow?: NarrowStep[];
  /** Per column: a cell wider than its column is broken onto more lines (between words), not cut. */
  wrap?: boolean[];
}

export interface NarrowStep {
  /** The column's index in the head. */
  column: number;
  /**
   * Its short form: a head, each cell's text shortened, and what a legend says of it (`tools as a
   * count`); without one the column is left out.
   */
  short?: { head: string; cell: (text: string) => string; note: string };
}

/** A column that wraps asks for no more than this before the steps stop: room for a phrase or two a line. */
const WRAP_ROOM = 36;

/** The columns shown, in order, with their heads, short forms and widths once the table is fitted. */
interface Layout {
  columns: number[];
  head: string[];
  widths: number[];
  align: Align[];
  short: Map<number, (text: string) => string>;
  narrowed: Narrowed;
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

/** The display width of a cell's text; plain text is measured by its length, as push measures it. */
const measure = (text: string) => (PLAIN.test(text) ? text.length : strlen(text));

/** No rule between rows: the head's rule and the bottom border are the only lines across. */
const STYLE = { head: [], border: [], compact: true };
const NO_TOP = { top: "", "top-left": "", "top-mid": "", "top-right": "" };
/** An empty line is not drawn, so a piece that is not the last ends at its last row. */
const OPEN_BOTTOM = { bottom: "", "bottom-left": "", "bottom-mid": "", "bottom-right": "" };
/** The head's piece ends with the rule cli-table3 draws under a head. */
const HEAD_RULE = { bottom: "─", "bottom-left": "├", "bottom-mid": "┼", "bottom-right": "┤" };

/** Cells broken into lines, as rows of one line each: the k-th line of every cell (empty past its last). */
function lineByLine(texts: string[]): string[][] {
  const cells = texts.map((text) => text.split("\n"));
  const height = Math.max(...cells.map((lines) => lines.length));
  return Array.from({ length: height }, (_, k) => cells.map((lines) => lines[k] ?? ""));
}

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
  private fitted: Layout | null = null;

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

  /** The columns the look's width left out or shortened (none when it allows the whole table). */
  narrowed(): Narrowed {
    return this.layout().narrowed;
  }

  async write(out: LineWriter): Promise<void> {
    const layout = this.layout();
    const rows = this.rows;
    await out.styledLine(this.drawn(layout, [], { head: true, last: rows.length === 0 }));
    if (rows.length === 0) return;
    const frame = this.frame(layout);
    let pending: string[][] = [];
    const drawPending = async (last: boolean) => {
      if (pending.length > 0) await out.styledLine(this.drawn(layout, pending, { head: false, last }));
      pending = [];
    };
    for (const row of rows) {
      const shown = this.shownCells(layout, row);
      if (shown.plain) {
        await drawPending(false);
        for (const texts of shown.wrapped ? lineByLine(shown.texts) : [shown.texts])
          await out.styledLine(this.laidOut(layout, row.texts, texts, frame));
      } else {
        pending.push(this.painted(layout, row.texts, shown.texts));
        if (pending.length === PIECE_ROWS) await drawPending(false);
      }
    }
    if (pending.length > 0) await drawPending(true);
    else await out.styledLine(frame.bottom);
  }

  private layout(): Layout {
    this.fitted ??= this.fit();
    return this.fitted;
  }

  /**
   * The table at the look's width: the narrowing steps taken while it is too wide (a wrapping column
   * counted at most WRAP_ROOM wide), then the text columns narrowed so it is at most that wide;
   * figures stay whole.
   */
  private fit(): Layout {
    const max = this.look.maxWidth;
    const room = max ?? Number.POSITIVE_INFINITY;
    const widths = [...this.widths];
    let columns = this.head.map((_, i) => i);
    const short = new Map<number, (text: string) => string>();
    const heads = [...this.head];
    const left: string[] = [];
    const notes = new Map<number, string>();
    const wanted = () =>
      columns.reduce((sum, i) => sum + (this.options.wrap?.[i] ? Math.min(widths[i]!, WRAP_ROOM) : widths[i]!), 0);
    for (const step of this.options.narrow ?? []) {
      if (wanted() + columns.length + 1 <= room) break;
      const i = step.column;
      if (step.short) {
        short.set(i, step.short.cell);
        heads[i] = step.short.head;
        widths[i] = this.widthOf(i, step.short);
        notes.set(i, step.short.note);
      } else {
        columns = columns.filter((c) => c !== i);
        notes.delete(i);
        left.push(this.head[i]!);
      }
    }
    const shownWidths = columns.map((i) => widths[i]!);
    const align = columns.map((i) => this.align[i]!);
    const fitted =
      max === null
        ? shownWidths
        : fitWidths(
            shownWidths,
            align.map((a) => a === "left"),
            max - columns.length - 1,
          );
    const narrowed = { left, shortened: [...notes.values()] };
    return { columns, head: columns.map((i) => heads[i]!), widths: fitted, align, short, narrowed };
  }

  /** A column's width in its short form. */
  private widthOf(column: number, short: NonNullable<NarrowStep["short"]>): number {
    let width = strlen(short.head);
    for (const { texts } of this.rows) width = Math.max(width, measure(short.cell(texts[column]!)));
    return width + 2 * PADDING;
  }

  /**
   * A row's cells as the layout shows them; a cell of a wrapping column too wide for it is broken into
   * lines (`wrapped`: a plain row so broken is still laid out here, a line at a time).
   */
  private shownCells(
    layout: Layout,
    row: { texts: string[]; plain: boolean },
  ): { texts: string[]; plain: boolean; wrapped: boolean } {
    let plain = row.plain;
    let wrapped = false;
    const texts = layout.columns.map((i, at) => {
      const shorten = layout.short.get(i);
      let text = shorten ? shorten(row.texts[i]!) : row.texts[i]!;
      if (shorten) plain &&= PLAIN.test(text);
      const room = layout.widths[at]! - 2 * PADDING;
      if (this.options.wrap?.[i] && measure(text) > room) {
        text = text
          .split("\n")
          .flatMap((line) => wrapLine(line, room))
          .join("\n");
        wrapped = true;
      }
      return text;
    });
    return { texts, plain, wrapped };
  }

  private tone(layout: Layout, row: string[], at: number): Tone | null {
    return this.options.tone!(row, layout.columns[at]!);
  }

  private painted(layout: Layout, row: string[], texts: string[]): string[] {
    if (!this.look.colour || !this.options.tone) return texts;
    return texts.map((text, at) => paint(text, this.tone(layout, row, at)));
  }

  /** Rows drawn by cli-table3 with the fixed widths: the head's piece, or a piece that follows rows. */
  private drawn(layout: Layout, rows: string[][], piece: { head: boolean; last: boolean }): string {
    const head = this.look.colour ? layout.head.map((text) => paint(text, "bold")) : layout.head;
    const bottom = piece.last ? {} : piece.head ? HEAD_RULE : OPEN_BOTTOM;
    const table = new Table({
      ...(piece.head ? { head } : {}),
      colWidths: layout.widths,
      colAligns: layout.align,
      style: STYLE,
      chars: { ...(piece.head ? {} : NO_TOP), ...bottom },
    });
    table.push(...rows);
    return table.toString();
  }

  /** The frame's lines, taken from a table of one empty row that cli-table3 draws. */
  private frame(layout: Layout): Frame {
    const table = new Table({ colWidths: layout.widths, style: STYLE });
    table.push(layout.widths.map(() => ""));
    const [, row, bottom] = table.toString().split("\n");
    const edges: string[] = [];
    let at = 0;
    for (const width of layout.widths) {
      edges.push(row!.slice(at, at + 1));
      at += 1 + width;
    }
    edges.push(row!.slice(at));
    return { bottom: bottom!, edges };
  }

  private laidOut(layout: Layout, row: string[], texts: string[], frame: Frame): string {
    let line = "";
    for (let at = 0; at < layout.widths.length; at++) {
      const room = layout.widths[at]! - 2 * PADDING;
      let text = texts[at] ?? "";
      if (text.length > room) text = `${text.slice(0, room - 1)}…`;
      const gap = " ".repeat(room - text.length);
      const shown = this.look.colour && this.options.tone ? paint(text, this.tone(layout, row, at)) : text;
      line += `${frame.edges[at]} ${layout.align[at] === "right" ? gap + shown : shown + gap} `;
    }
    return line + frame.edges[layout.widths.length];
  }
}
