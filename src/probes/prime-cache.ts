/**
 * A probe's MCP metadata cache, put in the state its `mcp.cache` names before the run starts, so the
 * measured run (on the runtime or on pi) meets a cache it did not write. `cache: valid` is primed by
 * connecting to the servers, or from the memo of an earlier priming (prime-memo.ts); nothing of the
 * priming reaches the run's capture or its wire log.
 */
import { dirname, join } from "node:path";
import { inputError } from "../errors.js";
import { initEmptyCache, readCache, writeCacheEntry } from "../mcp/cache.js";
import { loadMcpConfig } from "../mcp/config.js";
import { ServerManager } from "../mcp/server-manager.js";
import type { McpConfig } from "../mcp/types.js";
import { PRIME_MEMO_ENV, primeMemoKey, readPrimeMemo, savePrimeMemo } from "./prime-memo.js";
import { probeEnvironment } from "./probe-env.js";
import type { CacheSetup } from "./types.js";
import type { Workspace } from "./workspace.js";

/**
 * The cache file in the workspace's agent dir, in the state `cache` names, for the servers of
 * `configPath` (the config the agent will read); returns its path. `missing` leaves no file.
 */
export async function setUpMcpCache(
  cache: CacheSetup,
  configPath: string,
  workspace: Workspace,
  root: string,
): Promise<string> {
  const cachePath = join(workspace.agentDir, "mcp-cache.json");
  if (cache === "valid") await primeCache(configPath, cachePath, workspace, root, probeEnvironment(workspace.home));
  if (cache === "empty-file") initEmptyCache(cachePath);
  return cachePath;
}

/**
 * Fill the metadata cache from each server before the measured run; nothing of it reaches the wire
 * log. Entries primed before from the same builds and command lines are written again without
 * starting the servers (prime-memo.ts says why that is the same); others come from a connection.
 * `env` is the servers' environment; the memo's place and switch are the user's (this process's).
 */
async function primeCache(
  configPath: string,
  cachePath: string,
  workspace: Workspace,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  initEmptyCache(cachePath);
  const config = loadMcpConfig({
    cwd: workspace.cwd,
    agentDir: workspace.agentDir,
    home: workspace.home,
    configPath,
    exclusive: true,
    env,
  });
  // The servers start in the config's folder, and their relative paths are read from there.
  const baseDir = dirname(configPath);
  const key = process.env[PRIME_MEMO_ENV] === "off" ? null : primeMemoKey(config, root, env, baseDir);
  const primed = key && readPrimeMemo(key);
  if (primed) {
    for (const [name, entry] of primed) writeCacheEntry(cachePath, name, { ...entry, cachedAt: Date.now() });
    return;
  }
  await primeByConnecting(config, configPath, cachePath, baseDir, env);
  if (key) savePrimeMemo(key, Object.entries(readCache(cachePath).file.servers));
}

async function primeByConnecting(
  config: McpConfig,
  configPath: string,
  cachePath: string,
  baseDir: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const manager = new ServerManager(
    config,
    { cachePath, env, baseDir, log: () => undefined, onMetadata: () => undefined },
    {},
  );
  try {
    for (const server of manager.enabled()) {
      try {
        await manager.connect(server.name);
      } catch (error) {
        // A server that cannot start is bad input in the config, not a bug: name the server and the file.
        const field = `mcpServers.${server.name}.${server.entry.url ? "url" : "command"}`;
        throw inputError(
          configPath,
          field,
          `expected a server that starts, but connecting "${server.name}" failed: ${(error as Error).message}`,
        );
      }
    }
  } finally {
    await manager.closeAll();
  }
}
