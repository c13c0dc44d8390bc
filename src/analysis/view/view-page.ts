/**
 * The `view` page: one HTML file that works offline. Its stylesheet and script (the browser code of
 * src/analysis/view/browser/, bundled into one file by the build) are inline, the run's data (the two
 * JSON documents of view-data.ts) are embedded gzip'd, in base64, in `<script type="application/gzip">`
 * data blocks, which the page's script unzips with the browser's DecompressionStream; and a
 * Content-Security-Policy admits exactly the inline style and script by hash and nothing from any
 * network (CSP Level 3, `default-src 'none'` with hash sources), so the page cannot load anything.
 * Gzip'd, a run's data are a fraction of the texts they hold: a session re-sends its conversation,
 * which the page already stores once, and what each request keeps of its own (its body's frame, its
 * facts) is alike from one request to the next (decisions.md, "Performance").
 */
import { createHash } from "node:crypto";
import { createReadStream, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { PROJECT_ROOT } from "../../project-root.js";
import type { RequestDiff } from "../diff/diff.js";
import type { RunSource } from "../load-run.js";
import { appendFile, FileSink, type ViewDataFiles, type ViewDataOptions, writeViewData } from "./view-data.js";
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

/** A data block of the saved page: its text is base64 of gzip (page-data.ts in the browser unzips it). */
const dataBlock = (id: string) => `<script type="application/gzip" id="${id}">`;

const pageHead = (title: string) => `${pageTop(title, pageScript("page"))}${dataBlock("view-index")}`;

/**
 * The live view's page (live-view.ts): the same stylesheet and drawing code as the saved
 * page, without data; its script fetches `data.json` from the server that served it, and nothing else.
 */
export function livePage(title: string): string {
  const script = pageScript("live");
  return `${pageTop(title, script, " connect-src 'self';")}<script>${script}</script>\n</body></html>\n`;
}

/** The script comes right after the index and before the items, so it draws before the items are read. */
const between = () => `</script>\n<script>${pageScript("page")}</script>\n${dataBlock("view-items")}`;
const PAGE_TAIL = "</script>\n</body></html>\n";

/** The two documents' files beside `path`, made while it is written. */
const dataFiles = (path: string): ViewDataFiles => ({ index: `${path}.index`, items: `${path}.items` });

/**
 * Writes the page of one run, or of two runs aligned by `pairs` (diff mode), to `path`. The file
 * is written next to its final name and renamed when complete, so a failed run leaves no half page.
 */
export async function writeViewPage(
  path: string,
  sources: RunSource[],
  pairs: Iterable<RequestDiff> | null,
  options: ViewDataOptions,
): Promise<number> {
  const partial = `${path}.partial`;
  const files = dataFiles(partial);
  const out = new FileSink(partial);
  try {
    writeViewData(files, sources, pairs, options);
    out.write(pageHead(`payload-probe view · ${sources.map((s) => s.label).join(" vs ")}`));
    await appendGzipBase64(out, files.index);
    out.write(between());
    await appendGzipBase64(out, files.items);
    out.write(PAGE_TAIL);
    out.close();
  } catch (error) {
    out.close();
    rmSync(partial, { force: true });
    throw error;
  } finally {
    // Only the files this call created: the data files, and the side file view-data writes beside the index.
    for (const file of [files.index, files.items, `${files.index}.requests`]) rmSync(file, { force: true });
  }
  renameSync(partial, path);
  return out.bytes;
}

/**
 * Appends `file` gzip'd and in base64 to `out`, a chunk at a time: the page's data are never held
 * whole. Base64 is written in runs of whole 3-byte groups, so the pieces join as one text.
 */
async function appendGzipBase64(out: FileSink, file: string): Promise<void> {
  let carry: Buffer = Buffer.alloc(0);
  await pipeline(createReadStream(file), createGzip(), async (zipped: AsyncIterable<Buffer>) => {
    for await (const chunk of zipped) {
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const whole = bytes.length - (bytes.length % 3);
      out.write(bytes.subarray(0, whole).toString("base64"));
      carry = bytes.subarray(whole);
    }
  });
  out.write(carry.toString("base64"));
}

/**
 * The data of one run as the live view serves it, written to `path`: `[<index>\n,\n<items>]`, the
 * two documents of the page's layout (view-data.ts) as one JSON array, as they are (served from
 * 127.0.0.1, they are not zipped). Returns its size in bytes.
 */
export function writeLiveData(path: string, source: RunSource, options: ViewDataOptions): number {
  const files = dataFiles(path);
  writeViewData(files, [source], null, options);
  const out = new FileSink(path);
  try {
    out.write("[");
    appendFile(out, files.index);
    out.write("\n,\n");
    appendFile(out, files.items);
    out.write("]");
  } finally {
    out.close();
  }
  return out.bytes;
}
