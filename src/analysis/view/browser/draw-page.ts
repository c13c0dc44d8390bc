/**
 * Draws the `view` page from its data: the header, the timeline, and a request's detail on a click.
 * The saved page (page.ts) draws once from the data embedded in it; the live page (live.ts) draws
 * again with each fresh copy of the data, handing over the state the previous drawing returned, so
 * the unit, the selected request and the scroll position survive new requests.
 */
import { drawContextChart } from "./context-chart.js";
import { el, pageElement } from "./dom.js";
import { drawHeader } from "./header.js";
import { markerPatterns } from "./marked-lines.js";
import type { Unit } from "./measure.js";
import { nextChangeControl } from "./next-change.js";
import type { PageContext } from "./page-context.js";
import { Items, readIndex } from "./page-data.js";
import { pairDetail } from "./pair-detail.js";
import { requestDetail } from "./request-detail.js";
import { Timeline, type TimelinePlace } from "./timeline.js";

/** What a drawing hands to the next one. */
export interface PageState extends TimelinePlace {
  unit: Unit;
  selected: number | null;
}

/**
 * The page's data: the two documents' texts, the items perhaps still being read (the saved page unzips
 * them after drawing the index), and the previous drawing's state (the live page's, none the first time).
 */
export interface PageData {
  index: string;
  items: string | Promise<string>;
  state?: PageState | undefined;
}

export interface DrawnPage {
  state(): PageState;
}

const cannotRead = (error: unknown) =>
  `cannot read the page's texts: ${error instanceof Error ? error.message : String(error)}`;

export function drawPage(data: PageData): DrawnPage {
  const before = data.state ?? null;
  const index = readIndex(data.index);
  const detail = pageElement("#detail");
  const page: PageContext = {
    ...index,
    items: new Items(data.items, (error) => detail.replaceChildren(el("p", "muted", cannotRead(error)))),
    markers: markerPatterns(index.meta),
    unit: before?.unit ?? "tokens",
    selected: before?.selected ?? null,
  };
  const openDetail = (i: number, reveal = false): void => {
    page.selected = i;
    if (!page.items.ready(() => openDetail(i, reveal))) {
      detail.replaceChildren(el("p", "muted", "reading the page's texts …"));
      return;
    }
    if (reveal) timeline.reveal(i);
    timeline.select(i);
    chart.select(i);
    changes?.update();
    detail.replaceChildren(page.pairs ? pairDetail(page, page.pairs[i]) : requestDetail(page, page.requests[i]));
    detail.scrollTop = 0;
    // A pair's first change below what the pane shows is scrolled to; one in view leaves the heading in view too.
    const change = page.pairs ? detail.querySelector<HTMLElement>(".first-change") : null;
    if (change && change.getBoundingClientRect().top > detail.getBoundingClientRect().bottom - 60)
      change.scrollIntoView({ block: "start" });
  };
  drawHeader(page, () => {
    timeline.rescale();
    timeline.draw(true);
    if (page.selected !== null) openDetail(page.selected);
  });
  const changes = page.pairs ? nextChangeControl(page, (i) => openDetail(i, true)) : null;
  if (changes) pageElement("#unit").after(changes.box);
  const timeline = new Timeline(page, pageElement("#timeline"), openDetail);
  const chart = drawContextChart(page, (i) => openDetail(i, true));
  if (page.pairs) document.body.classList.add("diff");
  // Live: a view scrolled to its end follows new requests; the open detail stays (requests only grow).
  if (before) timeline.restore(before);
  timeline.rescale();
  timeline.draw(true);
  window.onresize = () => {
    timeline.rescale();
    timeline.draw(true);
  };
  if (page.selected === null) detail.replaceChildren(el("p", "muted", "Click a request to see what it sent."));
  // The first frame with the timeline in it: scripts/bench-view.mjs reads this mark.
  requestAnimationFrame(() => {
    document.body.dataset.ready = "1";
    performance.mark("view-ready");
  });
  return { state: () => ({ unit: page.unit, selected: page.selected, ...timeline.place() }) };
}
