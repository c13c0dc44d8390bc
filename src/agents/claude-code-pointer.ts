/**
 * Claude Code reads ANTHROPIC_BASE_URL (ANTHROPIC_VERTEX_BASE_URL on Vertex AI), and turns MCP tool search off by default when it names a host
 * that is not Anthropic's (its env-vars page): the proxy forwards every block untouched, so tool
 * search is left on, as the agent would send it to Anthropic, unless the user chose otherwise.
 * An `env` block in one of its settings files wins over the environment it is started with, so a
 * base URL set there keeps it from the proxy: record cannot change that without touching the user's
 * files, so it says so before the command starts.
 */
import { join } from "node:path";
import { isTable, readUserConfig, userConfigDir } from "./pointer-files.js";
import type { AgentPointer, PointerContext } from "./pointer-types.js";

/** The settings files whose `env` Claude Code applies: the user's, then the project's shared and local ones. */
function settingsFiles({ env, cwd }: PointerContext): string[] {
  const user = userConfigDir(env, "CLAUDE_CONFIG_DIR", ".claude");
  return [
    join(user, "settings.json"),
    join(cwd, ".claude", "settings.json"),
    join(cwd, ".claude", "settings.local.json"),
  ];
}

/** Whether a settings file sets ANTHROPIC_BASE_URL in its env block; a file that does not parse is Claude Code's to report. */
function setsBaseUrl(file: string): boolean {
  try {
    const settings: unknown = JSON.parse(readUserConfig(file, "Claude Code settings") ?? "{}");
    return isTable(settings) && isTable(settings.env) && settings.env.ANTHROPIC_BASE_URL !== undefined;
  } catch {
    return false;
  }
}

export const claudeCodePointer: AgentPointer = {
  agent: "Claude Code",
  api: "Anthropic Messages",
  point: ({ bases, env }) => ({
    ANTHROPIC_BASE_URL: bases.anthropic,
    // Read only on Vertex AI (CLAUDE_CODE_USE_VERTEX): its requests go to `<base>/projects/…`.
    ANTHROPIC_VERTEX_BASE_URL: bases.vertex,
    ...(env.ENABLE_TOOL_SEARCH === undefined && { ENABLE_TOOL_SEARCH: "true" }),
  }),
  caveat(ctx) {
    const file = settingsFiles(ctx).find(setsBaseUrl);
    return (
      file &&
      `Claude Code's ${file} sets ANTHROPIC_BASE_URL, which wins over record's: its requests will not reach the proxy`
    );
  },
};
