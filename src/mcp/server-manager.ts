import { resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { buildCacheEntry, computeConfigHash, isEntryValid, writeCacheEntry } from "./cache.js";
import { type ClientSdk, clientSdk } from "./client-sdk.js";
import { EarlyStartedTransport, processId } from "./early-transport.js";
import { KEEP_ALIVE_TIMINGS, KeepAlive, type KeepAliveTimings } from "./keep-alive.js";
import { serverUnavailableText } from "./render.js";
import { installSamplingHandler, type SamplingHandler } from "./sampling.js";
import { listTools, type ToolListHints } from "./tool-listing.js";
import type { CachedPrompt, CachedResource, CachedTool, CacheEntry, McpConfig, McpServerEntry } from "./types.js";

/** What a server offers: from a live connection, or from its cache entry when it is valid. */
export interface ServerMetadata {
  tools: CachedTool[];
  resources: CachedResource[];
  prompts?: CachedPrompt[];
  instructions?: string;
}

export interface ManagedServer {
  name: string;
  entry: McpServerEntry;
  configHash: string;
  /** The cache entry, kept only while valid. */
  cached?: CacheEntry;
  live?: ServerMetadata;
  /** The cache hints of the live tool listing, and when it was taken. */
  listHints?: ToolListHints;
  listedAt?: number;
  client?: Client;
  connecting?: Promise<ManagedServer>;
  /** A re-listing after `notifications/tools/list_changed` that has not finished yet. */
  refreshing?: Promise<void>;
  failedAt?: number;
  stderrTail: string[];
  idleTimer?: NodeJS.Timeout;
}

export interface ServerManagerOptions {
  cachePath: string;
  env: NodeJS.ProcessEnv;
  /** Where a server without a `cwd` starts, and what a relative `cwd` is taken from. */
  baseDir: string;
  /** Event log of the run (connects, failures, cache writes). */
  log(type: string, data: Record<string, unknown>): void;
  /** Called after a server's metadata changed, so the tool surface can re-sync. */
  onMetadata(server: string): void;
  sampling?: SamplingHandler;
  now?: () => number;
  /** Keep-alive health check and reconnect backoff; tests shorten them. */
  keepAlive?: Partial<KeepAliveTimings>;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const INIT_TIMEOUT_MS = 30_000;
const FAILURE_BACKOFF_MS = 60_000;
const DEFAULT_IDLE_MINUTES = 10;
const STDERR_LINES_KEPT = 3;
/** HTTP statuses to a first POST that mean "not Streamable HTTP": the legacy SSE transport is tried next. */
const SSE_FALLBACK_STATUSES: readonly number[] = [404, 405, 406, 415];

/**
 * The HTTP transports load only for a server with a URL: they bring web streams and an SSE parser
 * that a run of stdio servers never uses, and would cost every probe run's start-up.
 */
const httpTransport = () => import("@modelcontextprotocol/sdk/client/streamableHttp.js");

/** The status of a first POST answered as by a server that is not Streamable HTTP (try SSE), else undefined. */
async function notStreamableStatus(error: unknown): Promise<number | undefined> {
  const { StreamableHTTPError } = await httpTransport();
  if (!(error instanceof StreamableHTTPError) || !SSE_FALLBACK_STATUSES.includes(error.code ?? 0)) return undefined;
  return error.code;
}

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
  constructor(
    readonly server: string,
    readonly failedAgoSec: number,
  ) {
    super(serverUnavailableText(server, failedAgoSec));
  }
}

/**
 * Connections to the configured MCP servers through the official SDK client: lazy connection on
 * first real use, a failure backoff, idle closing, keep-alive, and the metadata cache refreshed on
 * every connect, on `notifications/tools/list_changed` and at shutdown.
 */
export class ServerManager {
  private readonly states = new Map<string, ManagedServer>();
  /** Processes started ahead of their first connection (`startEarly`), until a connect takes them. */
  private readonly early = new Map<string, Promise<Transport>>();
  private readonly keepAlive: KeepAlive;

  constructor(
    private readonly config: McpConfig,
    private readonly options: ServerManagerOptions,
    cache: Record<string, CacheEntry>,
  ) {
    this.keepAlive = new KeepAlive(
      { ...KEEP_ALIVE_TIMINGS, ...options.keepAlive },
      {
        ping: async (server) => {
          const state = this.states.get(server)!;
          await state.client?.ping({ timeout: this.requestTimeoutMs(state) });
        },
        drop: async (server, error) => {
          options.log("mcp_health_check_failed", { server, error: errorMessage(error) });
          this.terminate(server);
          await this.disconnect(server, "health check failed");
        },
        reconnect: async (server) => {
          // A model call may have brought the server back in the meantime.
          if (!this.isConnected(server)) await this.connect(server, { force: true });
        },
        log: options.log,
      },
    );
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
  all(): ManagedServer[] {
    return [...this.states.values()];
  }

  enabled(): ManagedServer[] {
    return this.all().filter((s) => !s.entry.disabled);
  }

  get(name: string): ManagedServer | undefined {
    return this.states.get(name);
  }

  metadata(name: string): ServerMetadata | undefined {
    const state = this.states.get(name);
    if (!state) return undefined;
    if (state.live) return state.live;
    const cached = state.cached;
    return cached
      ? { tools: cached.tools, resources: cached.resources, prompts: cached.prompts, instructions: cached.instructions }
      : undefined;
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

  requestTimeoutMs(state: ManagedServer): number {
    return state.entry.requestTimeoutMs ?? this.config.settings.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /**
   * Starts a stdio server's process now, ahead of its first connection, which then finds it running:
   * for a caller that knows the server will be connected (a probe whose expectations say so), so the
   * process's start-up overlaps the agent's first requests. Nothing is sent to the server before the
   * connection, so what it receives, and when, is unchanged. A process no connection takes is ended
   * with the others at `closeAll`.
   */
  startEarly(name: string): void {
    const state = this.states.get(name);
    if (!state?.entry.command || state.entry.url || this.early.has(name)) return;
    this.early.set(
      name,
      clientSdk().then(async (sdk) => new EarlyStartedTransport(await this.createTransport(state, sdk))),
    );
  }

  private takeEarly(name: string): Promise<Transport> | undefined {
    const transport = this.early.get(name);
    this.early.delete(name);
    return transport;
  }

  /** Connect (or return the live connection); concurrent callers share one attempt. */
  async connect(name: string, opts: { force?: boolean } = {}): Promise<ManagedServer> {
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

  private async createTransport(state: ManagedServer, sdk: ClientSdk): Promise<Transport> {
    const { entry } = state;
    if (entry.url) {
      const { StreamableHTTPClientTransport } = await httpTransport();
      return new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} } });
    }
    if (!entry.command) throw new Error("the server entry has neither command nor url");
    // The tail is of this process: one started early may have written to it before the connect.
    state.stderrTail = [];
    const inherited = entry.inheritEnv === false ? {} : this.options.env;
    const env = Object.fromEntries(
      Object.entries({ ...inherited, ...entry.env }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>;
    const transport = new sdk.StdioClientTransport({
      command: entry.command,
      args: entry.args ?? [],
      env,
      // Relative to baseDir, where a server without a cwd starts too (the cwd, unless the caller says).
      cwd: resolve(this.options.baseDir, entry.cwd ?? "."),
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      const lines = chunk
        .toString("utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      state.stderrTail = [...state.stderrTail, ...lines].slice(-STDERR_LINES_KEPT);
    });
    return transport;
  }

  /** A client that declares our capabilities and handles what servers may send it. */
  private createClient(state: ManagedServer, sdk: ClientSdk): Client {
    const client = new sdk.Client(
      { name: `pi-mcp-${state.name}`, version: "1.0.0" },
      {
        capabilities: {
          ...(this.options.sampling ? { sampling: {} } : {}),
          extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
        } as never,
      },
    );
    if (this.options.sampling) installSamplingHandler(client, sdk, state.name, this.options.sampling, this.options.log);
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.toolListChanged(state, client));
    return client;
  }

  /** Connects a fresh client; a URL that answers the first POST as a non-Streamable server gets a second try over SSE. */
  private async connectClient(state: ManagedServer): Promise<Client> {
    const sdk = await clientSdk();
    const client = this.createClient(state, sdk);
    try {
      const transport = (await this.takeEarly(state.name)) ?? (await this.createTransport(state, sdk));
      await client.connect(transport, { timeout: INIT_TIMEOUT_MS });
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      const status = state.entry.url ? await notStreamableStatus(error) : undefined;
      if (status === undefined) throw error;
      this.options.log("mcp_sse_fallback", { server: state.name, status });
    }
    // A second client: the first one's closing may still be under way and would detach the new transport.
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
    const sse = this.createClient(state, sdk);
    try {
      await sse.connect(
        new SSEClientTransport(new URL(state.entry.url!), { requestInit: { headers: state.entry.headers ?? {} } }),
        { timeout: INIT_TIMEOUT_MS },
      );
      return sse;
    } catch (error) {
      await sse.close().catch(() => undefined);
      throw error;
    }
  }

  private async open(state: ManagedServer): Promise<ManagedServer> {
    let client: Client | undefined;
    try {
      client = await this.connectClient(state);
      const timeout = this.requestTimeoutMs(state);
      const capabilities = client.getServerCapabilities() ?? {};
      const { tools, hints } = await listTools(client, state.entry, timeout);
      const exposeResources = state.entry.exposeResources !== false;
      const resources: CachedResource[] =
        exposeResources && capabilities.resources
          ? (await client.listResources({}, { timeout })).resources.map((r) => ({
              uri: r.uri,
              name: r.name,
              description: r.description,
            }))
          : [];
      const prompts: CachedPrompt[] | undefined = capabilities.prompts
        ? (await client.listPrompts({}, { timeout })).prompts.map((p) => ({
            name: p.name,
            description: p.description,
            arguments: p.arguments,
          }))
        : undefined;
      state.live = { tools, resources, prompts, instructions: client.getInstructions() };
      state.listHints = hints;
      state.listedAt = this.now();
      state.client = client;
      state.failedAt = undefined;
      const connected = client;
      client.onclose = () => {
        if (state.client !== connected) return;
        state.client = undefined;
        this.options.log("mcp_disconnect", { server: state.name, reason: "closed" });
        if (isKeptAlive(state)) this.keepAlive.lost(state.name);
      };
      this.writeCache(state);
      this.options.log("mcp_connect", { server: state.name, tools: state.live.tools.map((t) => t.name) });
      this.options.onMetadata(state.name);
      if (isKeptAlive(state)) this.keepAlive.connected(state.name);
      this.touch(state);
      return state;
    } catch (error) {
      state.failedAt = this.now();
      await client?.close().catch(() => undefined);
      const tail = state.stderrTail.length > 0 ? ` (${state.stderrTail.join(" — ")})` : "";
      const message = `${errorMessage(error)}${tail}`;
      this.options.log("mcp_connect_failed", { server: state.name, error: message });
      throw new Error(message);
    }
  }

  /**
   * The server's tools changed: list them again, re-cache, and let the surface re-sync. A call in
   * flight waits for this (see callTool), so the request after its result already has the new tools.
   */
  private toolListChanged(state: ManagedServer, client: Client): void {
    const refresh = (async () => {
      // A notification sent right after initialize can arrive while the first listing is still running.
      await state.connecting?.catch(() => undefined);
      if (state.client !== client) return;
      const { tools, hints } = await listTools(client, state.entry, this.requestTimeoutMs(state));
      if (state.client !== client || !state.live) return;
      state.live = { ...state.live, tools };
      state.listHints = hints;
      state.listedAt = this.now();
      this.writeCache(state);
      this.options.log("mcp_tools_changed", { server: state.name, tools: tools.map((t) => t.name) });
      this.options.onMetadata(state.name);
    })().catch((error: unknown) =>
      this.options.log("mcp_tools_changed_failed", { server: state.name, error: errorMessage(error) }),
    );
    state.refreshing = refresh;
    void refresh.then(() => {
      if (state.refreshing === refresh) state.refreshing = undefined;
    });
  }

  /**
   * Writes the live metadata into the cache. `cachedAt` is now, except for a listing that declared a
   * `ttlMs`: that lifetime runs from the listing, so a later write (at shutdown) must not extend it.
   */
  private writeCache(state: ManagedServer): void {
    const live = state.live!;
    const hints = state.listHints ?? {};
    const entry = buildCacheEntry({
      configHash: state.configHash,
      tools: live.tools,
      resources: live.resources,
      prompts: live.prompts,
      instructions: live.instructions,
      ttlMs: hints.ttlMs,
      cacheScope: hints.cacheScope,
      cachedAt: hints.ttlMs !== undefined && state.listedAt !== undefined ? state.listedAt : this.now(),
    });
    writeCacheEntry(this.options.cachePath, state.name, entry);
    state.cached = entry;
    this.options.log("mcp_cache_write", { server: state.name, tools: live.tools.length });
  }

  /** Restart the idle clock of a lazy connection; keep-alive and eager connections never idle out. */
  private touch(state: ManagedServer): void {
    clearTimeout(state.idleTimer);
    const lifecycle = state.entry.lifecycle ?? "lazy";
    const minutes =
      state.entry.idleTimeout ??
      (lifecycle === "lazy" ? (this.config.settings.idleTimeout ?? DEFAULT_IDLE_MINUTES) : 0);
    if (lifecycle === "keep-alive" || minutes <= 0) return;
    state.idleTimer = setTimeout(() => void this.disconnect(state.name, "idle"), minutes * 60_000);
    state.idleTimer.unref();
  }

  async callTool(server: string, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const state = await this.connect(server);
    try {
      return (await state.client!.callTool({ name: tool, arguments: args }, undefined, {
        timeout: this.requestTimeoutMs(state),
      })) as CallToolResult;
    } finally {
      this.touch(state);
      // A list_changed sent during the call is applied before its result returns.
      await state.refreshing;
    }
  }

  async readResource(
    server: string,
    uri: string,
  ): Promise<{ uri: string; text?: string; blob?: string; mimeType?: string }[]> {
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

  /** Stops keep-alive, writes each connected server's metadata to the cache once more, and closes everything. */
  /**
   * Closes every server at once; their `mcp_disconnect` events follow in config order, not in the
   * order the processes happened to exit, so a run's events are the same every time.
   */
  async closeAll(): Promise<void> {
    this.keepAlive.stop();
    const unused = [...this.early.values()];
    this.early.clear();
    await Promise.all(unused.map((transport) => transport.then((t) => t.close()).catch(() => undefined)));
    const servers = this.all();
    const closed = await Promise.all(
      servers.map(async (state) => {
        await state.refreshing;
        if (state.client && state.live) this.writeCache(state);
        return this.close(state);
      }),
    );
    for (const [i, state] of servers.entries())
      if (closed[i]) this.options.log("mcp_disconnect", { server: state.name, reason: "shutdown" });
  }

  async disconnect(name: string, reason: string): Promise<void> {
    const state = this.states.get(name);
    if (state && (await this.close(state))) this.options.log("mcp_disconnect", { server: name, reason });
  }

  /**
   * Sends SIGTERM to a stdio server that stopped answering. Closing its connection ends its stdin
   * and waits 2 s for it to exit before the SDK sends SIGTERM; a server that does not answer a ping
   * does not read its stdin either, so that wait only delays its replacement.
   */
  private terminate(name: string): void {
    const pid = processId(this.states.get(name)?.client?.transport);
    if (pid === null) return;
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // It exited meanwhile: the close finds it gone.
    }
  }

  /** Closes the server's connection; false when it had none. */
  private async close(state: ManagedServer): Promise<boolean> {
    if (!state.client) return false;
    clearTimeout(state.idleTimer);
    const client = state.client;
    state.client = undefined;
    await client.close().catch(() => undefined);
    return true;
  }
}

function isKeptAlive(state: ManagedServer): boolean {
  return state.entry.lifecycle === "keep-alive";
}
