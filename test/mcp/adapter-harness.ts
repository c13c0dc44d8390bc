/**
 * Runs the MCP adapter extension on a real tool registry, against real stub servers (child
 * processes or HTTP on 127.0.0.1), with its config and cache in a temp dir — no agent loop.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { mcpExtension } from "../../src/mcp/extension.js";
import type { KeepAliveTimings } from "../../src/mcp/keep-alive.js";
import { mcpTextsSchema } from "../../src/mcp/texts-schema.js";
import { extensionTexts, loadProfile } from "../../src/runtime/load-profile.js";
import { ToolRegistry } from "../../src/runtime/registry.js";
import type {
  EventHandler,
  ExtensionAPI,
  RuntimeEventName,
  SlashCommand,
  ToolResult,
} from "../../src/runtime/types.js";
import { WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";
import { conditionWaiters } from "../fixtures/condition-waiters.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const texts = extensionTexts(loadProfile(), "mcp", mcpTextsSchema);
const cleanups: (() => void | Promise<void>)[] = [];

export async function cleanupAdapters(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-adapter-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A stdio server entry running the configurable stub on a fixture of fixtures/stub-servers. */
export function stubServer(
  fixture: string,
  extra: Record<string, unknown> = {},
  flags: string[] = [],
): Record<string, unknown> {
  return {
    command: "node",
    args: [
      join(ROOT, "dist/stub-mcp/configurable-stub.js"),
      "--fixture",
      join(ROOT, `fixtures/stub-servers/${fixture}.json`),
      ...flags,
    ],
    ...extra,
  };
}

/** Starts the configurable stub over Streamable HTTP (or the legacy SSE transport) as a child process; resolves with its URL. */
export async function httpStub(
  fixture: string,
  flags: string[] = [],
  transport: "--http" | "--sse" = "--http",
): Promise<string> {
  const child = spawn(
    "node",
    [
      "dist/stub-mcp/configurable-stub.js",
      "--fixture",
      `fixtures/stub-servers/${fixture}.json`,
      transport,
      "0",
      ...flags,
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  cleanups.push(() => void child.kill());
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /^LISTENING (\d+)$/.exec(line);
    if (match) return `http://127.0.0.1:${match[1]}/mcp`;
  }
  throw new Error("the HTTP stub ended before it listened");
}

export interface Adapter {
  registry: ToolRegistry;
  commands: Map<string, SlashCommand>;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  cachePath: string;
  events: { type: string; data: Record<string, unknown> }[];
  /** Resolves once `holds` is true, checked now and after each event the adapter emits (no clock: the test's timeout bounds it). */
  until(holds: () => boolean): Promise<void>;
  shutdown(): Promise<void>;
}

export interface AdapterOptions {
  servers: Record<string, unknown>;
  settings?: Record<string, unknown>;
  /** `missing` (default: a first run), `empty-file`, or keep whatever `dir` holds. */
  cache?: "missing" | "empty-file" | "keep";
  /** Reuse a folder (and its cache) from an earlier adapter. */
  dir?: string;
  /** Added to the adapter's environment; the servers inherit it (so a wire log can be named here). */
  env?: NodeJS.ProcessEnv;
  keepAlive?: Partial<KeepAliveTimings>;
  /** Servers whose processes start with the adapter (the extension's `startEarly`). */
  startEarly?: string[];
}

/** Loads the extension as the runtime would; the registry starts with no built-ins. */
export async function startAdapter(options: AdapterOptions): Promise<Adapter & { dir: string }> {
  const dir = options.dir ?? tempDir();
  const configPath = join(dir, "mcp.json");
  writeFileSync(configPath, JSON.stringify({ mcpServers: options.servers, settings: options.settings ?? {} }));
  const cachePath = join(dir, "mcp-cache.json");
  if (options.cache === "empty-file") writeFileSync(cachePath, '{"version":1,"servers":{}}');
  if ((options.cache ?? "missing") === "missing") rmSync(cachePath, { force: true });

  const registry = new ToolRegistry([], []);
  const commands = new Map<string, SlashCommand>();
  const events: Adapter["events"] = [];
  const emitted = conditionWaiters();
  const shutdownHandlers: (() => void | Promise<void>)[] = [];
  const api: ExtensionAPI = {
    cwd: dir,
    agentDir: dir,
    flags: {},
    registerTool: (tool) => registry.register(tool),
    getAllTools: () =>
      registry.all().map(({ tool, source }) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        source,
      })),
    getActiveTools: () => registry.activeNames(),
    setActiveTools: (names) => registry.setActive(names),
    registerCommand: (command) => void commands.set(command.name, command),
    on: <K extends RuntimeEventName>(event: K, handler: EventHandler<K>) => {
      if (event === "session_shutdown") shutdownHandlers.push(() => (handler as EventHandler<"session_shutdown">)({}));
    },
    emit: (type, data) => {
      events.push({ type, data });
      emitted.changed();
    },
    complete: async (request) => `SAMPLED-BY-TEST(${request.messages.length})`,
    getSystemPrompt: () => "",
  };
  const env = { ...process.env, [WIRE_LOG_ENV]: undefined, ...options.env };
  await mcpExtension({
    texts,
    configPath,
    exclusive: true,
    cachePath,
    home: dir,
    env,
    baseDir: ROOT,
    keepAlive: options.keepAlive,
    startEarly: options.startEarly,
  })(api);

  const adapter = {
    dir,
    registry,
    commands,
    cachePath,
    events,
    until: emitted.until,
    call: async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
      const tool = registry.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      try {
        return await tool.execute(args, { cwd: dir, env: process.env });
      } catch (error) {
        return { content: (error as Error).message, isError: true };
      }
    },
    shutdown: async () => {
      for (const handler of shutdownHandlers.splice(0)) await handler();
    },
  };
  cleanups.push(() => adapter.shutdown());
  return adapter;
}
