/** `/skill:name args` in a user message becomes the skill's body inline (pi-runtime.md §5). */
import { inputError } from "../errors.js";
import { readSkillBody } from "./frontmatter.js";
import type { Skill } from "./types.js";

const COMMAND_PREFIX = "/skill:";

/**
 * The expanded user text, or `text` unchanged when it is not a `/skill:` command for a loaded
 * skill. Hidden skills expand too: hiding only keeps them out of the prompt block. Name and
 * path are inserted as they are — pi does not escape them here.
 */
export function expandSkillCommand(text: string, skills: Skill[]): string {
  if (!text.startsWith(COMMAND_PREFIX)) return text;
  const space = text.indexOf(" ");
  const name = space === -1 ? text.slice(COMMAND_PREFIX.length) : text.slice(COMMAND_PREFIX.length, space);
  const args = space === -1 ? "" : text.slice(space + 1).trim();
  const skill = skills.find((candidate) => candidate.name === name);
  if (!skill) return text;

  let body: string;
  try {
    body = readSkillBody(skill.filePath);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw inputError(skill.filePath, undefined, `a readable skill file for /skill:${name} (${reason})`);
  }
  const block =
    `<skill name="${skill.name}" location="${skill.filePath}">\n` +
    `References are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
  return args ? `${block}\n\n${args}` : block;
}
