import { type SearchableTool, toSearchableTools } from "./search.js";
import type { ServerManager } from "./server-manager.js";
import type { McpSettings, ToolPrefixMode } from "./types.js";

function prefixModeOf(entryMode: ToolPrefixMode | undefined, settings: McpSettings): ToolPrefixMode {
  return entryMode ?? settings.toolPrefix ?? "server";
}

/**
 * Every tool the gateway can find or call: each enabled server's tools (live when connected, else
 * from a valid cache) and resource readers, under their prefixed names. Servers in failure backoff
 * offer nothing until the backoff ends.
 */
export function catalogTools(manager: ServerManager, settings: McpSettings, server?: string): SearchableTool[] {
  const tools: SearchableTool[] = [];
  for (const state of manager.enabled()) {
    if (server !== undefined && state.name !== server) continue;
    if (manager.backoffAgoSec(state.name) !== undefined) continue;
    const metadata = manager.metadata(state.name);
    if (!metadata) continue;
    const resources = state.entry.exposeResources === false ? [] : metadata.resources;
    const keywords = state.entry.searchKeywords;
    for (const tool of toSearchableTools(
      state.name,
      prefixModeOf(state.entry.toolPrefix, settings),
      metadata.tools,
      resources,
    )) {
      tools.push(keywords ? { ...tool, keywords } : tool);
    }
  }
  return tools;
}
