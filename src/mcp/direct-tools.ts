/**
 * Direct tools: each MCP tool (and resource reader) of a direct-configured server registered as a
 * tool of its own, named by its prefix mode, with the cached `inputSchema` as its parameters.
 */

import type { JsonSchema } from "../providers/types.js";
import type { RuntimeTool } from "../runtime/types.js";
import { callServerTool } from "./call.js";
import { catalogTools } from "./catalog.js";
import { RESERVED_TOOL_NAMES } from "./naming.js";
import { directToolUnavailableText } from "./render.js";
import type { McpRuntime } from "./runtime-context.js";
import type { SearchableTool } from "./search.js";
import { truncateAtWord } from "./text.js";
import type { DirectToolsSetting } from "./types.js";

const SNIPPET_LENGTH = 100;
/** Top-level schema keys a provider does not need; the rest is sent as the server wrote it. */
const DROPPED_SCHEMA_KEYS = new Set(["$schema", "additionalProperties"]);

/** A server gets direct tools for `true`, `"search"` or a non-empty list of tool names. */
export function isDirect(setting: DirectToolsSetting | undefined): boolean {
  return setting === true || setting === "search" || (Array.isArray(setting) && setting.length > 0);
}

/**
 * The per-server setting after `MCP_DIRECT_TOOLS` (`srv,srv2/tool`; `__none__` turns every server
 * off), which overrides the config when set.
 */
export function directSettingFor(
  server: string,
  configured: DirectToolsSetting | undefined,
  envValue: string | undefined,
): DirectToolsSetting | undefined {
  if (envValue === undefined || envValue.trim() === "") return configured;
  const specs = envValue
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (specs.includes("__none__")) return false;
  if (specs.includes(server)) return true;
  const tools = specs.filter((s) => s.startsWith(`${server}/`)).map((s) => s.slice(server.length + 1));
  return tools.length > 0 ? tools : false;
}

function directParameters(schema: Record<string, unknown> | undefined): JsonSchema {
  if (!schema) return { type: "object", properties: {} };
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !DROPPED_SCHEMA_KEYS.has(key))) as JsonSchema;
}

/** The tools a direct server offers for its setting, in cache order then resources. */
function selectedTools(rt: McpRuntime, server: string, setting: DirectToolsSetting): SearchableTool[] {
  const tools = catalogTools(rt.manager, rt.config.settings, server);
  return Array.isArray(setting) ? tools.filter((t) => setting.includes(t.originalName)) : tools;
}

export interface DirectToolSpec {
  tool: RuntimeTool;
  server: string;
  /** Registered but held inactive until a search finds it (`directTools: "search"`). */
  lazy: boolean;
}

/**
 * Every direct tool the config asks for, in config order; a reserved name is skipped and, when two
 * servers produce the same name, the first one keeps it. Only servers with metadata (a valid cache
 * or a live connection) contribute.
 */
export function buildDirectTools(rt: McpRuntime): DirectToolSpec[] {
  const specs: DirectToolSpec[] = [];
  const taken = new Set<string>();
  for (const state of rt.manager.enabled()) {
    const setting = rt.directSetting(state.name);
    if (!isDirect(setting) || !rt.manager.metadata(state.name)) continue;
    for (const found of selectedTools(rt, state.name, setting!)) {
      if (RESERVED_TOOL_NAMES.has(found.name) || taken.has(found.name)) continue;
      taken.add(found.name);
      specs.push({ tool: directTool(rt, found), server: state.name, lazy: setting === "search" });
    }
  }
  return specs;
}

function directTool(rt: McpRuntime, found: SearchableTool): RuntimeTool {
  const description = found.description || "(no description)";
  return {
    name: found.name,
    label: `MCP: ${found.originalName}`,
    description,
    promptSnippet: found.description
      ? truncateAtWord(found.description, SNIPPET_LENGTH)
      : rt.texts.direct.fallbackSnippet.replace("{server}", found.server),
    parameters: directParameters(found.resourceUri ? undefined : found.inputSchema),
    execute: (args) => callServerTool(rt.manager, found, args, () => rt.syncSurface(), directToolUnavailableText),
  };
}
