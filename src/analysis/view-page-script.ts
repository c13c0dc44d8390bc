// @ts-nocheck — browser code in a project typed for Node (no DOM lib): it is type-free JavaScript,
// kept in a .ts file so tsc ships it in dist/ and Biome formats and lints it. `viewPage.toString()`
// inlines it into the page (src/analysis/view-page.ts).

/**
 * The `view` page's own script: reads the embedded data and draws the timeline and details. The live
 * view (view-live-script.ts) calls it again with each fresh copy of the data (`live`: the index and
 * items texts, and the `state` the previous drawing returned), so the unit, the selected request and
 * the scroll position survive new requests.
 */
function viewPage(live) {
  const ROW = 26;
  const OVERSCAN = 12;
  const $ = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // ---- data: the line layout written by src/analysis/view-data.ts
  const indexText = live ? live.index : document.getElementById("view-index").textContent;
  const before = live?.state ?? null;
  const section = (name) => {
    const head = `\n,"${name}":[\n`;
    const at = indexText.indexOf(head);
    if (at < 0) return null;
    const start = at + head.length;
    return JSON.parse(`[${indexText.slice(start, Math.max(start, indexText.indexOf("\n]", start - 1)))}]`);
  };
  const meta = JSON.parse(indexText.slice(indexText.indexOf('"meta":') + 7, indexText.indexOf('\n,"requests":[')));
  const requests = section("requests");
  const pairs = section("pairs");
  const NONE = Object.freeze([]);
  for (const r of requests) {
    r.r ??= 0;
    r.k ??= "loop";
    r.tc ??= NONE;
    r.mk ??= {};
  }
  // The items follow this script in the page: they are read when a detail first needs them.
  let itemsText = null;
  let itemOffsets = null;
  const itemCache = new Map();
  const itemsReady = () =>
    live !== undefined || (document.getElementById("view-items") !== null && document.readyState !== "loading");
  const item = (id) => {
    if (id < 0) return null;
    let value = itemCache.get(id);
    if (value !== undefined) return value;
    if (!itemOffsets) {
      itemsText = live ? live.items : document.getElementById("view-items").textContent;
      itemOffsets = [];
      for (let i = itemsText.indexOf("\n"); i >= 0; i = itemsText.indexOf("\n", i + 1)) itemOffsets.push(i + 1);
    }
    const line = itemsText.slice(itemOffsets[id], itemOffsets[id + 1] - 1);
    value = JSON.parse(line.charCodeAt(0) === 44 ? line.slice(1) : line);
    itemCache.set(id, value);
    return value;
  };

  // ---- measures: tokens or bytes
  let unit = before?.unit ?? "tokens";
  const total = (r) => (unit === "tokens" ? (r.t ? r.t[3] : 0) : r.b[3]);
  const parts = (r) => {
    if (unit === "tokens") return r.t ? [r.t[0], r.t[1], r.t[2]] : [0, 0, 0];
    return [r.b[0], r.b[1], r.b[2]];
  };
  const keptOf = (r) => (r.kept ? (unit === "tokens" ? r.kept[1] : r.kept[0]) : null);
  const maxOf = () => {
    let m = 1;
    for (const r of requests)
      m = Math.max(
        m,
        parts(r).reduce((a, b) => a + b, 0),
      );
    return m;
  };
  let scale = 1;
  const BAR_PX = pairs ? 150 : 300;

  // ---- header
  const header = document.querySelector("header");
  header.replaceChildren();
  const title = meta.runs.map((r) => r.probe || r.label).join(" vs ");
  header.append($("h1", "", `payload-probe view · ${title}`));
  const counts = meta.runs
    .map(
      (r) =>
        `${r.requests} requests${r.lost ? ` (${r.lost} more relayed but not recorded)` : ""}` +
        (r.secrets ? ` · ${r.secrets} secrets replaced by markers` : ""),
    )
    .join(" / ");
  header.append(
    $("span", "facts", `${counts} · encoding ${meta.encoding} · from ${fmtBytes(meta.rawBytes)} of run files`),
  );
  const toggle = $("button", "", unit === "tokens" ? "show bytes" : "show tokens");
  toggle.id = "unit";
  toggle.onclick = () => {
    unit = unit === "tokens" ? "bytes" : "tokens";
    toggle.textContent = unit === "tokens" ? "show bytes" : "show tokens";
    scale = BAR_PX / maxOf();
    draw(true);
    if (selected !== null) openDetail(selected);
  };
  header.append(toggle);
  const legend = $("span", "legend");
  for (const [cls, label] of [
    ["tools", "tools"],
    ["system", "system parts"],
    ["messages", "messages"],
    ["hatched", "after the cache prefix break"],
  ]) {
    const l = $("span");
    l.append($("span", `sw ${cls}`), label);
    legend.append(l);
  }
  legend.append($("span", "kind", "sampling / side requests indented"));
  header.append(legend);

  function fmtBytes(n) {
    return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`;
  }
  const fmt = (n) => (n === null || n === undefined ? "n/a" : unit === "tokens" ? `${n} tok` : fmtBytes(n));

  // ---- timeline: a virtualised list, only the rows on screen exist in the DOM
  const timeline = document.getElementById("timeline");
  const spacer = $("div", "spacer");
  timeline.replaceChildren(spacer);
  const rowsCount = pairs ? pairs.length : requests.length;
  spacer.style.height = `${rowsCount * ROW}px`;
  let selected = before?.selected ?? null;
  let drawn = { from: -1, to: -1 };

  function bar(r) {
    const track = $("span", "track");
    track.style.width = `${BAR_PX}px`;
    const b = $("span", "bar");
    const [tools, system, messages] = parts(r);
    const seg = (cls, value) => {
      const s = $("span", cls);
      s.style.width = `${value * scale}px`;
      b.append(s);
    };
    seg("tools", tools);
    if (r.sp && unit === "bytes") for (let i = 0; i < r.sp.length; i++) seg(`system p${i % 2}`, r.sp[i]);
    else seg("system", system);
    seg("messages", messages);
    track.append(b);
    const kept = keptOf(r);
    const sum = tools + system + messages;
    if (r.k === "loop" && (r.brk || kept === null || kept < sum)) {
      const after = $("span", "after");
      const from = Math.min(kept ?? 0, sum);
      after.style.left = `${from * scale}px`;
      after.style.width = `${Math.max(0, sum - from) * scale}px`;
      after.title = r.brk ? `prefix breaks in ${r.brk[0]}: ${r.brk[1]}` : "new since the previous request";
      track.append(after);
    }
    return track;
  }

  function badges(r, into) {
    for (const c of r.tc) {
      const t = $("span", "badge tc", c);
      t.title = "tool-set change against the previous loop request";
      into.append(t);
    }
    if (r.brk) into.append($("span", "badge brk", `break: ${r.brk[0]}`));
    for (const [name, n] of Object.entries(r.mk)) into.append($("span", "badge mk", `${name} ${n}`));
  }

  function requestCells(r, into) {
    const seq = $("span", "seq", `#${r.s}`);
    into.append(seq);
    if (r.k !== "loop") into.append($("span", "kind", r.k));
    into.append(bar(r), $("span", "num", fmt(total(r))));
    badges(r, into);
  }

  function rowElement(i) {
    const row = $("div", "row");
    row.style.top = `${i * ROW}px`;
    row.dataset.index = i;
    if (pairs) {
      const p = pairs[i];
      if (!p.same) row.classList.add("differs");
      row.append($("span", "seq", p.same ? "=" : "≠"));
      const box = $("span", "pair");
      for (const side of [p.a, p.b]) {
        const s = $("span", "side");
        if (side >= 0) requestCells(requests[side], s);
        else s.append($("span", "muted", "— no request —"));
        box.append(s);
      }
      row.append(box);
    } else {
      const r = requests[i];
      row.classList.add("req");
      if (r.k !== "loop") row.classList.add("apart");
      requestCells(r, row);
    }
    if (i === selected) row.classList.add("sel");
    row.onclick = () => openDetail(i);
    return row;
  }

  function draw(force) {
    const from = Math.max(0, Math.floor(timeline.scrollTop / ROW) - OVERSCAN);
    const to = Math.min(rowsCount, Math.ceil((timeline.scrollTop + timeline.clientHeight) / ROW) + OVERSCAN);
    if (!force && from === drawn.from && to === drawn.to) return;
    drawn = { from, to };
    const rows = [];
    for (let i = from; i < to; i++) rows.push(rowElement(i));
    spacer.replaceChildren(...rows);
  }
  let pending = false;
  // A property, not a listener: a live redraw replaces the previous drawing's handler.
  timeline.onscroll = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw(false);
    });
  };

  // ---- details
  const detail = document.getElementById("detail");
  const markerRes = Object.entries(meta.markers).map(([name, m]) => ({
    name,
    in: m.in,
    re: new RegExp(m.re ?? m.text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), `${m.flags ?? ""}g`),
  }));

  /** A value as readable lines: strings with line breaks as blocks, objects as `key: value`. */
  function readable(value, indent, out, key) {
    const pad = "  ".repeat(indent);
    const label = key === undefined ? "" : `${key}: `;
    if (value !== null && typeof value === "object") {
      const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v]) : Object.entries(value);
      if (entries.length === 0) out.push(`${pad}${label}${Array.isArray(value) ? "[]" : "{}"}`);
      else {
        if (key !== undefined) out.push(`${pad}${label}`);
        for (const [k, v] of entries) readable(v, key === undefined ? indent : indent + 1, out, k);
      }
    } else if (typeof value === "string" && value.includes("\n")) {
      out.push(`${pad}${label}|`);
      for (const line of value.split("\n")) out.push(`${pad}  ${line}`);
    } else out.push(`${pad}${label}${typeof value === "string" ? value : JSON.stringify(value)}`);
    return out;
  }

  /** Lines into a <pre>, each with its class, marker matches wrapped in <mark>. */
  function linesBlock(lines, part, classify) {
    const pre = $("pre");
    const markers = markerRes.filter((m) => m.in === part);
    let inBlock = null;
    lines.forEach((line) => {
      const div = $("div", "ln");
      const cls = classify ? classify(line, inBlock) : null;
      if (cls) {
        div.classList.add(cls.cls);
        inBlock = cls.block;
      } else inBlock = null;
      appendMarked(div, line, markers);
      pre.append(div);
    });
    return pre;
  }
  function appendMarked(into, text, markers) {
    const hits = [];
    for (const m of markers) {
      m.re.lastIndex = 0;
      for (let x = m.re.exec(text); x; x = m.re.exec(text)) {
        if (x[0].length === 0) {
          m.re.lastIndex++;
          continue;
        }
        hits.push([x.index, x.index + x[0].length, m.name]);
      }
    }
    hits.sort((a, b) => a[0] - b[0]);
    let pos = 0;
    for (const [a, b, name] of hits) {
      if (a < pos) continue;
      into.append(text.slice(pos, a));
      const mark = $("mark", "marker", text.slice(a, b));
      mark.title = `marker ${name}`;
      into.append(mark);
      pos = b;
    }
    into.append(text.slice(pos));
  }

  /** Skills blocks (`<available_skills>`, `<skill_catalog>`, `<active_skills>`) and skill bodies (`<skill name=…>`). */
  function skillClassifier(toolNames) {
    return (line, inBlock) => {
      const t = line.trim();
      if (inBlock) {
        const closes = t === `</${inBlock}>`;
        return { cls: inBlock === "skill" ? "skillbody" : "skills", block: closes ? null : inBlock };
      }
      const open = /^<((?:available_|active_)?skills|skill_catalog)>$/.exec(t);
      if (open) return { cls: "skills", block: open[1] };
      if (/^<skill name=".*">$/.test(t) || /^<skill name=".*" location=".*">$/.test(t))
        return { cls: "skillbody", block: "skill" };
      const tool = /^- ([A-Za-z0-9_.:-]+): /.exec(line);
      if (tool && toolNames?.has(tool[1])) return { cls: "toolline", block: null };
      return null;
    };
  }

  function segmentsOf(r) {
    const tools = r.T >= 0 ? item(r.T)[1].map(item) : [];
    const system = r.S >= 0 ? item(r.S)[1].map(item) : [];
    const messages = [];
    for (let n = r.M; n >= 0; n = item(n)[1]) messages.push(item(item(n)[2]));
    messages.reverse();
    return { tools, system, messages };
  }

  /** Index in cache order (tools, system parts, messages) of the first segment after the kept prefix. */
  function keptUntil(r, seg) {
    if (!r.kept) return null;
    const bytes = [...seg.tools.map((t) => t[3]), ...seg.system.map((s) => s[2]), ...seg.messages.map((m) => m[3])];
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (r.kept[0] < start + bytes[i]) return i;
      start += bytes[i] + 1;
    }
    return bytes.length;
  }

  function breakLine(r) {
    const what = r.brk ? `breaks in ${r.brk[0]}: ${r.brk[1]}` : "what follows was appended";
    return $(
      "div",
      "brkline",
      `cache prefix ends here (${r.kept[0]} B shared with the previous loop request) · ${what}`,
    );
  }

  function segmentDetails(summary, body, open) {
    const d = $("details");
    if (open) d.open = true;
    const s = $("summary");
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

  function requestDetail(r) {
    const box = $("div", "request-detail");
    const run = meta.runs[r.r];
    const [, model, usage, hash, cost] = item(r.D);
    box.append($("h2", "", `Request #${r.s} · ${r.k} · ${model}${meta.mode === "diff" ? ` · ${run.label}` : ""}`));
    const ours = r.t
      ? `${r.t[3]} tokens (tools ${r.t[0]} · system ${r.t[1]} · messages ${r.t[2]})`
      : "tokens not counted";
    box.append($("p", "facts", `our estimate (${meta.encoding}): ${ours} · body ${r.b[3]} B`));
    box.append($("p", "facts", `provider usage: ${usage ? JSON.stringify(usage) : "none reported"}`));
    for (const line of cost ?? []) box.append($("p", "facts cost", line));
    box.append(
      $(
        "p",
        "facts",
        !r.kept
          ? "cache prefix: no previous loop request"
          : `cache prefix: ${r.kept[0]} B kept${r.kept[1] === null ? "" : ` / ${r.kept[1]} tok`}${r.brk ? ` · breaks in ${r.brk[0]}: ${r.brk[1]}` : ""}`,
      ),
    );
    if (r.T < 0) {
      box.append($("p", "muted", "This run kept no wire body for the request."));
      return box;
    }
    const seg = segmentsOf(r);
    const cut = keptUntil(r, seg);
    let index = 0;
    const toolNames = new Set(seg.tools.map((t) => t[1]));
    const added = new Set(r.tc.filter((c) => c[0] === "+").map((c) => c.slice(1)));
    const part = (name, list, render) => {
      const sum = (k) => list.reduce((a, x) => a + x[k], 0);
      const tokenKey = name === "system" ? 1 : 2;
      box.append($("h3", "", `${name} · ${list.length} · ${sum(tokenKey)} tok · ${sum(tokenKey + 1)} B`));
      for (const x of list) {
        if (cut === index) box.append(breakLine(r));
        box.append(render(x, index));
        index++;
      }
    };
    part("tools", seg.tools, (t) => {
      const d = segmentDetails(
        [
          `${t[1]}`,
          $("span", "num", `${t[2]} tok · ${t[3]} B`),
          ...(added.has(t[1]) ? [$("span", "badge tc", `+${t[1]}`)] : []),
        ],
        () => linesBlock(readable(JSON.parse(t[4]), 0, []), "tools"),
        false,
      );
      d.classList.add("tool");
      return d;
    });
    part("system", seg.system, (s, i) =>
      segmentDetails(
        [`system[${i - seg.tools.length}]`, $("span", "num", `${s[1]} tok · ${s[2]} B`)],
        () => linesBlock(s[3].split("\n"), "system", skillClassifier(toolNames)),
        true,
      ),
    );
    part("messages", seg.messages, (m, i) => {
      const { role, ...rest } = JSON.parse(m[4]);
      return segmentDetails(
        [
          $("span", `role ${m[1]}`, m[1]),
          ` messages[${i - seg.tools.length - seg.system.length}]`,
          $("span", "num", `${m[2]} tok · ${m[3]} B`),
        ],
        () => linesBlock(readable(rest, 0, []), "messages", skillClassifier(null)),
        true,
      );
    });
    if (cut === index && cut !== null && r.brk) box.append(breakLine(r));
    const rawButton = $("button", "", "show the raw wire JSON");
    rawButton.id = "raw";
    rawButton.onclick = () => {
      rawButton.replaceWith(rawBody(r, seg, hash));
    };
    box.append($("h3", "", "wire body"), rawButton);
    return box;
  }

  /** The exact body, rebuilt from its frame and segments, and checked against the record's sha256. */
  function rawBody(r, seg, hash) {
    const frame = item(r.F)[1];
    const next = { T: 0, S: 0, M: 0 };
    const fill = (code) => {
      const i = next[code]++;
      if (code === "T") return seg.tools[i][4];
      if (code === "S") return JSON.stringify(seg.system[i][3]);
      return seg.messages[i][4];
    };
    // Each U+0000 in the frame is followed by the letter of the segment kind that goes there.
    const pieces = frame.split("\u0000");
    let text = pieces[0];
    for (const piece of pieces.slice(1)) text += fill(piece[0]) + piece.slice(1);
    const box = $("div", "raw-body");
    const status = $("p", "facts", "checking sha256 …");
    const pre = $("pre", "", text);
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

  // ---- diff detail: both requests side by side, lines aligned by a longest-common-subsequence diff
  function lineDiff(a, b) {
    let s = 0;
    while (s < a.length && s < b.length && a[s] === b[s]) s++;
    let e = 0;
    while (e < a.length - s && e < b.length - s && a[a.length - 1 - e] === b[b.length - 1 - e]) e++;
    const ma = a.slice(s, a.length - e);
    const mb = b.slice(s, b.length - e);
    const rows = [];
    for (let i = 0; i < s; i++) rows.push([a[i], b[i], "same"]);
    if (ma.length * mb.length > 4e6) {
      for (let i = 0; i < Math.max(ma.length, mb.length); i++) rows.push([ma[i] ?? null, mb[i] ?? null, "chg"]);
    } else {
      const w = mb.length + 1;
      const L = new Uint32Array((ma.length + 1) * w);
      for (let i = ma.length - 1; i >= 0; i--)
        for (let j = mb.length - 1; j >= 0; j--)
          L[i * w + j] = ma[i] === mb[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
      let i = 0;
      let j = 0;
      while (i < ma.length || j < mb.length) {
        if (i < ma.length && j < mb.length && ma[i] === mb[j]) rows.push([ma[i++], mb[j++], "same"]);
        else if (j < mb.length && (i === ma.length || L[i * w + j + 1] >= L[(i + 1) * w + j]))
          rows.push([null, mb[j++], "add"]);
        else rows.push([ma[i++], null, "del"]);
      }
    }
    for (let i = a.length - e; i < a.length; i++) rows.push([a[i], b[i - a.length + b.length], "same"]);
    return rows;
  }

  function diffColumns(linesA, linesB) {
    const cols = $("div", "cols");
    const left = $("pre");
    const right = $("pre");
    for (const [x, y, kind] of lineDiff(linesA, linesB)) {
      const l = $("div", `ln ${x === null ? "d-pad" : kind === "same" ? "" : "d-del"}`, x ?? "");
      const r = $("div", `ln ${y === null ? "d-pad" : kind === "same" ? "" : "d-add"}`, y ?? "");
      left.append(l);
      right.append(r);
    }
    const a = $("div");
    const b = $("div");
    a.append(left);
    b.append(right);
    cols.append(a, b);
    return cols;
  }

  function textsOf(r) {
    if (!r || r.T < 0) return { tools: [], system: [], messages: [] };
    const seg = segmentsOf(r);
    return {
      tools: seg.tools.flatMap((t) => [`## ${t[1]}`, ...readable(JSON.parse(t[4]), 0, [])]),
      system: seg.system.flatMap((s) => s[3].split("\n")),
      messages: seg.messages.flatMap((m) => {
        const { role, ...rest } = JSON.parse(m[4]);
        return [`## ${role}`, ...readable(rest, 0, [])];
      }),
    };
  }

  function pairDetail(p) {
    const box = $("div", "pair-detail");
    const a = p.a >= 0 ? requests[p.a] : null;
    const b = p.b >= 0 ? requests[p.b] : null;
    box.append(
      $(
        "h2",
        "",
        `${a ? `#${a.s}` : "—"} vs ${b ? `#${b.s}` : "—"} · ${p.same ? "identical bodies" : p.div ? `first differs in ${p.div}` : "one side only"}`,
      ),
    );
    const facts = [];
    if (p.add.length) facts.push(`tools only in B: ${p.add.join(", ")}`);
    if (p.rem.length) facts.push(`tools only in A: ${p.rem.join(", ")}`);
    if (p.chg.length) facts.push(`definitions changed: ${p.chg.join(", ")}`);
    for (const f of facts) box.append($("p", "facts", f));
    const heads = $("div", "cols");
    for (const [label, r] of [
      [meta.runs[0].label, a],
      [meta.runs[1].label, b],
    ]) {
      const h = $("div", "facts", `${label}: ${r ? `${fmt(total(r))} · ${r.tc.join(" ")}` : "no request"}`);
      heads.append(h);
    }
    box.append(heads);
    const ta = textsOf(a);
    const tb = textsOf(b);
    for (const part of ["tools", "system", "messages"]) {
      const same = ta[part].join("\n") === tb[part].join("\n");
      box.append(
        segmentDetails(
          [`${part}`, $("span", "num", same ? "same" : "differs")],
          () => diffColumns(ta[part], tb[part]),
          !same,
        ),
      );
    }
    return box;
  }

  function openDetail(i) {
    selected = i;
    if (!itemsReady()) {
      detail.replaceChildren($("p", "muted", "reading the page's texts …"));
      document.addEventListener("DOMContentLoaded", () => openDetail(selected), { once: true });
      return;
    }
    for (const row of spacer.children) row.classList.toggle("sel", Number(row.dataset.index) === i);
    detail.replaceChildren(pairs ? pairDetail(pairs[i]) : requestDetail(requests[i]));
  }

  if (pairs) document.body.classList.add("diff");
  scale = BAR_PX / maxOf();
  // Live: a view scrolled to its end follows new requests; the open detail stays (requests only grow).
  if (before) timeline.scrollTop = before.atEnd ? timeline.scrollHeight : before.scrollTop;
  draw(true);
  if (selected === null) detail.replaceChildren($("p", "muted", "Click a request to see what it sent."));
  // The first frame with the timeline in it: scripts/bench-view.mjs reads this mark.
  requestAnimationFrame(() => {
    document.body.dataset.ready = "1";
    performance.mark("view-ready");
  });
  return {
    state: () => ({
      unit,
      selected,
      scrollTop: timeline.scrollTop,
      atEnd: timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - ROW,
    }),
  };
}

/** The drawing function's compiled source, for the live view's script to call with fresh data. */
export const VIEW_PAGE_SOURCE = viewPage.toString();

/** The script as inlined into the page: the function's compiled source, called at once. */
export const PAGE_SCRIPT = `(${VIEW_PAGE_SOURCE})();`;
