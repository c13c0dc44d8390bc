/**
 * The saved page's script (src/analysis/view/view-page.ts inlines its bundle): draws from the data
 * embedded in the page, gzip'd. It runs between the request index and the items, so the timeline is
 * drawn from the index while the browser is still reading and unzipping the items.
 */
import { el, pageElement } from "./dom.js";
import { drawPage } from "./draw-page.js";
import { unzipBlock } from "./page-data.js";

/** The items' block is whole once the parser is past it. */
const parsed = new Promise<void>((resolve) => {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
  else resolve();
});

const cannot = (error: unknown) =>
  pageElement("#detail").replaceChildren(
    el(
      "p",
      "muted",
      `This browser cannot read the page's data, which are gzip'd (DecompressionStream: Chrome 80, ` +
        `Firefox 113, Safari 16.4 or later): ${error instanceof Error ? error.message : String(error)}`,
    ),
  );

const items = parsed.then(() => unzipBlock("#view-items"));
unzipBlock("#view-index").then(
  (index) => drawPage({ index, items }),
  (error: unknown) => {
    // The items fail for the same reason: said once.
    items.catch(() => undefined);
    cannot(error);
  },
);
