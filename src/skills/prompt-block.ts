/** The `<available_skills>` index appended to the system prompt (pi-runtime.md §4.5). */
import type { Skill } from "./types.js";

/** The preamble sentences; they come from the runtime profile, not from code. */
export interface SkillsBlockLines {
  /** What the listed skills are for. */
  intro: string;
  /** How to load a skill when the read tool is active. */
  useRead: string;
  /** The same, naming bash, for when read is inactive but bash is active. */
  useBash: string;
  /** How relative paths inside a skill file resolve. */
  paths: string;
}

const INDEX_OPEN = "<available_skills>";
const INDEX_CLOSE = "</available_skills>";

/**
 * `""` when no skill is visible or the model has no tool to open a skill file with; otherwise
 * `\n\n` + the block, without a trailing newline.
 */
export function renderSkillsBlock(skills: Skill[], activeToolNames: string[], lines: SkillsBlockLines): string {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  const canRead = activeToolNames.includes("read");
  const canBash = activeToolNames.includes("bash");
  if (visible.length === 0 || (!canRead && !canBash)) return "";

  const out = [lines.intro, canRead ? lines.useRead : lines.useBash, lines.paths, "", INDEX_OPEN];
  for (const skill of visible) {
    out.push(
      "  <skill>",
      `    <name>${escapeXml(skill.name)}</name>`,
      `    <description>${escapeXml(skill.description)}</description>`,
      `    <location>${escapeXml(skill.filePath)}</location>`,
      "  </skill>",
    );
  }
  out.push(INDEX_CLOSE);
  return `\n\n${out.join("\n")}`;
}

const XML_ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => XML_ENTITIES[char] ?? char);
}

/** Where a rendered block sits in a prompt, and the preamble lines it was written with. */
export interface FoundSkillsBlock {
  /** The block's span in the prompt, its leading blank line included. */
  start: number;
  end: number;
  /** The lines before the index: intro, how to load (read or bash), how paths resolve. */
  preamble: string[];
}

/** The inverse of renderSkillsBlock, for `profile import`; undefined when the prompt has no skill index. */
export function findSkillsBlock(prompt: string): FoundSkillsBlock | undefined {
  const open = prompt.indexOf(`\n\n${INDEX_OPEN}\n`);
  const close = prompt.indexOf(INDEX_CLOSE, open);
  if (open < 0 || close < 0) return undefined;
  const start = prompt.lastIndexOf("\n\n", open - 1);
  if (start < 0) return undefined;
  return { start, end: close + INDEX_CLOSE.length, preamble: prompt.slice(start + 2, open).split("\n") };
}
