/**
 * The skills a recorded agent may list in its requests and load into them: the `SKILL.md` folders
 * of Claude Code (`.claude/skills`), Codex and the Gemini CLI (`.codex/skills`, `.agents/skills`,
 * `.gemini/skills`) in the working folder, each folder above it and the user's home. Read once when
 * `record` or `proxy` starts, so the capture can tell a skill's index entry (its description) and its
 * loaded body apart from the text around them.
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { readSkillBody } from "./frontmatter.js";
import { scanSkillRoot } from "./scan.js";
import { loadSkillFile } from "./skill-file.js";

/** The folders, under a project folder or home, that the agents read skills from. */
const AGENT_SKILL_FOLDERS = [".claude/skills", ".codex/skills", ".agents/skills", ".gemini/skills"];

export interface AgentSkill {
  name: string;
  description: string;
  /** The file without its frontmatter, trimmed: what an agent inlines when it loads the skill. */
  body: string;
}

/** The skills of `cwd`, its parents and `home`, the nearest first; a name seen before is skipped. */
export function readAgentSkills(cwd: string, home = homedir()): AgentSkill[] {
  const folders: string[] = [];
  for (let folder = cwd; ; folder = dirname(folder)) {
    folders.push(folder);
    if (dirname(folder) === folder) break;
  }
  if (!folders.includes(home)) folders.push(home);
  const skills = new Map<string, AgentSkill>();
  for (const folder of folders)
    for (const sub of AGENT_SKILL_FOLDERS) {
      const root = join(folder, sub);
      for (const file of scanSkillRoot(root, "agents")) {
        const { skill } = loadSkillFile(file, { scope: "project", mode: "agents", root });
        if (skill && !skills.has(skill.name))
          skills.set(skill.name, { name: skill.name, description: skill.description, body: readSkillBody(file) });
      }
    }
  return [...skills.values()];
}
