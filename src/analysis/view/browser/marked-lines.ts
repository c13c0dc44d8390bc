/**
 * Texts as lines in a `<pre>`: values made readable, lines picked out by what they are (the skills
 * block, a skill's body, a tool's line), and the probe's marker matches wrapped in `<mark>`.
 */
import type { ViewMeta } from "../types.js";
import { el } from "./dom.js";

/** A marker of the probe as a global regular expression over one part's text. */
export interface MarkerPattern {
  name: string;
  in: ViewMeta["markers"][string]["in"];
  re: RegExp;
}

export function markerPatterns(meta: ViewMeta): MarkerPattern[] {
  return Object.entries(meta.markers).map(([name, m]) => ({
    name,
    in: m.in,
    re: new RegExp(m.re ?? (m.text ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), `${m.flags ?? ""}g`),
  }));
}

/** A value as readable lines: strings with line breaks as blocks, objects as `key: value`. */
export function readable(value: unknown, indent: number, out: string[], key?: string): string[] {
  const pad = "  ".repeat(indent);
  const label = key === undefined ? "" : `${key}: `;
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? value.map((v, i): [string, unknown] => [`[${i}]`, v])
      : Object.entries(value as Record<string, unknown>);
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

/** What a line is, given the block the lines before it opened (null: none): its class, and the block after it. */
export type LineClassifier = (line: string, inBlock: string | null) => { cls: string; block: string | null } | null;

/** Lines into a <pre>, each with its class, the matches of `markers` in `part` wrapped in <mark>. */
export function linesBlock(
  markers: MarkerPattern[],
  lines: string[],
  part: MarkerPattern["in"],
  classify?: LineClassifier,
): HTMLPreElement {
  const pre = el("pre");
  const inPart = markers.filter((m) => m.in === part);
  let inBlock: string | null = null;
  for (const line of lines) {
    const div = el("div", "ln");
    const cls: ReturnType<LineClassifier> = classify ? classify(line, inBlock) : null;
    if (cls) {
      div.classList.add(cls.cls);
      inBlock = cls.block;
    } else inBlock = null;
    appendMarked(div, line, inPart);
    pre.append(div);
  }
  return pre;
}

function appendMarked(into: HTMLElement, text: string, markers: MarkerPattern[]): void {
  const hits: [number, number, string][] = [];
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
    const mark = el("mark", "marker", text.slice(a, b));
    mark.title = `marker ${name}`;
    into.append(mark);
    pos = b;
  }
  into.append(text.slice(pos));
}

/** Skills blocks (`<available_skills>`, `<skill_catalog>`, `<active_skills>`) and skill bodies (`<skill name=…>`). */
export function skillClassifier(toolNames: Set<string> | null): LineClassifier {
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
