import { homedir } from "node:os";
import type { Extension, ExtensionAPI } from "../runtime/types.js";
import { type CacheState, defaultCachePath, initEmptyCache, readCache } from "./cache.js";
import { loadMcpConfig } from "./config.js";
import { directSettingFor, isDirect } from "./direct-tools.js";
import type { KeepAliveTimings } from "./keep-alive.js";
import { createProxyTool } from "./proxy-tool.js";
import type { McpRuntime, McpTexts } from "./runtime-context.js";
import type { SamplingHandler } from "./sampling.js";
import { createScriptTool } from "./script-tool.js";
import type { SearchableTool } from "./search.js";
import { ServerManager } from "./server-manager.js";
import { McpSurface } from "./surface.js";
import type { McpConfig } from "./types.js";

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

/** The cache file, read (and created when missing or corrupt), its state told to the runtime's events. */
function openCache(api: ExtensionAPI, options: McpExtensionOptions): ReturnType<typeof readCache> & { path: string } {
  const path = options.cachePath ?? defaultCachePath(api.agentDir);
  const cache = readCache(path);
  // A missing file means a first run: create it and fill it from every server. A corrupt one is
  // reset without that bootstrap.
  if (cache.state !== "ok") initEmptyCache(path);
  api.emit("mcp_cache_read", { path, state: cache.state, servers: Object.keys(cache.file.servers) });
  return { path, ...cache };
}

/** A server's `sampling/createMessage`, answered by one text-only request of the runtime's model. */
function samplingThrough(api: ExtensionAPI): SamplingHandler {
  return async (request) =>
    api.complete({
      systemPrompt: request.systemPrompt,
      messages: request.messages.map((m) =>
        m.role === "user" ? { role: "user", content: m.text } : { role: "assistant", text: m.text, toolCalls: [] },
      ),
      maxTokens: request.maxTokens,
    });
}

/** The runtime context the proxy tool and the surface share, and the surface itself, loaded. */
function mountSurface(
  api: ExtensionAPI,
  options: McpExtensionOptions,
  manager: ServerManager,
  config: McpConfig,
  env: NodeJS.ProcessEnv,
): McpRuntime {
  let surface: McpSurface;
  const rt: McpRuntime = {
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
  return rt;
}

/**
 * Connects the servers that must run from the start: every one on a first run (to fill the cache),
 * eager and keep-alive ones, and a direct server without a valid cache, since direct tools need metadata
 * to exist at all.
 */
async function connectAtStart(rt: McpRuntime, cacheState: CacheState): Promise<void> {
  const startNow = rt.manager
    .enabled()
    .filter(
      (s) =>
        cacheState === "missing" ||
        s.entry.lifecycle === "eager" ||
        s.entry.lifecycle === "keep-alive" ||
        (isDirect(rt.directSetting(s.name)) && !s.cached),
    );
  await inBatches(startNow, BOOTSTRAP_CONCURRENCY, async (state) => {
    await rt.manager.connect(state.name).catch(() => undefined);
  });
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
    const cache = openCache(api, options);
    let rt: McpRuntime;
    const manager = new ServerManager(
      config,
      {
        cachePath: cache.path,
        env,
        baseDir: options.baseDir ?? process.cwd(),
        log: (type, data) => api.emit(type, data),
        onMetadata: () => rt.syncSurface(),
        keepAlive: options.keepAlive,
        sampling: config.settings.sampling ? samplingThrough(api) : undefined,
      },
      cache.file.servers,
    );
    for (const name of options.startEarly ?? []) manager.startEarly(name);
    rt = mountSurface(api, options, manager, config, env);
    await connectAtStart(rt, cache.state);
    api.on("session_shutdown", () => manager.closeAll());
  };
}
