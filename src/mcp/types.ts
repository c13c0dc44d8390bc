/** The adapter's nouns: server configuration, the metadata cache, and the tools a server offers. */

export type Lifecycle = "lazy" | "eager" | "keep-alive" | "lazy-keep-alive";
export type ToolPrefixMode = "server" | "short" | "none" | "mcp";
export type DirectToolsSetting = boolean | string[] | "search";

export interface McpServerEntry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  inheritEnv?: boolean;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  socket?: string;
  auth?: unknown;
  bearerToken?: string;
  bearerTokenEnv?: string;
  requestHeadersCommand?: { command?: string; args?: string[]; env?: Record<string, string>; timeoutMs?: number };
  protocolVersion?: string;
  lifecycle?: Lifecycle;
  /** Minutes of inactivity before a connection is closed. */
  idleTimeout?: number;
  requestTimeoutMs?: number;
  exposeResources?: boolean;
  directTools?: DirectToolsSetting;
  toolPrefix?: ToolPrefixMode;
  includeTools?: string[];
  excludeTools?: string[];
  searchKeywords?: string[];
  approveTools?: string[] | boolean;
  disabled?: boolean;
  debug?: boolean;
}

export interface McpSettings {
  directTools?: DirectToolsSetting;
  toolPrefix?: ToolPrefixMode;
  disableProxyTool?: boolean;
  /** Minutes; the default idle timeout for lazy servers. */
  idleTimeout?: number;
  scriptMode?: boolean;
  requestTimeoutMs?: number;
  /**
   * Answer servers' `sampling/createMessage` with a nested model request. Off by default, as the
   * observed adapter declares no sampling capability in `initialize`.
   */
  sampling?: boolean;
}

export interface McpConfig {
  /** Servers in config order. */
  servers: { name: string; entry: McpServerEntry }[];
  settings: McpSettings;
  /** The files that contributed, in the order they were merged. */
  sources: string[];
}

export interface CachedTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  uiResourceUri?: string;
  uiVisibility?: unknown;
  uiStreamMode?: unknown;
}

export interface CachedResource {
  uri: string;
  name: string;
  description?: string;
}

export interface CachedPrompt {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

/** One server's entry in `mcp-cache.json`; keys in the order they are written. */
export interface CacheEntry {
  configHash: string;
  tools: CachedTool[];
  resources: CachedResource[];
  prompts?: CachedPrompt[];
  instructions?: string;
  ttlMs?: number;
  cacheScope?: string;
  cachedAt: number;
}

export interface CacheFile {
  version: 1;
  servers: Record<string, CacheEntry>;
}
