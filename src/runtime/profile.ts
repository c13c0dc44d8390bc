import { join } from "node:path";
import { PROJECT_ROOT } from "../project-root.js";
import type { JsonSchema } from "../providers/types.js";

/** Every text the runtime puts in front of the model. See profiles/default.json. */
export interface ToolTexts {
  description: string;
  snippet?: string;
  guidelines?: string[];
  parameters: Record<string, string>;
  /**
   * The parameter schema sent as it is, in place of the one the runtime builds from `parameters`:
   * what `profile import` keeps when a captured schema's structure is not the runtime's.
   */
  schema?: JsonSchema;
}

/** The guideline texts, which both forms of the system prompt list under `{GUIDELINES}` or `Guidelines:`. */
interface GuidelineTexts {
  /** An empty text adds no line (an imported profile that never saw that variant). */
  fileOpsGuideline: { bash: string; powershell: string; both: string };
  closingGuidelines: string[];
}

/** pi's layout, section by section (profiles/default.json). */
export interface PromptSections extends GuidelineTexts {
  intro: string;
  customTools: string;
  docsHeader: string;
  docsBullets: string[];
}

/**
 * A whole prompt as lines with placeholders (`{TOOLS}`, `{GUIDELINES}`, `{PKG}`, `{APPEND}`,
 * `{CONTEXT}`, `{SKILLS}`, `{CWD}`, `{DATE}`): what `profile import` recovers from a capture, so an
 * agent whose prompt does not follow pi's sections is reproduced as sent.
 */
export interface PromptTemplate extends GuidelineTexts {
  template: string[];
}

export type SystemPromptTexts = PromptSections | PromptTemplate;

export interface Profile {
  /** The file it was read from, named by errors in its texts. */
  file: string;
  name: string;
  systemPrompt: SystemPromptTexts;
  tools: Record<string, ToolTexts>;
  skills: { intro: string; useRead: string; useBash: string; paths: string };
  /**
   * Texts of extensions (the MCP adapter reads `mcp`, the load_skill model `loadSkill`): mappings
   * opaque to the runtime, each checked by its extension's schema through `extensionTexts`.
   */
  extensions: Record<string, Record<string, unknown>>;
}

export const DEFAULT_PROFILE_PATH = join(PROJECT_ROOT, "profiles", "default.json");
