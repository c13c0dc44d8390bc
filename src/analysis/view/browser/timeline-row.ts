/** One row of the timeline: a request's stacked bar, its size and its badges, or a diff's pair of them. */
import { el } from "./dom.js";
import type { GroupRow } from "./list-rows.js";
import { fmt, keptOf, parts, total } from "./measure.js";
import type { PageContext } from "./page-context.js";
import type { PageRequest } from "./page-data.js";

/** A row's height in pixels (the stylesheet's `--row`). */
export const ROW = 26;

/** How bars are drawn: pixels per token or byte, and the width of a bar's track. */
export interface BarScale {
  scale: number;
  width: number;
}

function bar(page: PageContext, size: BarScale, r: PageRequest): HTMLElement {
  const track = el("span", "track");
  track.style.width = `${size.width}px`;
  const b = el("span", "bar");
  const [tools, system, messages] = parts(r, page.unit);
  const seg = (cls: string, value: number) => {
    const s = el("span", cls);
    s.style.width = `${value * size.scale}px`;
    b.append(s);
  };
  seg("tools", tools);
  if (r.sp && page.unit === "bytes") for (let i = 0; i < r.sp.length; i++) seg(`system p${i % 2}`, r.sp[i]);
  else seg("system", system);
  seg("messages", messages);
  track.append(b);
  const kept = keptOf(r, page.unit);
  const sum = tools + system + messages;
  if (r.k === "loop" && (r.brk || kept === null || kept < sum)) {
    const after = el("span", "after");
    const from = Math.min(kept ?? 0, sum);
    after.style.left = `${from * size.scale}px`;
    after.style.width = `${Math.max(0, sum - from) * size.scale}px`;
    after.title = r.nc
      ? "new conversation"
      : r.brk
        ? `prefix breaks in ${r.brk[0]}: ${r.brk[1]}`
        : `new since ${r.fr === undefined ? "the previous request" : `#${r.fr}`}`;
    track.append(after);
  }
  return track;
}

function badges(r: PageRequest, into: HTMLElement): void {
  for (const c of r.tc) {
    const t = el("span", "badge tc", c);
    t.title = `${c}: tool-set change against ${r.fr === undefined ? "the previous loop request of its conversation" : `#${r.fr}`}`;
    into.append(t);
  }
  // Each badge says itself whole on hover: a narrow list shows only its start.
  if (r.brk) {
    const b = el("span", "badge brk", `break: ${r.brk[0]}`);
    b.title = `cache prefix breaks in ${r.brk[0]}: ${r.brk[1]}`;
    into.append(b);
  }
  for (const [name, n] of Object.entries(r.mk)) {
    const m = el("span", "badge mk", `${name} ${n}`);
    m.title = `marker ${name}: ${n} match(es)`;
    into.append(m);
  }
}

function requestCells(page: PageContext, size: BarScale, r: PageRequest, into: HTMLElement): void {
  const seq = el("span", "seq", `#${r.s}`);
  into.append(seq);
  if (r.k !== "loop") {
    // Its whole name on hover: a diff's narrow side may shorten the label.
    const kind = el("span", "kind", r.k);
    kind.title = r.k;
    into.append(kind);
  }
  into.append(bar(page, size, r), el("span", "num", fmt(total(r, page.unit), page.unit)));
  badges(r, into);
}

/** Item `i` (a request, or a pair in diff mode) drawn as row `at` of the list, `depth` levels in; a click opens its detail. */
export function rowElement(
  page: PageContext,
  size: BarScale,
  place: { at: number; depth: number },
  i: number,
  open: (i: number) => void,
): HTMLElement {
  const row = el("div", "row");
  row.style.top = `${place.at * ROW}px`;
  row.dataset.index = String(i);
  row.style.paddingLeft = `${8 + place.depth * indentOf(page.pairs !== null)}px`;
  if (page.pairs) {
    const p = page.pairs[i];
    if (!p.same) row.classList.add("differs");
    row.append(el("span", "seq eq", p.same ? "=" : "≠"));
    const box = el("span", "pair");
    for (const side of [p.a, p.b]) {
      const s = el("span", "side");
      if (side >= 0) requestCells(page, size, page.requests[side], s);
      else s.append(el("span", "muted", "— no request —"));
      box.append(s);
    }
    row.append(box);
  } else {
    const r = page.requests[i];
    row.classList.add("req");
    if (r.k !== "loop") row.classList.add("apart");
    requestCells(page, size, r, row);
  }
  if (i === page.selected) row.classList.add("sel");
  row.onclick = () => open(i);
  return row;
}

/** Pixels a conversation beneath another is set in: half as many in a diff, whose rows hold two requests each. */
export const indentOf = (pairs: boolean): number => (pairs ? 7 : 14);

/** A conversation's heading as row `at`: its id, role and size; a click folds or unfolds it. */
export function groupElement(g: GroupRow, at: number, toggle: (id: string) => void): HTMLElement {
  const row = el("div", g.group === "" ? "row group" : `row group ${g.role}`);
  row.style.top = `${at * ROW}px`;
  row.style.paddingLeft = `${8 + g.depth * indentOf(g.pairs)}px`;
  row.dataset.group = g.group;
  row.append(el("span", "fold", g.folded ? "▸" : "▾"));
  if (g.group !== "") row.append(el("span", "conv", g.group));
  row.append(el("span", "role", g.role));
  row.append(el("span", "muted", `${g.own} ${g.pairs ? (g.own === 1 ? "pair" : "pairs") : "req"}`));
  if (g.ownTokens !== null) row.append(el("span", "num", fmt(g.ownTokens, "tokens")));
  const beneath = g.requests - g.own;
  const under = beneath > 0 ? `; with the ${beneath} of the conversations it started, ${g.tokens}` : "";
  const tokens = g.ownTokens === null ? "" : `, ${g.ownTokens} prompt tokens (our count)${under}`;
  const what = g.pairs ? "pair(s) of requests, by run A's conversation" : "request(s)";
  row.title = `${g.own} ${what}${tokens}. Click to ${g.folded ? "unfold" : "fold"}.`;
  row.onclick = () => toggle(g.group);
  return row;
}
