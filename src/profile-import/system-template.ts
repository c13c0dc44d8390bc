/**
 * A captured system prompt turned back into a template: the parts the runtime writes per request —
 * the tool list, the guidelines, the skills block, the working directory, the package folder, a
 * date — become placeholders, and everything else stays as it was sent. Found from the text and
 * the request's tool names alone, never from knowing which profile wrote it.
 */
import { UserError } from "../errors.js";
import { TEMPLATE_PLACEHOLDERS } from "../runtime/system-prompt.js";
import { findSkillsBlock } from "../skills/prompt-block.js";
import { escapeRegExp } from "../text/regexp.js";

export interface InferredPrompt {
  template: string[];
  /** `- name: snippet` lines of the tool list, by tool name. */
  snippets: Map<string, string>;
  /** The guideline lines (without `- `), or undefined when no guideline list was found. */
  guidelines?: string[];
  /** The lines above the skill index, when the prompt has one. */
  skillsPreamble?: string[];
  /** What could not be turned into a placeholder, in words. */
  notes: string[];
}

/** NUL never occurs in a prompt we can represent, so a marked span cannot be matched by later steps. */
const mark = (name: (typeof TEMPLATE_PLACEHOLDERS)[number]) => `\0${name}\0`;
const TOOL_LINE = /^- ([^\s:]+): (.*)$/;

export function inferTemplate(system: string, toolNames: readonly string[]): InferredPrompt {
  const notes: string[] = [];
  for (const name of TEMPLATE_PLACEHOLDERS)
    if (system.includes(`{${name}}`)) notes.push(`the prompt holds a literal {${name}}, which the runtime fills in`);
  if (system.includes("\0"))
    throw new UserError("the system prompt holds a NUL character: it cannot be made a template");
  let text = system;
  const block = findSkillsBlock(text);
  const tail = `${mark("APPEND")}${mark("CONTEXT")}${mark("SKILLS")}`;
  if (block) text = text.slice(0, block.start) + tail + text.slice(block.end);

  const lines = text.split("\n");
  const snippets = new Map<string, string>();
  const tools = toolListSpan(lines, toolNames);
  let guidelines: string[] | undefined;
  if (tools) {
    for (const line of lines.slice(tools.start, tools.end)) {
      const [, name, snippet] = TOOL_LINE.exec(line)!;
      snippets.set(name!, snippet!);
    }
    const list = bulletSpan(lines, tools.end);
    if (list) {
      guidelines = lines.slice(list.start, list.end).map((line) => line.slice(2));
      lines.splice(list.start, list.end - list.start, mark("GUIDELINES"));
    } else notes.push("no guideline list after the tool list: its lines stay as sent");
    lines.splice(tools.start, tools.end - tools.start, mark("TOOLS"));
  } else notes.push("no `- name: snippet` list of the request's tools: the tool list and guidelines stay as sent");

  text = placePaths(lines.join("\n"), notes);
  if (!block) {
    notes.push(
      "the template's request has no skills block: {SKILLS} is put before the working-directory line, where pi puts it",
    );
    const cwdLine = new RegExp(`\n[^\n]*working directory[^\n]*${mark("CWD")}`, "i").exec(text)?.index;
    text = cwdLine === undefined ? text + tail : text.slice(0, cwdLine) + tail + text.slice(cwdLine);
  }
  const template = text.replace(/\0(\w+)\0/g, "{$1}").split("\n");
  return { template, snippets, guidelines, skillsPreamble: block?.preamble, notes };
}

/** The longest run of `- name: …` lines naming the request's tools in request order. */
function toolListSpan(lines: string[], toolNames: readonly string[]): { start: number; end: number } | undefined {
  let best: { start: number; end: number } | undefined;
  for (let start = 0; start < lines.length; start++) {
    let end = start;
    let order = -1;
    for (; end < lines.length; end++) {
      const name = TOOL_LINE.exec(lines[end]!)?.[1];
      const at = name === undefined ? -1 : toolNames.indexOf(name, order + 1);
      if (at < 0) break;
      order = at;
    }
    if (end > start && (!best || end - start > best.end - best.start)) best = { start, end };
  }
  return best;
}

/** The first run of `- ` lines after `from`, with only non-bullet lines (a heading, a paragraph) between. */
function bulletSpan(lines: string[], from: number): { start: number; end: number } | undefined {
  const start = lines.findIndex((line, i) => i >= from && line.startsWith("- "));
  if (start < 0) return undefined;
  let end = start;
  while (end < lines.length && lines[end]!.startsWith("- ")) end++;
  return { start, end };
}

/** A working-directory line's path; then the folder shared by the other absolute paths (pi's package folder); a date. */
function placePaths(text: string, notes: string[]): string {
  const cwd = /working directory[^\n]*?:\s*(\/[^\s]*)/i.exec(text)?.[1];
  let out = cwd ? replacePath(text, cwd, mark("CWD")) : text;
  if (!cwd) notes.push("no working-directory line: the working directory stays as sent");
  const pkg = sharedFolder([...out.matchAll(ABSOLUTE_PATH)].map((m) => m[0]));
  if (pkg) out = replacePath(out, pkg, mark("PKG"));
  else if (out.search(ABSOLUTE_PATH) >= 0) notes.push("absolute paths with no folder in common stay as sent");
  return out.replace(/^([^\n]*\bdate\b[^\n]*?)\d{4}-\d{2}-\d{2}/gim, `$1${mark("DATE")}`);
}

/** An absolute path of two or more segments, not the tail of a relative path or a URL. */
const ABSOLUTE_PATH = /(?<![\w.~:/-])\/[\w.@+-]+(?:\/[\w.@+-]+)+/g;

function replacePath(text: string, path: string, by: string): string {
  const escaped = escapeRegExp(path);
  return text.replace(new RegExp(`${escaped}(?![\\w.@+-])`, "g"), by);
}

/** The deepest folder of two or more segments that holds every path, when there are at least two paths. */
function sharedFolder(paths: string[]): string | undefined {
  const distinct = [...new Set(paths)];
  if (distinct.length < 2) return undefined;
  const split = distinct.map((path) => path.split("/"));
  let depth = 0;
  while (split.every((segments) => segments[depth] !== undefined && segments[depth] === split[0]![depth])) depth++;
  return depth >= 3 ? split[0]!.slice(0, depth).join("/") : undefined;
}
