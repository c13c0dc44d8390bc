/** A saved view page's data as its script reads them (src/analysis/view/view-page.ts writes them). */
import { gunzipSync } from "node:zlib";

/** The text of the page's data block `id`: base64 of gzip, unzipped. */
function block(html: string, id: string): string {
  const open = `<script type="application/gzip" id="${id}">`;
  const at = html.indexOf(open);
  if (at < 0) throw new Error(`the page has no data block ${id}`);
  const start = at + open.length;
  return gunzipSync(Buffer.from(html.slice(start, html.indexOf("</script>", start)), "base64")).toString("utf8");
}

/** The two documents of a saved page: the request index and the item table, as JSON texts. */
export function savedPageData(html: string): { index: string; items: string } {
  return { index: block(html, "view-index"), items: block(html, "view-items") };
}
