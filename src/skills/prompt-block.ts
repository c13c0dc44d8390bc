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

/**
 * `""` when no skill is visible or the model has no tool to open a skill file with; otherwise
 * `\n\n` + the block, without a trailing newline.
 */
export function renderSkillsBlock(skills: Skill[], activeToolNames: string[], lines: SkillsBlockLines): string {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  const canRead = activeToolNames.includes("read");
  const canBash = activeToolNames.includes("bash");
  if (visible.length === 0 || (!canRead && !canBash)) return "";

  const out = [lines.intro, canRead ? lines.useRead : lines.useBash, lines.paths, "", "<available_skills>"];
  for (const skill of visible) {
    out.push(
      "  <skill>",
      `    <name>${escapeXml(skill.name)}</name>`,
      `    <description>${escapeXml(skill.description)}</description>`,
      `    <location>${escapeXml(skill.filePath)}</location>`,
      "  </skill>",
    );
  }
  out.push("</available_skills>");
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
