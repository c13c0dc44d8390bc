import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inputError } from "../errors.js";

/** Every text the runtime puts in front of the model. See profiles/default.json. */
export interface ToolTexts {
  description: string;
  snippet?: string;
  guidelines?: string[];
  parameters: Record<string, string>;
}

export interface Profile {
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
  /** Texts of extensions (the MCP adapter reads `mcp`); opaque to the runtime. */
  extensions?: Record<string, Record<string, unknown>>;
}

export const DEFAULT_PROFILE_PATH = fileURLToPath(new URL("../../profiles/default.json", import.meta.url));

const REQUIRED_TOOLS = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"];

export function loadProfile(path = DEFAULT_PROFILE_PATH): Profile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw inputError(path, undefined, `expected a readable JSON profile (${(error as Error).message})`);
  }
  const profile = parsed as Profile;
  if (!profile || typeof profile !== "object" || typeof profile.systemPrompt?.intro !== "string") {
    throw inputError(path, "systemPrompt.intro", "expected a string");
  }
  for (const tool of REQUIRED_TOOLS) {
    if (typeof profile.tools?.[tool]?.description !== "string") {
      throw inputError(path, `tools.${tool}.description`, "expected a string");
    }
  }
  if (typeof profile.skills?.useRead !== "string") throw inputError(path, "skills.useRead", "expected a string");
  return profile;
}
