/**
 * The `view` page: one HTML file that works offline. Its stylesheet and script (the browser code of
 * src/analysis/view/browser/, bundled into one file by the build) are inline, the run's data is
 * embedded as JSON in `<script type="application/json">` elements (view-data.ts), and a
 * Content-Security-Policy admits exactly those two inline blocks by hash and nothing from any
 * network (CSP Level 3, `default-src 'none'` with hash sources), so the page cannot load anything.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../project-root.js";
import type { RequestDiff } from "../diff/diff.js";
import type { RunSource } from "../load-run.js";
import { FileSink, type ViewDataOptions, writeViewData } from "./view-data.js";
import { PAGE_STYLE } from "./view-page-style.js";

/**
 * The page's scripts as scripts/bundle.mjs bundled them from src/analysis/view/browser/ (`page` for
 * the saved page, `live` for the live view), each read once, when first needed: inlined as they are,
 * so the CSP hash is the hash of the file.
 */
const scripts = new Map<"page" | "live", string>();

function pageScript(name: "page" | "live"): string {
  let text = scripts.get(name);
  if (text === undefined) {
    const file = join(PROJECT_ROOT, "dist", "view", `${name}.js`);
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new Error(`cannot read the view page's script ${file}: build it with ./run.sh --version`, { cause: error });
    }
    scripts.set(name, text);
  }
  return text;
}

const cspHash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/**
 * The page up to its data: `script` is the one inline script the CSP admits, and `connect` what the
 * page may fetch (nothing for the saved page; its own server for the live view).
 */
function pageTop(title: string, script: string, connect = ""): string {
  // The script is inlined as it is: it must never hold the sequence that would close its element.
  if (/<\/script/i.test(script)) throw new Error("the view page script contains </script");
  const csp = `default-src 'none'; script-src ${cspHash(script)}; style-src ${cspHash(PAGE_STYLE)};${connect} base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head><body><header></header><section id="context-chart"></section><main><div id="timeline"></div><div id="detail"></div></main>
`;
}

const pageHead = (title: string) =>
  `${pageTop(title, pageScript("page"))}<script type="application/json" id="view-index">`;

/**
 * The live view's page (live-view.ts): the same stylesheet and drawing code as the saved
 * page, without data; its script fetches `data.json` from the server that served it, and nothing else.
 */
export function livePage(title: string): string {
  const script = pageScript("live");
  return `${pageTop(title, script, " connect-src 'self';")}<script>${script}</script>\n</body></html>\n`;
}

/** The script comes right after the index and before the items, so it draws before the items are read. */
const between = () =>
  `</script>\n<script>${pageScript("page")}</script>\n<script type="application/json" id="view-items">`;
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
    writeViewData(out, sources, pairs, options, between());
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

/**
 * The data of one run as the live view serves it, written to `path`: `[<index>\n,\n<items>]`, the
 * two documents of the page's layout (view-data.ts) as one JSON array. Returns its size in bytes.
 */
export function writeLiveData(path: string, source: RunSource, options: ViewDataOptions): number {
  const out = new FileSink(path);
  try {
    out.write("[");
    writeViewData(out, [source], null, options, "\n,\n");
    out.write("]");
  } finally {
    out.close();
  }
  return out.bytes;
}
