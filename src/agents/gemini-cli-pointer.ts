/**
 * The Gemini CLI with an API key reads GOOGLE_GEMINI_BASE_URL (packages/core contentGenerator.ts), as
 * `new GoogleGenAI()` of @google/genai does (node_client.ts): one variable points both. Signed in with
 * Google it talks to Code Assist at CODE_ASSIST_ENDPOINT (its `/v1internal:` methods; the capture
 * reads the Gemini requests they wrap), which points it at the proxy's Code Assist route.
 *
 * Since 0.44 the CLI also takes that variable as a choice of auth type ("gateway") when no settings
 * file selects one, and its own check then refuses the choice: it stops with "Invalid auth method
 * selected." (exit 41) before any request (google-gemini/gemini-cli#27550, still so in 0.61.0). With
 * `security.auth.selectedType` set to "gemini-api-key" it runs and sends to the proxy. Setting that
 * for the user would mean a stand-in home (GEMINI_CLI_HOME moves every path the CLI derives from home,
 * which shows in its prompt) or a system defaults file (read only when root owns it and every folder
 * above it), so record says so before the command starts instead, as it does when the CLI's auth
 * type sends elsewhere (Vertex AI to GOOGLE_VERTEX_BASE_URL).
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { type ParseError, parse } from "jsonc-parser";
import { isTable, readUserConfig } from "./pointer-files.js";
import type { AgentPointer, PointerContext } from "./pointer-types.js";

/**
 * The auth type whose requests reach neither GOOGLE_GEMINI_BASE_URL nor CODE_ASSIST_ENDPOINT, and where
 * they go instead. A Google sign-in and the machine's Google credentials talk to Code Assist, which
 * CODE_ASSIST_ENDPOINT points at the proxy (code_assist/server.ts of the CLI 0.61.0).
 */
const ELSEWHERE: Record<string, string> = {
  "vertex-ai": "Vertex AI, whose requests go to GOOGLE_VERTEX_BASE_URL (left alone: another API's paths)",
};

const SYSTEM_SETTINGS: Partial<Record<NodeJS.Platform, string>> = {
  darwin: "/Library/Application Support/GeminiCli/settings.json",
  win32: "C:\\ProgramData\\gemini-cli\\settings.json",
};

/** The CLI's user settings file: under GEMINI_CLI_HOME when set, else the home folder. */
function geminiUserSettings(env: NodeJS.ProcessEnv): string {
  return join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini", "settings.json");
}

/** The settings files the CLI merges, the one that wins first: system, workspace, user, system defaults. */
function settingsFiles({ env, cwd }: PointerContext): string[] {
  const system =
    env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || SYSTEM_SETTINGS[process.platform] || "/etc/gemini-cli/settings.json";
  const defaults = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), "system-defaults.json");
  return [system, join(cwd, ".gemini", "settings.json"), geminiUserSettings(env), defaults];
}

/** A settings file's `security.auth.selectedType`; a file that does not parse is the CLI's to report. */
function selectedType(file: string): string | undefined {
  const text = readUserConfig(file, "Gemini CLI settings");
  if (text === undefined) return undefined;
  const errors: ParseError[] = [];
  const settings: unknown = parse(text, errors);
  if (errors.length > 0 || !isTable(settings) || !isTable(settings.security) || !isTable(settings.security.auth))
    return undefined;
  const type = settings.security.auth.selectedType;
  return typeof type === "string" ? type : undefined;
}

/** The auth type the CLI takes from the environment before it looks at GOOGLE_GEMINI_BASE_URL. */
function typeFromEnvironment(env: NodeJS.ProcessEnv): { type: string; from: string } | undefined {
  if (env.GOOGLE_GENAI_USE_GCA === "true") return { type: "oauth-personal", from: "GOOGLE_GENAI_USE_GCA" };
  if (env.GOOGLE_GENAI_USE_VERTEXAI === "true") return { type: "vertex-ai", from: "GOOGLE_GENAI_USE_VERTEXAI" };
  return undefined;
}

function geminiCliCaveat(ctx: PointerContext): string | undefined {
  let chosen: { type: string; from: string } | undefined;
  for (const file of settingsFiles(ctx)) {
    const type = selectedType(file);
    if (type !== undefined) {
      chosen = { type, from: file };
      break;
    }
  }
  chosen ??= typeFromEnvironment(ctx.env);
  if (chosen === undefined)
    return ctx.env.GEMINI_API_KEY
      ? `the Gemini CLI stops at "Invalid auth method selected" when GOOGLE_GEMINI_BASE_URL is set and no settings file selects an auth type: to record it with your GEMINI_API_KEY, set security.auth.selectedType to "gemini-api-key" in ${geminiUserSettings(ctx.env)}`
      : undefined;
  const elsewhere = ELSEWHERE[chosen.type];
  return elsewhere && `the Gemini CLI's ${chosen.from} selects ${elsewhere}: they will not reach the proxy`;
}

export const geminiCliPointer: AgentPointer = {
  agent: "Gemini CLI",
  api: "Gemini generateContent",
  point: ({ bases }) => ({ GOOGLE_GEMINI_BASE_URL: bases.gemini, CODE_ASSIST_ENDPOINT: bases["code-assist"] }),
  caveat: geminiCliCaveat,
};
