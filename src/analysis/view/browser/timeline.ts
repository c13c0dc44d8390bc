/**
 * The request list: a virtualised list, in which only the rows on screen (and a few around) exist in
 * the DOM. Its rows are list-rows.ts's: conversations' headings and their requests, or a diff's pairs.
 */
import { el } from "./dom.js";
import { isGroup, type ListRow, listRows } from "./list-rows.js";
import { parts } from "./measure.js";
import type { PageContext } from "./page-context.js";
import { type BarScale, groupElement, indentOf, ROW, rowElement } from "./timeline-row.js";

/** Rows drawn beyond each edge of the screen, so a short scroll shows rows already there. */
const OVERSCAN = 12;

/** Where the reader was, for the next drawing of a live page. */
export interface TimelinePlace {
  scrollTop: number;
  /** Scrolled to the end: the next drawing follows new requests. */
  atEnd: boolean;
  /** The conversations whose heading is folded. */
  folded: string[];
}

/**
 * What a row holds besides its bar, in pixels: the padding, the seq and size columns and the gaps
 * between them (timeline-row.ts and the stylesheet), so the bar takes what the list's width leaves.
 */
const ROW_TEXT = 150;
/** A pair's row: its padding, its `=` and the gaps around the two sides; then each side's seq, size, gaps and room for a badge. */
const PAIR_ROW = 44;
const PAIR_SIDE = 150;

export class Timeline {
  private readonly spacer = el("div", "spacer");
  private readonly size: BarScale;
  private rows: ListRow[] = [];
  private folded = new Set<string>();
  private drawn = { from: -1, to: -1 };
  private pending = false;

  constructor(
    private readonly page: PageContext,
    private readonly element: HTMLElement,
    private readonly open: (i: number) => void,
  ) {
    element.replaceChildren(this.spacer);
    this.size = { scale: 1, width: 0 };
    this.layout();
    // A property, not a listener: a live redraw replaces the previous drawing's handler.
    element.onscroll = () => {
      if (this.pending) return;
      this.pending = true;
      requestAnimationFrame(() => {
        this.pending = false;
        this.draw(false);
      });
    };
  }

  private layout(): void {
    this.rows = listRows(this.page, this.folded);
    this.spacer.style.height = `${this.rows.length * ROW}px`;
  }

  /** Fits the largest request to the bars' width, in the page's unit; the width follows the list's. */
  rescale(): void {
    const width = this.element.clientWidth;
    const indent = this.rows.reduce((d, row) => Math.max(d, row.depth), 0) * indentOf(this.page.pairs !== null);
    this.size.width = this.page.pairs
      ? Math.max(12, Math.min(150, (width - PAIR_ROW - indent) / 2 - PAIR_SIDE))
      : Math.max(40, Math.min(300, width - ROW_TEXT - indent));
    let m = 1;
    for (const r of this.page.requests)
      m = Math.max(
        m,
        parts(r, this.page.unit).reduce((a, b) => a + b, 0),
      );
    this.size.scale = this.size.width / m;
  }

  /** Draws the rows on screen; unless `force`, only when they are not the ones drawn already. */
  draw(force: boolean): void {
    const { scrollTop, clientHeight } = this.element;
    const from = Math.max(0, Math.floor(scrollTop / ROW) - OVERSCAN);
    const to = Math.min(this.rows.length, Math.ceil((scrollTop + clientHeight) / ROW) + OVERSCAN);
    if (!force && from === this.drawn.from && to === this.drawn.to) return;
    this.drawn = { from, to };
    const drawn: HTMLElement[] = [];
    for (let at = from; at < to; at++) {
      const row = this.rows[at];
      drawn.push(
        isGroup(row)
          ? groupElement(row, at, (id) => this.toggle(id))
          : rowElement(this.page, this.size, { at, depth: row.depth }, row.item, this.open),
      );
    }
    this.spacer.replaceChildren(...drawn);
  }

  private toggle(id: string): void {
    if (!this.folded.delete(id)) this.folded.add(id);
    this.layout();
    this.draw(true);
  }

  /** Marks item `i` as the selected one among the rows drawn. */
  select(i: number): void {
    for (const row of this.spacer.children)
      row.classList.toggle("sel", (row as HTMLElement).dataset.index === String(i));
  }

  /** Scrolls item `i`'s row into view, unfolding the conversation that hides it. */
  reveal(i: number): void {
    let at = this.rows.findIndex((row) => !isGroup(row) && row.item === i);
    if (at < 0 && this.folded.size > 0) {
      this.folded.clear();
      this.layout();
      at = this.rows.findIndex((row) => !isGroup(row) && row.item === i);
    }
    if (at < 0) return;
    const top = at * ROW;
    const { scrollTop, clientHeight } = this.element;
    if (top < scrollTop || top + ROW > scrollTop + clientHeight)
      this.element.scrollTop = Math.max(0, top - clientHeight / 2);
    this.draw(true);
  }

  place(): TimelinePlace {
    const { scrollTop, clientHeight, scrollHeight } = this.element;
    return { scrollTop, atEnd: scrollTop + clientHeight >= scrollHeight - ROW, folded: [...this.folded] };
  }

  /** Back where the previous drawing was; at the end still if it was there, to follow new requests. */
  restore(place: TimelinePlace): void {
    this.folded = new Set(place.folded);
    this.layout();
    this.element.scrollTop = place.atEnd ? this.element.scrollHeight : place.scrollTop;
  }
}
