/**
 * `load_skill`: the read-only system tool that activates a catalog skill. The SKILL.md body is read
 * again at load time, so an edit made after start-up is what the model gets; when that read fails
 * the start-up copy is used. The skill's own tools are registered at once — a run that already took
 * its tool snapshot sees them only from its next run.
 */
import { readFileSync } from "node:fs";
import type { RuntimeTool } from "../../runtime/types.js";
import type { ActiveSkills } from "./active.js";
import { parseSkillText } from "./package.js";
import { renderInvocation } from "./render.js";
import type { DisclosedSkill, DisclosureTexts, SkillToolSpec } from "./types.js";

export const LOAD_SKILL_TOOL = "load_skill";

export interface LoadSkillDeps {
  /** The catalog after start-up validation, by name. */
  lookup(name: string): DisclosedSkill | undefined;
  active: ActiveSkills;
  /** Registers one of the skill's command tools; returns false when it could not be registered. */
  registerTool(tool: SkillToolSpec): boolean;
  texts: DisclosureTexts;
}

/** The tool's result envelope: one JSON object the model can read, success or failure alike. */
function envelope(ok: boolean, fields: Record<string, unknown>): string {
  return JSON.stringify({ ok, tool: LOAD_SKILL_TOOL, ...fields });
}

export function createLoadSkillTool(deps: LoadSkillDeps): RuntimeTool {
  const { texts } = deps;
  return {
    name: LOAD_SKILL_TOOL,
    label: LOAD_SKILL_TOOL,
    description: texts.toolDescription,
    promptSnippet: texts.snippet,
    parameters: {
      type: "object",
      properties: {
        name: { type: "string", description: texts.parameters.name },
        arguments: { type: "string", description: texts.parameters.arguments },
      },
      required: ["name"],
    },
    async execute(args) {
      const name = typeof args.name === "string" ? args.name : "";
      const skill = deps.lookup(name);
      if (!skill) {
        const message = texts.unknownSkill.replaceAll("{NAME}", name);
        return { content: envelope(false, { code: "unknown_skill", message }), isError: true };
      }
      const body = rereadBody(skill);
      deps.active.activate(
        skill.meta.name,
        renderInvocation(skill, body, typeof args.arguments === "string" ? args.arguments : "", texts),
      );
      const registered = skill.tools.filter((tool) => deps.registerTool(tool)).length;
      const message = texts.loaded.replaceAll("{NAME}", skill.meta.name).replaceAll("{COUNT}", String(registered));
      return { content: envelope(true, { message, data: { skill: skill.meta.name, registered_tools: registered } }) };
    },
  };
}

/** The body as it is on disk now, or the start-up copy when the file cannot be read or parsed. */
function rereadBody(skill: DisclosedSkill): string {
  try {
    return parseSkillText(readFileSync(skill.entryPath, "utf8")).body;
  } catch {
    return skill.body;
  }
}
