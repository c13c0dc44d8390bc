/** The texts of the load_skill model: the stable catalog block, a skill's SOP, the dynamic environment. */
import { escapeXml } from "../prompt-block.js";
import type { ActiveSkillEntry } from "./active.js";
import type { DisclosedSkill, DisclosureTexts } from "./types.js";

/** Name and description only, never a body: appended to the stable system part. `""` when empty. */
export function renderCatalog(skills: DisclosedSkill[], texts: DisclosureTexts): string {
  if (skills.length === 0) return "";
  const items = skills.map(
    (skill) => `  <skill name="${escapeXml(skill.meta.name)}">${escapeXml(skill.meta.description)}</skill>`,
  );
  return `\n\n${texts.catalogIntro}\n\n<skill_catalog>\n${items.join("\n")}\n</skill_catalog>`;
}

/** The SOP with `$ARGUMENTS` and `{{arguments}}` replaced, and its allowed tools listed when it declares any. */
export function renderInvocation(skill: DisclosedSkill, body: string, args: string, texts: DisclosureTexts): string {
  const filled = body.replaceAll("$ARGUMENTS", args).replaceAll("{{arguments}}", args);
  if (skill.meta.tools.length === 0) return filled;
  return `${filled}\n\n${texts.allowedTools.replaceAll("{TOOLS}", skill.meta.tools.join(", "))}`;
}

/** The dynamic system part, rebuilt before every request: the environment, then the active SOPs. */
export function renderEnvironment(
  entries: ActiveSkillEntry[],
  context: { cwd: string; model: string },
  texts: DisclosureTexts,
): string {
  const lines = texts.environmentLines.map(
    (line) => `- ${line.replaceAll("{CWD}", context.cwd).replaceAll("{MODEL}", context.model)}`,
  );
  const environment = `${texts.environmentHeader}\n${lines.join("\n")}`;
  if (entries.length === 0) return environment;
  const skills = entries.map((entry) => `<skill name="${escapeXml(entry.name)}">\n${entry.rendered}\n</skill>`);
  return `${environment}\n\n${texts.activeSkillsIntro}\n\n<active_skills>\n${skills.join("\n")}\n</active_skills>`;
}
