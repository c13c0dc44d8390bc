/**
 * The nouns of the load_skill model (progressive disclosure): a catalog of skills over three layers,
 * of which the model first sees only names and descriptions, a set of active skills whose full SOP
 * enters the dynamic part of the system prompt, and the command tools a directory skill brings.
 */
import type { SkillDiagnostic } from "../types.js";

/** Where a catalog entry came from; a later layer overrides an earlier one by name. */
export type CatalogLayer = "builtin" | "user" | "project";
export const CATALOG_LAYERS: readonly CatalogLayer[] = ["builtin", "user", "project"];

/** The SKILL.md frontmatter fields this model reads. */
export interface DisclosedSkillMeta {
  name: string;
  description: string;
  /** Tool dependencies: names that must exist somewhere (system tool, the skill's own, the registry). */
  tools: string[];
  mode?: string;
  history?: string;
  model?: string;
}

/** One command tool of a directory skill's `tools.json`. */
export interface SkillToolSpec {
  name: string;
  description: string;
  /** A JSON Schema of type object: what the model sends, passed to the command as JSON on stdin. */
  inputSchema: Record<string, unknown>;
  /** Program and arguments; the program may not reach outside the skill root through `..`. */
  command: string[];
  /** The skill root: the command's working directory. */
  root: string;
}

export interface DisclosedSkill {
  meta: DisclosedSkillMeta;
  /** The SOP as read at start-up; load_skill re-reads the file and falls back to this copy. */
  body: string;
  entryPath: string;
  rootDir: string;
  layer: CatalogLayer;
  tools: SkillToolSpec[];
}

/** The three layer folders; a missing folder is an empty layer. */
export type CatalogDirs = Partial<Record<CatalogLayer, string>>;

export interface CatalogLoadResult {
  skills: DisclosedSkill[];
  diagnostics: SkillDiagnostic[];
}

/** Every sentence of this model that the model reads; they live in the profile. */
export interface DisclosureTexts {
  toolDescription: string;
  snippet: string;
  parameters: { name: string; arguments: string };
  catalogIntro: string;
  environmentHeader: string;
  /** `{CWD}` and `{MODEL}` are filled in. */
  environmentLines: string[];
  activeSkillsIntro: string;
  /** `{TOOLS}` becomes the comma-separated allowed tools. */
  allowedTools: string;
  /** `{NAME}` and `{COUNT}`. */
  loaded: string;
  /** `{NAME}`. */
  unknownSkill: string;
  /** `{NAME}` and `{TOOL}`: the warning for a skill dropped at start. */
  droppedSkill: string;
}
