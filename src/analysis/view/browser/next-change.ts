/**
 * The diff page's "next change" control: each press opens the next pair of requests that differ
 * (after the one open, from the first again past the last), and its detail scrolls to the first part
 * or field that differs. The key `n` presses it.
 */
import { el } from "./dom.js";
import { itemsInListOrder } from "./list-rows.js";
import type { PageContext } from "./page-context.js";

/** The pairs that differ, in the list's order (by conversation where the runs name theirs). */
function changed(page: PageContext): number[] {
  const pairs = page.pairs;
  return pairs ? itemsInListOrder(page).filter((i) => !pairs[i].same) : [];
}

/** The pair after `from` in the list that differs, wrapping around; null when none differs. */
function nextChange(page: PageContext, from: number | null): number | null {
  const pairs = page.pairs;
  if (!pairs) return null;
  const differs = (i: number) => !pairs[i].same;
  // The list is laid out once per press; an open pair that does not differ counts by its place too.
  const order = itemsInListOrder(page);
  const place = from === null ? -1 : order.indexOf(from);
  return order.slice(place + 1).find(differs) ?? order.find(differs) ?? null;
}

/** Where the open pair stands among the changes: `change 2 of 5`. */
function position(page: PageContext): string {
  const all = changed(page);
  if (all.length === 0) return "no request differs";
  const at = page.selected === null ? -1 : all.indexOf(page.selected);
  return at < 0 ? `${all.length} differ` : `change ${at + 1} of ${all.length}`;
}

/** The button and its count, for the header; `go` opens a pair. */
export function nextChangeControl(page: PageContext, go: (i: number) => void): { box: HTMLElement; update(): void } {
  const box = el("span", "next-change");
  const button = el("button", "", "next change ↓");
  button.id = "next-change";
  button.title = "open the next pair that differs (key: n)";
  const where = el("span", "muted");
  where.id = "change-at";
  const update = () => {
    where.textContent = position(page);
    button.disabled = changed(page).length === 0;
  };
  button.onclick = () => {
    const next = nextChange(page, page.selected);
    if (next !== null) go(next);
  };
  document.onkeydown = (event) => {
    const target = event.target as HTMLElement | null;
    if (event.key === "n" && !event.ctrlKey && !event.metaKey && !event.altKey && target?.tagName !== "INPUT")
      button.click();
  };
  box.append(button, where);
  update();
  return { box, update };
}
