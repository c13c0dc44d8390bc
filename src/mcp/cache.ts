/**
 * The metadata cache, `<agentDir>/mcp-cache.json`: what each server offered when it was last
 * connected, so tools can be registered and searched without starting the server.
 * File format, entry key order and validity rules follow pi-mcp-adapter byte for byte.
 */

import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { replaceFile } from "../files/replace-file.js";
import { interpolateEnvRecord, interpolateEnvVars } from "./config.js";
import type { CacheEntry, CacheFile, McpServerEntry } from "./types.js";

const CACHE_VERSION = 1;
/** Entries older than this are stale whatever the server said about its own lifetime. */
export const CACHE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export function defaultCachePath(agentDir: string): string {
  return join(agentDir, "mcp-cache.json");
}

/**
 * JSON with object keys sorted at every depth and `undefined` written as a bare `undefined`, so
 * an absent field still occupies its slot and the string (and its hash) is the same for equal configs.
 */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${stableStringify(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/**
 * The parts of a server entry that decide which tools, resources and prompts it offers — and
 * nothing else: lifecycle, timeouts, debug, directTools and toolPrefix change how the tools are
 * used, not what they are, so editing them must not throw the cache away.
 */
export function configIdentity(
  entry: McpServerEntry,
  env: NodeJS.ProcessEnv = process.env,
  baseDir: string = process.cwd(),
): Record<string, unknown> {
  const headersCommand = entry.requestHeadersCommand;
  return {
    command: entry.command,
    args: entry.args,
    socket: resolveConfigPath(entry.socket, env, baseDir),
    env: interpolateEnvRecord(entry.env, env),
    cwd: resolveConfigPath(entry.cwd, env, baseDir),
    url: entry.url === undefined ? undefined : interpolateEnvVars(entry.url, env),
    headers: interpolateEnvRecord(entry.headers, env),
    requestHeadersCommand: headersCommand && {
      command: headersCommand.command === undefined ? undefined : interpolateEnvVars(headersCommand.command, env),
      args: headersCommand.args?.map((arg) => interpolateEnvVars(arg, env)),
      env: interpolateEnvRecord(headersCommand.env, env),
      timeoutMs: headersCommand.timeoutMs,
    },
    auth: entry.auth,
    protocolVersion: entry.protocolVersion,
    bearerToken: resolveBearerToken(entry, env),
    bearerTokenEnv: entry.bearerTokenEnv,
    exposeResources: entry.exposeResources,
    includeTools: entry.includeTools,
    excludeTools: entry.excludeTools,
  };
}

/** sha256 hex of the stable rendering of `configIdentity`; `baseDir` anchors a relative `cwd`/`socket`. */
export function computeConfigHash(
  entry: McpServerEntry,
  env: NodeJS.ProcessEnv = process.env,
  baseDir: string = process.cwd(),
): string {
  return createHash("sha256")
    .update(stableStringify(configIdentity(entry, env, baseDir)))
    .digest("hex");
}

/** Expands `${VAR}` and a leading `~`, then makes the path absolute. */
function resolveConfigPath(path: string | undefined, env: NodeJS.ProcessEnv, baseDir: string): string | undefined {
  if (path === undefined) return undefined;
  const expanded = interpolateEnvVars(path, env);
  if (expanded === "~" || expanded.startsWith("~/")) return join(env.HOME ?? homedir(), expanded.slice(1));
  return resolve(baseDir, expanded);
}

/** The token actually sent: the configured one (interpolated), else the named variable's value. */
function resolveBearerToken(entry: McpServerEntry, env: NodeJS.ProcessEnv): string | undefined {
  if (entry.bearerToken !== undefined) return interpolateEnvVars(entry.bearerToken, env);
  return entry.bearerTokenEnv ? env[entry.bearerTokenEnv] : undefined;
}

export type CacheState = "missing" | "corrupt" | "ok";

/** A file that is not JSON, or not version 1, counts as corrupt and reads as empty. */
export function readCache(path: string): { state: CacheState; file: CacheFile } {
  const empty = (): CacheFile => ({ version: CACHE_VERSION, servers: {} });
  if (!existsSync(path)) return { state: "missing", file: empty() };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return { state: "corrupt", file: empty() };
  }
  const candidate = parsed as Partial<CacheFile> | null;
  if (
    typeof candidate !== "object" ||
    candidate === null ||
    candidate.version !== CACHE_VERSION ||
    typeof candidate.servers !== "object" ||
    candidate.servers === null ||
    Array.isArray(candidate.servers)
  ) {
    return { state: "corrupt", file: empty() };
  }
  return { state: "ok", file: candidate as CacheFile };
}

/**
 * Usable when written for the same config and still fresh. A server's `ttlMs` can only shorten
 * the 7-day limit; 0 means "never reuse". A `ttlMs` that is not a safe integer ≥ 0 is ignored.
 */
export function isEntryValid(entry: CacheEntry | undefined, configHash: string, now: number = Date.now()): boolean {
  if (typeof entry !== "object" || entry === null) return false;
  if (entry.configHash !== configHash) return false;
  if (typeof entry.cachedAt !== "number" || !Number.isFinite(entry.cachedAt)) return false;
  const age = now - entry.cachedAt;
  const ttlMs = entry.ttlMs;
  if (typeof ttlMs === "number" && Number.isSafeInteger(ttlMs) && ttlMs >= 0) {
    return ttlMs !== 0 && age < Math.min(CACHE_MAX_AGE_MS, ttlMs);
  }
  return age <= CACHE_MAX_AGE_MS;
}

/** An entry with its keys, and its tools' and resources' keys, in the order the file holds them. */
export function buildCacheEntry(parts: CacheEntry): CacheEntry {
  return withoutUndefined({
    configHash: parts.configHash,
    tools: parts.tools.map((tool) =>
      withoutUndefined({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        uiResourceUri: tool.uiResourceUri,
        uiVisibility: tool.uiVisibility,
        uiStreamMode: tool.uiStreamMode,
      }),
    ),
    resources: parts.resources.map((resource) =>
      withoutUndefined({ uri: resource.uri, name: resource.name, description: resource.description }),
    ),
    prompts: parts.prompts,
    instructions: parts.instructions,
    ttlMs: parts.ttlMs,
    cacheScope: parts.cacheScope,
    cachedAt: parts.cachedAt,
  });
}

/** Writes `{"version":1,"servers":{}}`: "no servers cached yet", as opposed to no file at all. */
export function initEmptyCache(path: string): void {
  writeCacheFile(path, { version: CACHE_VERSION, servers: {} });
}

/**
 * Replaces one server's entry and keeps the others as found, re-reading the file first so that
 * entries written by another process since we last looked survive.
 */
export function writeCacheEntry(path: string, server: string, entry: CacheEntry): void {
  const { file } = readCache(path);
  // A computed key defines an own property even for a server named "__proto__".
  writeCacheFile(path, { version: CACHE_VERSION, servers: { ...file.servers, [server]: buildCacheEntry(entry) } });
}

export function removeCacheEntry(path: string, server: string): void {
  const { state, file } = readCache(path);
  if (state !== "ok" || !Object.hasOwn(file.servers, server)) return;
  const servers = Object.fromEntries(Object.entries(file.servers).filter(([name]) => name !== server));
  writeCacheFile(path, { version: CACHE_VERSION, servers });
}

/** Whole or not at all, so a reader never sees a half-written cache. */
function writeCacheFile(path: string, file: CacheFile): void {
  replaceFile(path, JSON.stringify(file));
}

/** Drops undefined-valued keys, so an entry in memory has exactly the keys the file will hold. */
function withoutUndefined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}
