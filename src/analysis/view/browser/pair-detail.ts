/** A diff's pair in detail: both requests side by side, each part's lines aligned with the other side's. */

import type { ViewPair } from "../types.js";
import { el, smallTable } from "./dom.js";
import { lineDiff } from "./line-diff.js";
import { readable } from "./marked-lines.js";
import { fmt, total } from "./measure.js";
import type { PageContext } from "./page-context.js";
import type { Items, PageRequest } from "./page-data.js";
import { segmentDetails, segmentsOf } from "./segments.js";

type PartTexts = Record<"tools" | "system" | "messages", string[]>;

function diffColumns(linesA: string[], linesB: string[]): HTMLElement {
  const cols = el("div", "cols");
  const left = el("pre");
  const right = el("pre");
  for (const [x, y, kind] of lineDiff(linesA, linesB)) {
    left.append(el("div", `ln ${x === null ? "d-pad" : kind === "same" ? "" : "d-del"}`, x ?? ""));
    right.append(el("div", `ln ${y === null ? "d-pad" : kind === "same" ? "" : "d-add"}`, y ?? ""));
  }
  const a = el("div");
  const b = el("div");
  a.append(left);
  b.append(right);
  cols.append(a, b);
  return cols;
}

/** A request's parts as lines to compare: each tool and message under a `## name` line. */
function textsOf(items: Items, r: PageRequest | null): PartTexts {
  if (!r || r.T < 0) return { tools: [], system: [], messages: [] };
  const seg = segmentsOf(items, r);
  return {
    tools: seg.tools.flatMap((t) => [`## ${t[1]}`, ...readable(JSON.parse(t[4]), 0, [])]),
    system: seg.system.flatMap((s) => s[3].split("\n")),
    messages: seg.messages.flatMap((m) => {
      const { role, ...rest } = JSON.parse(m[4]) as Record<string, unknown>;
      return [`## ${role}`, ...readable(rest, 0, [])];
    }),
  };
}

function pairHeading(p: ViewPair, a: PageRequest | null, b: PageRequest | null): HTMLElement {
  const field = p.div === "body" && p.fld.length > 0 ? `: ${p.fld[0][0]}` : "";
  const what = p.same ? "identical bodies" : p.div ? `first differs in ${p.div}${field}` : "one side only";
  return el("h2", "", `${a ? `#${a.s}` : "—"} vs ${b ? `#${b.s}` : "—"} · ${what}`);
}

export function pairDetail(page: PageContext, p: ViewPair): HTMLElement {
  const box = el("div", "pair-detail");
  const a = p.a >= 0 ? page.requests[p.a] : null;
  const b = p.b >= 0 ? page.requests[p.b] : null;
  box.append(pairHeading(p, a, b));
  const facts: string[] = [];
  if (p.add.length) facts.push(`tools only in B: ${p.add.join(", ")}`);
  if (p.rem.length) facts.push(`tools only in A: ${p.rem.join(", ")}`);
  if (p.chg.length) facts.push(`definitions changed: ${p.chg.join(", ")}`);
  for (const f of facts) box.append(el("p", "facts", f));
  const heads = el("div", "cols");
  const sides: [string, PageRequest | null][] = [
    [page.meta.runs[0].label, a],
    [page.meta.runs[1].label, b],
  ];
  for (const [label, r] of sides) {
    const size = r ? [fmt(total(r, page.unit), page.unit), ...r.tc].join(" · ") : "no request";
    heads.append(el("div", "facts", `${label}: ${size}`));
  }
  box.append(heads);
  const ta = textsOf(page.items, a);
  const tb = textsOf(page.items, b);
  let first = true;
  for (const part of ["tools", "system", "messages"] as const) {
    const same = ta[part].join("\n") === tb[part].join("\n");
    const d = segmentDetails(
      [`${part}`, el("span", "num", same ? "same" : "differs")],
      () => diffColumns(ta[part], tb[part]),
      !same,
    );
    if (!same && first) d.classList.add("first-change");
    first &&= same;
    box.append(d);
  }
  if (p.fld.length > 0) {
    const fields = fieldTable(p);
    if (first) fields.classList.add("first-change");
    box.append(fields);
  }
  return box;
}

/** The body fields outside the three parts that differ, one row each: path, A's value, B's. */
function fieldTable(p: ViewPair): HTMLElement {
  const box = el("div", "fields");
  box.append(el("h3", "", `body fields that differ · ${p.fld.length + p.more}`));
  box.append(smallTable(["field", "A", "B"], p.fld, ["path", "d-del", "d-add"]));
  if (p.more > 0) box.append(el("p", "muted", `and ${p.more} more`));
  return box;
}
