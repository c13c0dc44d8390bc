import { homedir } from "node:os";
import type { Extension } from "../runtime/types.js";
import { defaultCachePath, initEmptyCache, readCache } from "./cache.js";
import { loadMcpConfig } from "./config.js";
import { directSettingFor, isDirect } from "./direct-tools.js";
import type { KeepAliveTimings } from "./keep-alive.js";
import { createProxyTool } from "./proxy-tool.js";
import type { McpRuntime, McpTexts } from "./runtime-context.js";
import { createScriptTool } from "./script-tool.js";
import type { SearchableTool } from "./search.js";
import { ServerManager } from "./server-manager.js";
import { McpSurface } from "./surface.js";

export interface McpExtensionOptions {
  texts: McpTexts;
  /** `--mcp-config`. */
  configPath?: string;
  /** `PI_MCP_CONFIG_MODE=exclusive`: only the agent dir's mcp.json or the `--mcp-config` file. */
  exclusive?: boolean;
  cachePath?: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** Where relative server `cwd`s and the stub paths in fixtures resolve from. */
  baseDir?: string;
  /** Keep-alive health check and reconnect backoff (default 30 s, 30 s → 5 min); tests shorten them. */
  keepAlive?: Partial<KeepAliveTimings>;
  /** Servers the caller knows will be connected: their processes start with the adapter (`startEarly`). */
  startEarly?: readonly string[];
}

const BOOTSTRAP_CONCURRENCY = 10;

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

function matchesApproval(setting: string[] | boolean | undefined, tool: SearchableTool): boolean {
  if (setting === true) return true;
  if (!Array.isArray(setting)) return false;
  return setting.includes(tool.originalName) || setting.includes(tool.name);
}

/** The MCP adapter as a runtime extension: it sees the runtime only through the extension API. */
export function mcpExtension(options: McpExtensionOptions): Extension {
  return async (api) => {
    const env = options.env ?? process.env;
    const config = loadMcpConfig({
      cwd: api.cwd,
      agentDir: api.agentDir,
      home: options.home ?? homedir(),
      configPath: options.configPath,
      exclusive: options.exclusive,
      env,
    });
    const cachePath = options.cachePath ?? defaultCachePath(api.agentDir);
    const cache = readCache(cachePath);
    // A missing file means a first run: create it and fill it from every server. A corrupt one is
    // reset without that bootstrap.
    if (cache.state !== "ok") initEmptyCache(cachePath);
    api.emit("mcp_cache_read", { path: cachePath, state: cache.state, servers: Object.keys(cache.file.servers) });

    let rt: McpRuntime;
    const manager = new ServerManager(
      config,
      {
        cachePath,
        env,
        baseDir: options.baseDir ?? process.cwd(),
        log: (type, data) => api.emit(type, data),
        onMetadata: () => rt.syncSurface(),
        keepAlive: options.keepAlive,
        sampling: !config.settings.sampling
          ? undefined
          : async (request) =>
              api.complete({
                systemPrompt: request.systemPrompt,
                messages: request.messages.map((m) =>
                  m.role === "user"
                    ? { role: "user", content: m.text }
                    : { role: "assistant", text: m.text, toolCalls: [] },
                ),
                maxTokens: request.maxTokens,
              }),
      },
      cache.file.servers,
    );
    for (const name of options.startEarly ?? []) manager.startEarly(name);
    let surface: McpSurface;
    rt = {
      api,
      manager,
      config,
      texts: options.texts,
      directSetting: (server) =>
        directSettingFor(
          server,
          manager.get(server)?.entry.directTools ?? config.settings.directTools,
          env.MCP_DIRECT_TOOLS,
        ),
      requiresApproval: (tool) => matchesApproval(manager.get(tool.server)?.entry.approveTools, tool),
      activateSearchMatches: (matches) => surface.activate(matches),
      syncSurface: () => surface.sync(),
    };
    const proxy = createProxyTool(rt);
    surface = new McpSurface(rt, proxy, config.settings.scriptMode === false ? undefined : createScriptTool(rt, proxy));
    surface.load();

    // Direct tools need metadata to exist at all, so a direct server without a valid cache starts now.
    const startNow = manager
      .enabled()
      .filter(
        (s) =>
          cache.state === "missing" ||
          s.entry.lifecycle === "eager" ||
          s.entry.lifecycle === "keep-alive" ||
          (isDirect(rt.directSetting(s.name)) && !s.cached),
      );
    await inBatches(startNow, BOOTSTRAP_CONCURRENCY, async (state) => {
      await manager.connect(state.name).catch(() => undefined);
    });
    api.on("session_shutdown", () => manager.closeAll());
  };
}
