/**
 * The catalog: every skill of the builtin, user and project layers, scanned in that order so a later
 * layer overrides an earlier one by name (project > user > builtin). A skill that fails to parse
 * is a warning and never stops the others.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SKILL_FILE_NAME, type SkillDiagnostic } from "../types.js";
import { parseSkillPackage } from "./package.js";
import { CATALOG_LAYERS, type CatalogDirs, type CatalogLoadResult, type DisclosedSkill } from "./types.js";

export function loadCatalog(dirs: CatalogDirs): CatalogLoadResult {
  const byName = new Map<string, DisclosedSkill>();
  const diagnostics: SkillDiagnostic[] = [];
  for (const layer of CATALOG_LAYERS) {
    const dir = dirs[layer];
    if (!dir) continue;
    for (const entryPath of layerEntries(dir)) {
      try {
        const skill = parseSkillPackage(entryPath, layer);
        byName.set(skill.meta.name, skill);
      } catch (error) {
        diagnostics.push({ type: "warning", message: (error as Error).message, path: entryPath });
      }
    }
  }
  return { skills: sortedByName([...byName.values()]), diagnostics };
}

/** `<layer>/<name>/SKILL.md` (a directory skill) and loose `<layer>/<name>.md` files, in byte order. */
function layerEntries(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  } catch {
    return []; // a missing layer is an empty layer
  }
  return names.flatMap((name) => {
    if (name.startsWith(".")) return [];
    const path = join(dir, name);
    const skillFile = join(path, SKILL_FILE_NAME);
    if (isFile(skillFile)) return [skillFile];
    return name.endsWith(".md") && isFile(path) ? [path] : [];
  });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Name order keeps the catalog text stable whatever order the layers were written in. */
function sortedByName(skills: DisclosedSkill[]): DisclosedSkill[] {
  return skills.sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0));
}

/**
 * Drops the skills whose declared tool dependencies exist nowhere: not a protected system tool, not
 * one of the skill's own tools.json tools, not in the registry. Advertising them would promise a
 * procedure the model cannot carry out.
 */
export function dropUnsatisfiable(
  skills: DisclosedSkill[],
  available: ReadonlySet<string>,
  warning: (skill: DisclosedSkill, tool: string) => string,
): { kept: DisclosedSkill[]; diagnostics: SkillDiagnostic[] } {
  const kept: DisclosedSkill[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  for (const skill of skills) {
    const own = new Set(skill.tools.map((t) => t.name));
    const missing = skill.meta.tools.find((tool) => !available.has(tool) && !own.has(tool));
    if (missing === undefined) kept.push(skill);
    else diagnostics.push({ type: "warning", message: warning(skill, missing), path: skill.entryPath });
  }
  return { kept, diagnostics };
}
