/** A request's tools, system parts and messages, read from the item table, and how the detail shows one. */
import type { ItemOf } from "../types.js";
import { el } from "./dom.js";
import type { Items, PageRequest } from "./page-data.js";

export interface Segments {
  tools: ItemOf<"tool">[];
  system: ItemOf<"sys">[];
  messages: ItemOf<"msg">[];
}

/** The segments of a request that kept its wire body (`r.T >= 0`). */
export function segmentsOf(items: Items, r: PageRequest): Segments {
  const tools = r.T >= 0 ? items.of(r.T, "tools")[1].map((id) => items.of(id, "tool")) : [];
  const system = r.S >= 0 ? items.of(r.S, "system")[1].map((id) => items.of(id, "sys")) : [];
  const messages: ItemOf<"msg">[] = [];
  // The history is a chain of nodes from the last message back to the first.
  for (let n = r.M; n >= 0; n = items.of(n, "node")[1]) messages.push(items.of(items.of(n, "node")[2], "msg"));
  messages.reverse();
  return { tools, system, messages };
}

/**
 * A segment as a `<details>`, its body made only when first opened: a long run's detail can hold
 * thousands of lines that nobody unfolds.
 */
export function segmentDetails(summary: (string | Node)[], body: () => Node, open: boolean): HTMLDetailsElement {
  const d = el("details");
  if (open) d.open = true;
  const s = el("summary");
  s.append(...summary);
  d.append(s);
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    d.append(body());
  };
  if (open) fill();
  d.addEventListener("toggle", fill);
  return d;
}
