/** Making and finding the page's elements. */

/** A new element with its class and text (an empty class or no text: none). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A small table of three columns: its heads, then a row per entry, each cell with its column's class. */
export function smallTable(heads: string[], rows: string[][], classes: string[]): HTMLTableElement {
  const table = el("table", "small");
  const head = el("tr");
  for (const h of heads) head.append(el("th", "", h));
  table.append(head);
  for (const cells of rows) {
    const row = el("tr");
    row.append(...cells.map((text, i) => el("td", classes[i], text)));
    table.append(row);
  }
  return table;
}

/** An element the page's HTML always has (src/analysis/view/view-page.ts writes it). */
export function pageElement(selector: string): HTMLElement {
  const found = document.querySelector<HTMLElement>(selector);
  if (!found) throw new Error(`the page has no ${selector}`);
  return found;
}
