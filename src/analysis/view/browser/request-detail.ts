/** A request's detail: its facts, its tools, system parts and messages as the cache orders them, and its wire body. */

import type { ViewReply } from "../types.js";
import { el, smallTable } from "./dom.js";
import { linesBlock, readable, skillClassifier } from "./marked-lines.js";
import type { PageContext } from "./page-context.js";
import type { PageRequest } from "./page-data.js";
import { rawBody } from "./raw-body.js";
import { type Segments, segmentDetails, segmentsOf } from "./segments.js";

/** Index in cache order (tools, system parts, messages) of the first segment after the kept prefix. */
function keptUntil(keptBytes: number, seg: Segments): number {
  const bytes = [...seg.tools.map((t) => t[3]), ...seg.system.map((s) => s[2]), ...seg.messages.map((m) => m[3])];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (keptBytes < start + bytes[i]) return i;
    start += bytes[i] + 1;
  }
  return bytes.length;
}

/** `#3`, or the previous loop request for a record from before the request read from was named. */
const source = (r: PageRequest) => (r.fr === undefined ? "the previous loop request" : `#${r.fr}`);

function breakLine(r: PageRequest, keptBytes: number): HTMLElement {
  const what = r.nc
    ? "a new conversation: what follows is its own"
    : r.brk
      ? `breaks in ${r.brk[0]}: ${r.brk[1]}`
      : "what follows was appended";
  return el("div", "brkline", `cache prefix ends here (${keptBytes} B read from ${source(r)}) · ${what}`);
}

/** What the provider can read from its cache for the request, as the analysis says it. */
function prefixFact(r: PageRequest): string {
  const kept = r.kept ? `${r.kept[0]} B${r.kept[1] === null ? "" : ` / ${r.kept[1]} tok`}` : "";
  if (r.nc)
    return r.kept
      ? `cache prefix: new conversation, shares ${kept} with ${source(r)}`
      : "cache prefix: new conversation";
  if (!r.kept)
    return r.fr === undefined ? "cache prefix: nothing read" : `cache prefix: nothing read from ${source(r)}`;
  return `cache prefix: ${kept} read from ${source(r)}${r.brk ? ` · breaks in ${r.brk[0]}: ${r.brk[1]}` : ""}`;
}

/** The conversation the request belongs to: `conversation c2 · subagent of c1`. */
function conversationFact(r: PageRequest): string {
  if (!r.c) return "";
  const [id, role, parent] = r.c;
  return ` · conversation ${id} · ${role}${parent ? ` of ${parent}` : ""}`;
}

/** The usage as the provider reported it beside our count, as a small table; the fields as sent folded beneath. */
function usageBlock(usage: ViewReply["usage"]): HTMLElement {
  const box = el("div", "usage");
  const table = smallTable(["usage", "reported", "ours"], usage.rows, ["", "n", "n"]);
  box.append(table, el("p", "facts muted", `reported: ${usage.whose} · ours: our token count`));
  if (usage.raw !== null) box.append(segmentDetails(["as sent"], () => el("pre", "", usage.raw ?? ""), false));
  return box;
}

/** The request's tokens by source, largest first, with each one's share of the total and the total beneath. */
function sourcesBlock(sources: Record<string, number>): HTMLElement {
  const total = Object.values(sources).reduce((a, n) => a + n, 0);
  const rows = Object.entries(sources)
    .sort((a, b) => b[1] - a[1])
    .map(([source, n]) => [source, String(n), `${total === 0 ? "0.0" : ((100 * n) / total).toFixed(1)}%`]);
  const table = smallTable(
    ["context by source", "tokens", "share"],
    [...rows, ["total", String(total), "100%"]],
    ["", "n", "n"],
  );
  table.classList.add("sources");
  return table;
}

/** The heading and the facts above the segments, then the reply; returns the wire body's sha256. */
function requestFacts(page: PageContext, r: PageRequest, box: HTMLElement): string {
  const run = page.meta.runs[r.r];
  const [, model, hash, cost, reply, sources] = page.items.of(r.D, "req");
  box.append(el("h2", "", `Request #${r.s} · ${r.k}${page.meta.mode === "diff" ? ` · ${run.label}` : ""}`));
  box.append(el("p", "facts", `${model}${conversationFact(r)}`));
  const ours = r.t
    ? `${r.t[3]} tokens (tools ${r.t[0]} · system ${r.t[1]} · messages ${r.t[2]})`
    : "tokens not counted";
  box.append(el("p", "facts", `our estimate (${page.meta.encoding}): ${ours} · body ${r.b[3]} B`));
  if (sources) box.append(sourcesBlock(sources));
  for (const line of cost ?? []) box.append(el("p", "facts cost", line));
  box.append(el("p", "facts", prefixFact(r)));
  if (r.cd) box.append(el("p", "facts", r.cd));
  if (reply) box.append(el("pre", "reply", reply.lines.join("\n")), usageBlock(reply.usage));
  else box.append(el("p", "facts muted", "no reply read for this request"));
  return hash;
}

/** A deferred tool's mark: sent for a tool search, loaded by no message, so not in the context. */
function deferredBadge(): HTMLElement {
  const badge = el("span", "badge deferred", "deferred");
  badge.title = "sent for a tool search and loaded by no message of this request: not in the context (0 tokens)";
  return badge;
}

/** The three parts, each segment folded; the line where the cache prefix ends before the first segment past it. */
function requestParts(page: PageContext, r: PageRequest, seg: Segments, box: HTMLElement): void {
  const keptBytes = r.kept?.[0] ?? null;
  const cut = keptBytes === null ? null : keptUntil(keptBytes, seg);
  let index = 0;
  const toolNames = new Set(seg.tools.map((t) => t[1]));
  const added = new Set(r.tc.filter((c) => c[0] === "+").map((c) => c.slice(1)));
  const unloaded = new Set(r.ud ?? []);
  const part = <T extends unknown[]>(name: string, list: T[], render: (x: T, i: number) => HTMLElement) => {
    // A deferred tool no message loads is sent but not in the context: its tokens are not counted.
    const counted = (i: number) => name !== "tools" || !unloaded.has(i);
    const sum = (k: number, only = (_: number) => true) =>
      list.reduce((a, x, i) => a + (only(i) ? (x[k] as number) : 0), 0);
    const tokenKey = name === "system" ? 1 : 2;
    box.append(el("h3", "", `${name} · ${list.length} · ${sum(tokenKey, counted)} tok · ${sum(tokenKey + 1)} B`));
    for (const x of list) {
      if (cut === index && keptBytes !== null) box.append(breakLine(r, keptBytes));
      box.append(render(x, index));
      index++;
    }
  };
  part("tools", seg.tools, (t, i) => {
    const deferred = unloaded.has(i);
    const d = segmentDetails(
      [
        `${t[1]}`,
        el("span", "num", deferred ? `0 tok · ${t[3]} B` : `${t[2]} tok · ${t[3]} B`),
        ...(deferred ? [deferredBadge()] : []),
        ...(added.has(t[1]) ? [el("span", "badge tc", `+${t[1]}`)] : []),
      ],
      () => linesBlock(page.markers, readable(JSON.parse(t[4]), 0, []), "tools"),
      false,
    );
    d.classList.add("tool");
    return d;
  });
  part("system", seg.system, (s, i) =>
    segmentDetails(
      [`system[${i - seg.tools.length}]`, el("span", "num", `${s[1]} tok · ${s[2]} B`)],
      () => linesBlock(page.markers, s[3].split("\n"), "system", skillClassifier(toolNames)),
      true,
    ),
  );
  part("messages", seg.messages, (m, i) => {
    const { role: _role, ...rest } = JSON.parse(m[4]) as Record<string, unknown>;
    return segmentDetails(
      [
        el("span", `role ${m[1]}`, m[1]),
        ` messages[${i - seg.tools.length - seg.system.length}]`,
        el("span", "num", `${m[2]} tok · ${m[3]} B`),
      ],
      () => linesBlock(page.markers, readable(rest, 0, []), "messages", skillClassifier(null)),
      true,
    );
  });
  if (cut === index && keptBytes !== null && r.brk) box.append(breakLine(r, keptBytes));
}

export function requestDetail(page: PageContext, r: PageRequest): HTMLElement {
  const box = el("div", "request-detail");
  const hash = requestFacts(page, r, box);
  if (r.T < 0) {
    box.append(el("p", "muted", "This run kept no wire body for the request."));
    return box;
  }
  const seg = segmentsOf(page.items, r);
  requestParts(page, r, seg, box);
  const rawButton = el("button", "", "show the raw wire JSON");
  rawButton.id = "raw";
  rawButton.onclick = () => {
    rawButton.replaceWith(rawBody(page.items, r, seg, hash));
  };
  box.append(el("h3", "", "wire body"), rawButton);
  return box;
}
