/**
 * The session by source: a column per request, stacked by source group (view-data.ts, `g`), the
 * largest group of the session at the bottom, scaled to the largest request; a legend beneath. Past
 * MAX_COLUMNS requests a column stands for a run of neighbours, each group at its mean over them, so
 * the chart stays a few thousand elements whatever the run's length. A click opens the request (the
 * first of its run). Drawn only for one run: two runs side by side have their own detail.
 */
import { el, pageElement } from "./dom.js";
import type { PageContext } from "./page-context.js";

const MAX_COLUMNS = 400;
/**
 * Colours for the groups, largest first, none of the list's tools/system/messages colours (a group is
 * not a part); the groups past them are summed as "other".
 */
const COLOURS = ["#76b7b2", "#e15759", "#b07aa1", "#edc948", "#9c755f", "#ff9da7", "#17becf", "#393b79", "#bcbd22"];
const OTHER = "#bab0ac";

interface Column {
  /** The places in `page.requests` of its first and last request. */
  first: number;
  last: number;
  label: string;
  tokens: number[];
}

/** Each column's tokens by shown group (the chart's order), summed over its requests then divided by their number. */
function columns(page: PageContext, order: number[]): Column[] {
  const counted = page.requests.map((r, i) => ({ r, i })).filter(({ r }) => r.g !== undefined);
  const per = Math.ceil(counted.length / MAX_COLUMNS);
  const shown = Math.min(order.length, COLOURS.length);
  const out: Column[] = [];
  for (let at = 0; at < counted.length; at += per) {
    const run = counted.slice(at, at + per);
    const tokens = new Array<number>(shown + 1).fill(0);
    for (const { r } of run)
      order.forEach((group, k) => {
        tokens[Math.min(k, shown)]! += (r.g![group] ?? 0) / run.length;
      });
    const seqs = run.length === 1 ? `#${run[0]!.r.s}` : `#${run[0]!.r.s}–#${run.at(-1)!.r.s} (mean)`;
    out.push({ first: run[0]!.i, last: run.at(-1)!.i, label: seqs, tokens });
  }
  return out;
}

/** The groups' places in `meta.groups`, largest over the session first. */
function groupOrder(page: PageContext): number[] {
  const total = page.meta.groups.map(() => 0);
  for (const r of page.requests)
    r.g?.forEach((n, k) => {
      total[k]! += n;
    });
  return total.map((_, k) => k).sort((a, b) => total[b]! - total[a]!);
}

function legend(page: PageContext, order: number[]): HTMLElement {
  const box = el("div", "legend ctx-legend");
  const names = order.slice(0, COLOURS.length).map((k) => page.meta.groups[k]!);
  if (order.length > COLOURS.length) names.push("other");
  names.forEach((name, k) => {
    const item = el("span", "ctx-key");
    const swatch = el("span", "sw");
    swatch.style.background = COLOURS[k] ?? OTHER;
    item.append(swatch, name);
    box.append(item);
  });
  return box;
}

/** The drawn chart: `select` marks the column that holds request `i` (the open detail's). */
export interface ContextChart {
  select(i: number): void;
}

export function drawContextChart(page: PageContext, open: (i: number) => void): ContextChart {
  const box = pageElement("#context-chart");
  box.replaceChildren();
  if (page.pairs || !page.requests.some((r) => r.g)) {
    box.hidden = true;
    return { select: () => {} };
  }
  box.hidden = false;
  const order = groupOrder(page);
  const cols = columns(page, order);
  const highest = Math.max(1, ...cols.map((c) => c.tokens.reduce((a, n) => a + n, 0)));
  const chart = el("div", "ctx-chart");
  for (const c of cols) {
    const column = el("div", "ctx-col");
    const total = c.tokens.reduce((a, n) => a + n, 0);
    column.title = `${c.label} · ${Math.round(total)} tok`;
    column.style.height = `${(100 * total) / highest}%`;
    c.tokens.forEach((n, k) => {
      if (n <= 0) return;
      const part = el("span");
      part.dataset.group = String(k);
      part.style.flex = `${n} 1 0`;
      part.style.background = COLOURS[k] ?? OTHER;
      column.append(part);
    });
    column.onclick = () => open(c.first);
    chart.append(column);
  }
  const select = (i: number) => {
    chart.querySelector(".ctx-col.sel")?.classList.remove("sel");
    const held = cols.findIndex((c) => c.first <= i && i <= c.last);
    if (held >= 0) chart.children[held]!.classList.add("sel");
  };
  if (page.selected !== null) select(page.selected);
  box.append(
    el(
      "div",
      "ctx-title",
      "context by source · tokens per request, largest group at the bottom · a click opens the request",
    ),
    chart,
    legend(page, order),
  );
  return { select };
}
