import { join } from "node:path";
import { PROJECT_ROOT } from "../project-root.js";

/** Every text the runtime puts in front of the model. See profiles/default.json. */
export interface ToolTexts {
  description: string;
  snippet?: string;
  guidelines?: string[];
  parameters: Record<string, string>;
}

export interface Profile {
  /** The file it was read from, named by errors in its texts. */
  file: string;
  name: string;
  systemPrompt: {
    intro: string;
    customTools: string;
    fileOpsGuideline: { bash: string; powershell: string; both: string };
    closingGuidelines: string[];
    docsHeader: string;
    docsBullets: string[];
  };
  tools: Record<string, ToolTexts>;
  skills: { intro: string; useRead: string; useBash: string; paths: string };
  /**
   * Texts of extensions (the MCP adapter reads `mcp`, the load_skill model `loadSkill`): mappings
   * opaque to the runtime, each checked by its extension's schema through `extensionTexts`.
   */
  extensions: Record<string, Record<string, unknown>>;
}

export const DEFAULT_PROFILE_PATH = join(PROJECT_ROOT, "profiles", "default.json");
