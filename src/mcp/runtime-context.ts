import type { ExtensionAPI } from "../runtime/types.js";
import type { SearchableTool } from "./search.js";
import type { ServerManager } from "./server-manager.js";
import type { DirectToolsSetting, McpConfig } from "./types.js";

/** The adapter's model-facing texts, from the profile's `extensions.mcp` section. */
export interface McpTexts {
  proxy: {
    snippet: string;
    intro: string;
    searchModeLine: string;
    disabledLine: string;
    usage: string[];
    precedence: string;
    parameters: Record<string, string>;
    actionUnsupported: string;
    /**
     * The gateway's parameter schema sent as it is, in place of the one built from `parameters`: what
     * `profile import` keeps when another adapter version shapes it differently.
     */
    schema?: Record<string, unknown>;
  };
  namespace: { snippet: string; description: string; parameters: { tool: string; args: string } };
  direct: { fallbackSnippet: string };
  script: {
    snippet: string;
    description: string;
    parameters: { code: string; timeoutMs: string };
    noOutput: string;
    timedOut: string;
    failed: string;
  };
}

/** What the adapter's tools share: the runtime API, the connections, and the tool-surface hooks. */
export interface McpRuntime {
  api: ExtensionAPI;
  manager: ServerManager;
  config: McpConfig;
  texts: McpTexts;
  directSetting(server: string): DirectToolsSetting | undefined;
  requiresApproval(tool: SearchableTool): boolean;
  /** Activate the lazy direct tools a search found (`directTools: "search"`); returns their names. */
  activateSearchMatches(matches: SearchableTool[]): string[];
  /** Re-register namespace and direct tools after a server's metadata changed. */
  syncSurface(): void;
}
