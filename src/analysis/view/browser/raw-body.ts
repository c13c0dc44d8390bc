/** The exact wire body, rebuilt from its frame and segments, and checked against the record's sha256. */
import { el } from "./dom.js";
import type { Items, PageRequest } from "./page-data.js";
import type { Segments } from "./segments.js";

/** A frame's runs of equal holes (U+0002, a count, U+0002, the hole and the text after it) written out. */
function expandRuns(frame: string): string {
  const pieces = frame.split("\u0002");
  let text = pieces[0];
  for (let i = 1; i + 1 < pieces.length; i += 2) {
    const rest = pieces[i + 1];
    const next = rest.indexOf("\u0000", 1);
    const unit = next < 0 ? rest : rest.slice(0, next);
    text += unit.repeat(Number(pieces[i])) + rest.slice(unit.length);
  }
  return text;
}

/** The body's text: each U+0000 in the frame is followed by the letter of the segment kind that goes there. */
function rebuild(compact: string, seg: Segments): string {
  const frame = expandRuns(compact);
  const next = { T: 0, S: 0, M: 0 };
  const fill = (code: string) => {
    if (code === "T") return seg.tools[next.T++][4];
    if (code === "S") return JSON.stringify(seg.system[next.S++][3]);
    return seg.messages[next.M++][4];
  };
  const pieces = frame.split("\u0000");
  let text = pieces[0];
  for (const piece of pieces.slice(1)) text += fill(piece[0]) + piece.slice(1);
  return text;
}

export function rawBody(items: Items, r: PageRequest, seg: Segments, hash: string): HTMLElement {
  const text = rebuild(items.of(r.F, "frame")[1], seg);
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
