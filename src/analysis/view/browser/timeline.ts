/** The timeline: a virtualised list, in which only the rows on screen (and a few around) exist in the DOM. */
import { el } from "./dom.js";
import { parts } from "./measure.js";
import type { PageContext } from "./page-context.js";
import { type BarScale, ROW, rowElement } from "./timeline-row.js";

/** Rows drawn beyond each edge of the screen, so a short scroll shows rows already there. */
const OVERSCAN = 12;

/** Where the reader was, for the next drawing of a live page. */
export interface TimelinePlace {
  scrollTop: number;
  /** Scrolled to the end: the next drawing follows new requests. */
  atEnd: boolean;
}

export class Timeline {
  private readonly spacer = el("div", "spacer");
  private readonly count: number;
  private readonly size: BarScale;
  private drawn = { from: -1, to: -1 };
  private pending = false;

  constructor(
    private readonly page: PageContext,
    private readonly element: HTMLElement,
    private readonly open: (i: number) => void,
  ) {
    element.replaceChildren(this.spacer);
    this.count = page.pairs ? page.pairs.length : page.requests.length;
    this.spacer.style.height = `${this.count * ROW}px`;
    this.size = { scale: 1, width: page.pairs ? 150 : 300 };
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

  /** Fits the largest request to the bars' width, in the page's unit. */
  rescale(): void {
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
    const to = Math.min(this.count, Math.ceil((scrollTop + clientHeight) / ROW) + OVERSCAN);
    if (!force && from === this.drawn.from && to === this.drawn.to) return;
    this.drawn = { from, to };
    const rows: HTMLElement[] = [];
    for (let i = from; i < to; i++) rows.push(rowElement(this.page, this.size, i, this.open));
    this.spacer.replaceChildren(...rows);
  }

  /** Marks row `i` as the selected one among those drawn. */
  select(i: number): void {
    for (const row of this.spacer.children)
      row.classList.toggle("sel", Number((row as HTMLElement).dataset.index) === i);
  }

  place(): TimelinePlace {
    const { scrollTop, clientHeight, scrollHeight } = this.element;
    return { scrollTop, atEnd: scrollTop + clientHeight >= scrollHeight - ROW };
  }

  /** Back where the previous drawing was; at the end still if it was there, to follow new requests. */
  restore(place: TimelinePlace): void {
    this.element.scrollTop = place.atEnd ? this.element.scrollHeight : place.scrollTop;
  }
}
