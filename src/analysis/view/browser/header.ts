/** The page's header: the runs it shows, their sizes, the tokens/bytes switch and the legend. */
import type { ViewMeta } from "../types.js";
import { el, pageElement } from "./dom.js";
import { fmtBytes } from "./measure.js";
import type { PageContext } from "./page-context.js";

const switchLabel = (page: PageContext) => (page.unit === "tokens" ? "show bytes" : "show tokens");

function runFacts(meta: ViewMeta): string {
  const counts = meta.runs
    .map(
      (r) =>
        `${r.requests} requests${r.lost ? ` (${r.lost} more relayed but not recorded)` : ""}` +
        (r.secrets ? ` · ${r.secrets} secrets replaced by markers` : ""),
    )
    .join(" / ");
  return `${counts} · encoding ${meta.encoding} · from ${fmtBytes(meta.rawBytes)} of run files`;
}

function legend(): HTMLElement {
  const box = el("span", "legend");
  for (const [cls, label] of [
    ["tools", "tools"],
    ["system", "system parts"],
    ["messages", "messages"],
    ["hatched", "after the cache prefix break"],
  ]) {
    const l = el("span");
    l.append(el("span", `sw ${cls}`), label);
    box.append(l);
  }
  box.append(el("span", "kind", "sampling / side requests"));
  return box;
}

/** Draws the header afresh; the switch changes `page.unit`, then calls `redraw`. */
export function drawHeader(page: PageContext, redraw: () => void): void {
  const header = pageElement("header");
  header.replaceChildren();
  const title = page.meta.runs.map((r) => r.probe || r.label).join(" vs ");
  header.append(el("h1", "", `payload-probe view · ${title}`));
  header.append(el("span", "facts", runFacts(page.meta)));
  const toggle = el("button", "", switchLabel(page));
  toggle.id = "unit";
  toggle.onclick = () => {
    page.unit = page.unit === "tokens" ? "bytes" : "tokens";
    toggle.textContent = switchLabel(page);
    redraw();
  };
  header.append(toggle, legend());
}
