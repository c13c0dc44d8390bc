/**
 * The `view` page: one HTML file that works offline. Its stylesheet and script are inline, the run's
 * data is embedded as JSON in `<script type="application/json">` elements (view-data.ts), and a
 * Content-Security-Policy admits exactly those two inline blocks by hash and nothing from any
 * network (CSP Level 3, `default-src 'none'` with hash sources), so the page cannot load anything.
 */
import { createHash } from "node:crypto";
import { renameSync, rmSync } from "node:fs";
import type { RequestDiff } from "./diff.js";
import type { RunSource } from "./load-run.js";
import { FileSink, type ViewDataOptions, writeViewData } from "./view-data.js";
import { PAGE_SCRIPT } from "./view-page-script.js";
import { PAGE_STYLE } from "./view-page-style.js";

const cspHash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

function pageHead(title: string): string {
  // The script is inlined as it is: it must never hold the sequence that would close its element.
  if (/<\/script/i.test(PAGE_SCRIPT)) throw new Error("the view page script contains </script");
  const csp = `default-src 'none'; script-src ${cspHash(PAGE_SCRIPT)}; style-src ${cspHash(PAGE_STYLE)}; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head><body><header></header><main><div id="timeline"></div><div id="detail"></div></main>
<script type="application/json" id="view-index">`;
}

/** The script comes right after the index and before the items, so it draws before the items are read. */
const BETWEEN = `</script>\n<script>${PAGE_SCRIPT}</script>\n<script type="application/json" id="view-items">`;
const PAGE_TAIL = "</script>\n</body></html>\n";

/**
 * Writes the page of one run, or of two runs aligned by `pairs` (diff mode), to `path`. The file
 * is written next to its final name and renamed when complete, so a failed run leaves no half page.
 */
export function writeViewPage(
  path: string,
  sources: RunSource[],
  pairs: Iterable<RequestDiff> | null,
  options: ViewDataOptions,
): number {
  const partial = `${path}.partial`;
  const out = new FileSink(partial);
  try {
    out.write(pageHead(`payload-probe view · ${sources.map((s) => s.label).join(" vs ")}`));
    writeViewData(out, sources, pairs, options, BETWEEN);
    out.write(PAGE_TAIL);
    out.close();
  } catch (error) {
    out.close();
    // Only the files this call created: the partial page and the side files view-data writes beside it.
    for (const file of [partial, `${partial}.requests`, `${partial}.items`]) rmSync(file, { force: true });
    throw error;
  }
  renameSync(partial, path);
  return out.bytes;
}
