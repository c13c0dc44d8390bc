import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CreateMessageRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { buildCacheEntry, computeConfigHash, isEntryValid, writeCacheEntry } from "./cache.js";
import type { CacheEntry, CachedPrompt, CachedResource, CachedTool, McpConfig, McpServerEntry } from "./types.js";

/** What a server offers: from a live connection, or from its cache entry when it is valid. */
export interface ServerMetadata {
  tools: CachedTool[];
  resources: CachedResource[];
  prompts?: CachedPrompt[];
  instructions?: string;
}

export interface ServerState {
  name: string;
  entry: McpServerEntry;
  configHash: string;
  /** The cache entry, kept only while valid. */
  cached?: CacheEntry;
  live?: ServerMetadata;
  client?: Client;
  connecting?: Promise<ServerState>;
  failedAt?: number;
  stderrTail: string[];
  idleTimer?: NodeJS.Timeout;
}

export type SamplingHandler = (request: {
  systemPrompt?: string;
  messages: { role: "user" | "assistant"; text: string }[];
  maxTokens?: number;
}) => Promise<string>;

export interface ServerManagerOptions {
  cachePath: string;
  env: NodeJS.ProcessEnv;
  /** Resolves relative `cwd` values of server entries. */
  baseDir: string;
  /** Event log of the run (connects, failures, cache writes). */
  log(type: string, data: Record<string, unknown>): void;
  /** Called after a server's metadata changed, so the tool surface can re-sync. */
  onMetadata(server: string): void;
  sampling?: SamplingHandler;
  now?: () => number;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const INIT_TIMEOUT_MS = 30_000;
const FAILURE_BACKOFF_MS = 60_000;
const DEFAULT_IDLE_MINUTES = 10;
const STDERR_LINES_KEPT = 3;

/**
 * An error's text without the SDK's `MCP error <code>: ` prefix: the model reads what went wrong
 * (`Request timed out`, `Connection closed`), as the adapter reports it.
 */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^MCP error -?\d+: /, "").trim();
}

/** Thrown when a server is inside its failure backoff: callers render it as "not available". */
export class ServerInBackoff extends Error {
  constructor(readonly server: string, readonly failedAgoSec: number) {
    super(`Server "${server}" not available (last failed ${failedAgoSec}s ago)`);
  }
}

/**
 * Connections to the configured MCP servers through the official SDK client: lazy connection on
 * first real use, a failure backoff, idle closing, and the metadata cache refreshed on every connect.
 */
export class ServerManager {
  private readonly states = new Map<string, ServerState>();

  constructor(private readonly config: McpConfig, private readonly options: ServerManagerOptions, cache: Record<string, CacheEntry>) {
    const now = this.now();
    for (const { name, entry } of config.servers) {
      const configHash = computeConfigHash(entry, options.env, options.baseDir);
      const candidate = cache[name];
      const valid = isEntryValid(candidate, configHash, now);
      this.states.set(name, { name, entry, configHash, cached: valid ? candidate : undefined, stderrTail: [] });
    }
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Servers in config order. */
  all(): ServerState[] {
    return [...this.states.values()];
  }

  enabled(): ServerState[] {
    return this.all().filter((s) => !s.entry.disabled);
  }

  get(name: string): ServerState | undefined {
    return this.states.get(name);
  }

  metadata(name: string): ServerMetadata | undefined {
    const state = this.states.get(name);
    if (!state) return undefined;
    if (state.live) return state.live;
    const cached = state.cached;
    return cached ? { tools: cached.tools, resources: cached.resources, prompts: cached.prompts, instructions: cached.instructions } : undefined;
  }

  isConnected(name: string): boolean {
    return this.states.get(name)?.client !== undefined;
  }

  /** Seconds since a failure, while the server is still in its backoff; undefined otherwise. */
  backoffAgoSec(name: string): number | undefined {
    const failedAt = this.states.get(name)?.failedAt;
    if (failedAt === undefined) return undefined;
    const ago = this.now() - failedAt;
    return ago < FAILURE_BACKOFF_MS ? Math.floor(ago / 1000) : undefined;
  }

  requestTimeoutMs(state: ServerState): number {
    return state.entry.requestTimeoutMs ?? this.config.settings.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** Connect (or return the live connection); concurrent callers share one attempt. */
  async connect(name: string, opts: { force?: boolean } = {}): Promise<ServerState> {
    const state = this.states.get(name);
    if (!state) throw new Error(`Server "${name}" not found`);
    if (state.client && !opts.force) return state;
    if (state.connecting) return state.connecting;
    if (!opts.force) {
      const ago = this.backoffAgoSec(name);
      if (ago !== undefined) throw new ServerInBackoff(name, ago);
    }
    if (state.client) await this.disconnect(name, "reconnect");
    state.connecting = this.open(state).finally(() => {
      state.connecting = undefined;
    });
    return state.connecting;
  }

  private createTransport(state: ServerState): Transport {
    const { entry } = state;
    if (entry.url) {
      return new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} } });
    }
    if (!entry.command) throw new Error("the server entry has neither command nor url");
    const inherited = entry.inheritEnv === false ? {} : this.options.env;
    const env = Object.fromEntries(Object.entries({ ...inherited, ...entry.env }).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args ?? [],
      env,
      cwd: entry.cwd,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      const lines = chunk.toString("utf8").split("\n").map((l) => l.trim()).filter(Boolean);
      state.stderrTail = [...state.stderrTail, ...lines].slice(-STDERR_LINES_KEPT);
    });
    return transport;
  }

  private async open(state: ServerState): Promise<ServerState> {
    const client = new Client(
      { name: `pi-mcp-${state.name}`, version: "1.0.0" },
      { capabilities: { ...(this.options.sampling ? { sampling: {} } : {}), extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } as never },
    );
    if (this.options.sampling) this.installSampling(client, state.name);
    state.stderrTail = [];
    try {
      await client.connect(this.createTransport(state), { timeout: INIT_TIMEOUT_MS });
      const timeout = this.requestTimeoutMs(state);
      const capabilities = client.getServerCapabilities() ?? {};
      const tools: CachedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
        for (const t of page.tools) {
          tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown>, outputSchema: t.outputSchema as Record<string, unknown> | undefined });
        }
        cursor = page.nextCursor;
      } while (cursor);
      const exposeResources = state.entry.exposeResources !== false;
      const resources: CachedResource[] =
        exposeResources && capabilities.resources
          ? (await client.listResources({}, { timeout })).resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description }))
          : [];
      const prompts: CachedPrompt[] | undefined = capabilities.prompts
        ? (await client.listPrompts({}, { timeout })).prompts.map((p) => ({ name: p.name, description: p.description, arguments: p.arguments }))
        : undefined;
      state.live = { tools: filterTools(tools, state.entry), resources, prompts, instructions: client.getInstructions() };
      state.client = client;
      state.failedAt = undefined;
      client.onclose = () => {
        if (state.client === client) {
          state.client = undefined;
          this.options.log("mcp_disconnect", { server: state.name, reason: "closed" });
        }
      };
      this.writeCache(state);
      this.options.log("mcp_connect", { server: state.name, tools: state.live.tools.map((t) => t.name) });
      this.options.onMetadata(state.name);
      this.touch(state);
      return state;
    } catch (error) {
      state.failedAt = this.now();
      await client.close().catch(() => undefined);
      const tail = state.stderrTail.length > 0 ? ` (${state.stderrTail.join(" — ")})` : "";
      const message = `${errorMessage(error)}${tail}`;
      this.options.log("mcp_connect_failed", { server: state.name, error: message });
      throw new Error(message);
    }
  }

  private installSampling(client: Client, server: string): void {
    const handler = this.options.sampling!;
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const params = request.params;
      if (params.tools || params.toolChoice || params.stopSequences || (params.includeContext && params.includeContext !== "none")) {
        throw new Error("sampling with tools, toolChoice, stopSequences or included context is not supported");
      }
      const messages = params.messages.map((m) => ({
        role: m.role,
        text: Array.isArray(m.content)
          ? m.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
          : m.content.type === "text"
            ? m.content.text
            : "",
      }));
      this.options.log("mcp_sampling", { server, messages: messages.length });
      const text = await handler({ systemPrompt: params.systemPrompt, messages, maxTokens: params.maxTokens });
      return { role: "assistant", content: { type: "text", text }, model: "payload-probe", stopReason: "endTurn" };
    });
  }

  private writeCache(state: ServerState): void {
    const live = state.live!;
    const entry = buildCacheEntry({
      configHash: state.configHash,
      tools: live.tools,
      resources: live.resources,
      prompts: live.prompts,
      instructions: live.instructions,
      cachedAt: this.now(),
    });
    writeCacheEntry(this.options.cachePath, state.name, entry);
    state.cached = entry;
    this.options.log("mcp_cache_write", { server: state.name, tools: live.tools.length });
  }

  /** Restart the idle clock of a lazy connection; keep-alive and eager connections never idle out. */
  private touch(state: ServerState): void {
    clearTimeout(state.idleTimer);
    const lifecycle = state.entry.lifecycle ?? "lazy";
    const minutes =
      state.entry.idleTimeout ?? (lifecycle === "lazy" ? (this.config.settings.idleTimeout ?? DEFAULT_IDLE_MINUTES) : 0);
    if (lifecycle === "keep-alive" || minutes <= 0) return;
    state.idleTimer = setTimeout(() => void this.disconnect(state.name, "idle"), minutes * 60_000);
    state.idleTimer.unref();
  }

  async callTool(server: string, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const state = await this.connect(server);
    try {
      return (await state.client!.callTool({ name: tool, arguments: args }, undefined, { timeout: this.requestTimeoutMs(state) })) as CallToolResult;
    } finally {
      this.touch(state);
    }
  }

  async readResource(server: string, uri: string): Promise<{ uri: string; text?: string; blob?: string; mimeType?: string }[]> {
    const state = await this.connect(server);
    try {
      return (await state.client!.readResource({ uri }, { timeout: this.requestTimeoutMs(state) })).contents as never;
    } finally {
      this.touch(state);
    }
  }

  async getPrompt(server: string, name: string, args: Record<string, string>) {
    const state = await this.connect(server);
    try {
      return await state.client!.getPrompt({ name, arguments: args }, { timeout: this.requestTimeoutMs(state) });
    } finally {
      this.touch(state);
    }
  }

  async disconnect(name: string, reason: string): Promise<void> {
    const state = this.states.get(name);
    if (!state?.client) return;
    clearTimeout(state.idleTimer);
    const client = state.client;
    state.client = undefined;
    await client.close().catch(() => undefined);
    this.options.log("mcp_disconnect", { server: name, reason });
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.all().map((s) => this.disconnect(s.name, "shutdown")));
  }
}

/** `includeTools` / `excludeTools` globs (`*` wildcards) filter what a server offers. */
function filterTools(tools: CachedTool[], entry: McpServerEntry): CachedTool[] {
  const matcher = (globs: string[]) => globs.map((g) => new RegExp(`^${g.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`));
  const include = entry.includeTools ? matcher(entry.includeTools) : undefined;
  const exclude = entry.excludeTools ? matcher(entry.excludeTools) : [];
  return tools.filter((t) => (!include || include.some((r) => r.test(t.name))) && !exclude.some((r) => r.test(t.name)));
}
