/** The exact wire body, rebuilt from its frame and segments, and checked against the record's sha256. */
import { el } from "./dom.js";
import type { Items, PageRequest } from "./page-data.js";
import { rebuildBody } from "./rebuild-body.js";
import type { Segments } from "./segments.js";

export function rawBody(items: Items, r: PageRequest, seg: Segments, hash: string): HTMLElement {
  const text = rebuildBody(items.of(r.F, "frame"), (id) => items.of(id, "piece")[1], {
    tools: seg.tools.map((tool) => tool[4]),
    system: seg.system.map((part) => part[3]),
    messages: seg.messages.map((message) => message[4]),
  });
  const box = el("div", "raw-body");
  const status = el("p", "facts", "checking sha256 …");
  const pre = el("pre", "", text);
  box.append(status, pre);
  if (crypto.subtle) {
    crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then((digest) => {
      const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
      status.textContent =
        hex === hash ? `sha256 ${hex.slice(0, 16)}… matches the captured body` : "sha256 does not match the record";
    });
  } else status.textContent = "";
  return box;
}
