/**
 * Puts the load_skill model together for the runtime: the catalog from the three layers, an
 * extension that validates tool dependencies at start and registers `load_skill`, and the hook
 * through which the agent asks for the stable catalog block and the dynamic environment part.
 */
import type { Extension } from "../../runtime/types.js";
import type { SkillDiagnostic } from "../types.js";
import { ActiveSkills } from "./active.js";
import { dropUnsatisfiable, loadCatalog } from "./catalog.js";
import { createLoadSkillTool, LOAD_SKILL_TOOL } from "./load-skill-tool.js";
import { renderCatalog, renderEnvironment } from "./render.js";
import { createSkillTool } from "./skill-tool.js";
import type { CatalogDirs, DisclosedSkill, DisclosureTexts } from "./types.js";

/** Tools that exist whatever the registry holds; a skill may always depend on them. */
const SYSTEM_TOOLS = [LOAD_SKILL_TOOL];

export interface DisclosureOptions {
  dirs: CatalogDirs;
  texts: DisclosureTexts;
  cwd: string;
  model: string;
}

export interface Disclosure {
  /** Every skill found at start, before dependency validation (for `{{skill:name}}` and listings). */
  found: DisclosedSkill[];
  /** Parse warnings now; dependency drops are added when the extension starts. */
  diagnostics: SkillDiagnostic[];
  active: ActiveSkills;
  extension: Extension;
  /** The catalog the model sees: `found` minus the skills dropped when the extension started. */
  catalog(): DisclosedSkill[];
  /** The stable part's skills block: the catalog, while load_skill is active. */
  block(activeToolNames: string[]): string;
  /** The dynamic part, rebuilt before every request. */
  environment(): string;
}

export function createDisclosure(options: DisclosureOptions): Disclosure {
  const { texts } = options;
  const { skills: found, diagnostics } = loadCatalog(options.dirs);
  const active = new ActiveSkills();
  let catalog: DisclosedSkill[] = [];

  const extension: Extension = (api) => {
    const available = new Set([...SYSTEM_TOOLS, ...api.getAllTools().map((tool) => tool.name)]);
    const checked = dropUnsatisfiable(found, available, (skill, tool) =>
      texts.droppedSkill.replaceAll("{NAME}", skill.meta.name).replaceAll("{TOOL}", tool),
    );
    catalog = checked.kept;
    diagnostics.push(...checked.diagnostics);
    api.registerTool(
      createLoadSkillTool({
        lookup: (name) => catalog.find((skill) => skill.meta.name === name),
        active,
        texts,
        registerTool: (spec) => {
          api.registerTool(createSkillTool(spec));
          return api.getAllTools().some((tool) => tool.name === spec.name);
        },
      }),
    );
  };

  return {
    found,
    diagnostics,
    active,
    extension,
    catalog: () => catalog,
    block: (activeToolNames) => (activeToolNames.includes(LOAD_SKILL_TOOL) ? renderCatalog(catalog, texts) : ""),
    environment: () => renderEnvironment(active.entries(), { cwd: options.cwd, model: options.model }, texts),
  };
}
