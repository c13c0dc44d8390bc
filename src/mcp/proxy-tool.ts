import type { RuntimeTool, ToolResult } from "../runtime/types.js";
import { parseToolArgs } from "../tool-args.js";
import { callServerTool } from "./call.js";
import { catalogTools } from "./catalog.js";
import { suggestionPrefixes } from "./naming.js";
import { renderProxyDescription } from "./proxy-description.js";
import {
  ambiguousToolText,
  connectFailedText,
  EMPTY_QUERY_TEXT,
  nativePiToolText,
  renderDescribe,
  renderInstructions,
  renderNoMatches,
  renderNotFound,
  renderSearchResult,
  renderServerList,
  renderStatus,
  type ServerStatus,
  serverDisabledText,
  serverNotFoundText,
  serverUnavailableText,
} from "./render.js";
import type { McpRuntime } from "./runtime-context.js";
import { matchToolName, rankTools, regexTools, type SearchableTool, sortByName, suggestToolNames } from "./search.js";
import { ServerInBackoff } from "./server-manager.js";

const GATEWAY_KEYS = [
  "tool",
  "connect",
  "describe",
  "instructions",
  "search",
  "server",
  "action",
  "url",
  "target",
] as const;

/** `args` as the model sent it: an object, JSON text of one, or nothing. The errors are what the model reads. */
function gatewayArgs(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  const args = parseToolArgs(raw);
  if (args.ok) return args.value;
  if (args.problem === "not-json") throw new Error(`Invalid args JSON: ${args.message}`);
  throw new Error(`Invalid args: expected a JSON object, got ${args.got}`);
}

function proxyDescription(rt: McpRuntime): string {
  return renderProxyDescription(rt.texts.proxy, {
    enabled: rt.manager.enabled().map((s) => s.name),
    searchMode: rt.manager.enabled().some((s) => rt.directSetting(s.name) === "search"),
    disabled: rt.manager
      .all()
      .filter((s) => s.entry.disabled)
      .map((s) => s.name),
  });
}

/** The gateway's parameter schema in the adapter's structure, with the profile's parameter descriptions. */
export function proxyParameters(d: Record<string, string>): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      tool: { type: "string", description: d.tool },
      args: {
        anyOf: [{ type: "string" }, { type: "object", properties: {}, additionalProperties: true }],
        description: d.args,
      },
      connect: { type: "string", description: d.connect },
      describe: { type: "string", description: d.describe },
      instructions: { type: "string", description: d.instructions },
      search: { type: "string", description: d.search },
      regex: { type: "boolean", description: d.regex },
      includeSchemas: { type: "boolean", description: d.includeSchemas },
      limit: { type: "number", minimum: 1, description: d.limit },
      offset: { type: "number", minimum: 0, description: d.offset },
      server: { type: "string", description: d.server },
      action: { type: "string", description: d.action },
      url: { type: "string", description: d.url },
      target: { type: "string", description: d.target },
    },
  };
}

const text = (content: string, isError = false): ToolResult => ({ content, isError });

/** The single gateway tool `mcp`: status, listing, search, describe, connect, instructions and calls. */
export function createProxyTool(rt: McpRuntime): RuntimeTool {
  return {
    name: "mcp",
    label: "MCP",
    description: proxyDescription(rt),
    promptSnippet: rt.texts.proxy.snippet,
    parameters: rt.texts.proxy.schema ?? proxyParameters(rt.texts.proxy.parameters),
    async execute(params) {
      const args = gatewayArgs(params.args);
      const hasMode = GATEWAY_KEYS.some((key) => params[key] !== undefined);
      if (args && !hasMode && GATEWAY_KEYS.some((key) => key in args)) {
        throw new Error(
          'Gateway params were nested inside `args`; pass them top-level (for example, mcp({ search: "..." }) or mcp({ tool: "...", args: {} })).',
        );
      }
      const server = typeof params.server === "string" ? params.server : undefined;
      if (
        typeof params.action === "string" &&
        ["install", "ui-messages", "auth-start", "auth-complete"].includes(params.action)
      ) {
        return text(rt.texts.proxy.actionUnsupported.replace("{action}", params.action), true);
      }
      if (typeof params.tool === "string") return callTool(rt, params.tool, args ?? {}, server);
      if (typeof params.connect === "string") return connect(rt, params.connect);
      if (typeof params.describe === "string") return describe(rt, params.describe);
      if (typeof params.instructions === "string") return instructions(rt, params.instructions);
      if (params.search !== undefined) return search(rt, String(params.search), params, server);
      if (server !== undefined) return listServer(rt, server);
      return text(status(rt));
    },
  };
}

function status(rt: McpRuntime): string {
  const servers: ServerStatus[] = rt.manager.all().map((s) => {
    const toolCount = rt.manager.metadata(s.name)?.tools.length ?? 0;
    if (s.entry.disabled) return { name: s.name, state: "disabled", toolCount };
    if (rt.manager.isConnected(s.name))
      return {
        name: s.name,
        state: "connected",
        toolCount,
        legacy: (s.entry.protocolVersion ?? "legacy") === "legacy",
      };
    const ago = rt.manager.backoffAgoSec(s.name);
    if (ago !== undefined) return { name: s.name, state: "failed", toolCount, failedAgoSec: ago };
    return { name: s.name, state: s.cached ? "cached" : "disconnected", toolCount };
  });
  return renderStatus(servers);
}

/** A server named by the model must exist and be usable; otherwise the text to answer with. */
function serverProblem(rt: McpRuntime, server: string): string | undefined {
  const state = rt.manager.get(server);
  if (!state) return serverNotFoundText(server);
  if (state.entry.disabled) return serverDisabledText(server);
  const ago = rt.manager.backoffAgoSec(server);
  return ago === undefined ? undefined : serverUnavailableText(server, ago);
}

function search(rt: McpRuntime, query: string, params: Record<string, unknown>, server?: string): ToolResult {
  if (server !== undefined) {
    const problem = serverProblem(rt, server);
    if (problem) return text(problem, true);
  }
  const pool = catalogTools(rt.manager, rt.config.settings, server);
  let matches: SearchableTool[];
  if (params.regex === true) {
    const found = regexTools(query, pool);
    if ("error" in found) return text(found.error, true);
    matches = found.matches;
  } else if (query.trim() === "") {
    if (server === undefined) return text(EMPTY_QUERY_TEXT, true);
    matches = sortByName(pool);
  } else {
    matches = rankTools(query, pool);
  }
  if (matches.length === 0) {
    const connecting = rt.manager
      .enabled()
      .filter((s) => s.connecting && (server === undefined || s.name === server))
      .map((s) => s.name);
    return text(renderNoMatches({ query, server, connecting }));
  }
  const activatedDirect = rt.activateSearchMatches(matches);
  return text(
    renderSearchResult({
      query,
      matches,
      includeSchemas: params.includeSchemas !== false,
      offset: typeof params.offset === "number" ? params.offset : 0,
      limit: typeof params.limit === "number" ? params.limit : undefined,
      requiresApproval: (tool) => rt.requiresApproval(tool),
      activatedDirect,
    }),
  );
}

function describe(rt: McpRuntime, name: string): ToolResult {
  const pool = catalogTools(rt.manager, rt.config.settings);
  const found = matchToolName(pool, name);
  if (found.length === 0) return text(notFound(rt, name, undefined, pool), true);
  return text(renderDescribe(found[0]!, rt.requiresApproval(found[0]!)));
}

function notFound(rt: McpRuntime, wanted: string, server: string | undefined, pool: SearchableTool[]): string {
  const servers = rt.manager.all().map((s) => s.name);
  const known = server ?? rt.manager.enabled().find((s) => wanted.startsWith(`${s.name}_`))?.name;
  const serverTools = known
    ? { server: known, names: pool.filter((t) => t.server === known).map((t) => t.name) }
    : undefined;
  return renderNotFound({
    wanted,
    serverTools,
    suggestions: suggestToolNames(wanted, pool, suggestionPrefixes(servers)),
  });
}

/** Resolve the name the model gave to one tool, as the adapter does: exact, then lenient, then by prefix. */
async function resolveTool(rt: McpRuntime, name: string, server?: string): Promise<SearchableTool[] | string> {
  if (server !== undefined) {
    const problem = serverProblem(rt, server);
    if (problem) return problem;
    const pool = catalogTools(rt.manager, rt.config.settings, server);
    const byOriginal = pool.filter((t) => t.originalName === name);
    const underscored = pool.filter(
      (t) => t.originalName === name.replace(/-/g, "_") || t.name === name.replace(/-/g, "_"),
    );
    const found = matchToolName(pool, name);
    return found.length > 0 ? found : byOriginal.length > 0 ? byOriginal : underscored;
  }
  let found = matchToolName(catalogTools(rt.manager, rt.config.settings), name);
  if (found.length > 0) return found;
  // A prefixed name of a server we hold no metadata for: connect it and look again.
  for (const state of rt.manager.enabled()) {
    if (!name.startsWith(`${state.name}_`) || rt.manager.metadata(state.name)) continue;
    try {
      await rt.manager.connect(state.name);
      rt.syncSurface();
    } catch (error) {
      if (error instanceof ServerInBackoff) return serverUnavailableText(state.name, error.failedAgoSec);
      return connectFailedText(state.name, (error as Error).message);
    }
    found = matchToolName(catalogTools(rt.manager, rt.config.settings), name);
    if (found.length > 0) return found;
  }
  return [];
}

async function callTool(
  rt: McpRuntime,
  name: string,
  args: Record<string, unknown>,
  server?: string,
): Promise<ToolResult> {
  const resolved = await resolveTool(rt, name, server);
  if (typeof resolved === "string") return text(resolved, true);
  if (resolved.length > 1) return text(ambiguousToolText(name), true);
  if (resolved.length === 0) {
    if (server === undefined && name !== "mcp" && rt.api.getAllTools().some((t) => t.name === name))
      return text(nativePiToolText(name), true);
    return text(notFound(rt, name, server, catalogTools(rt.manager, rt.config.settings)), true);
  }
  return callServerTool(rt.manager, resolved[0]!, args, () => rt.syncSurface());
}

async function connect(rt: McpRuntime, server: string): Promise<ToolResult> {
  const state = rt.manager.get(server);
  if (!state) return text(serverNotFoundText(server), true);
  if (state.entry.disabled) return text(serverDisabledText(server), true);
  try {
    await rt.manager.connect(server, { force: true });
  } catch (error) {
    return text(connectFailedText(server, (error as Error).message), true);
  }
  rt.syncSurface();
  return listServer(rt, server);
}

function listServer(rt: McpRuntime, server: string): ToolResult {
  const state = rt.manager.get(server);
  if (!state) return text(serverNotFoundText(server), true);
  if (state.entry.disabled) return text(serverDisabledText(server), true);
  const metadata = rt.manager.metadata(server);
  const tools = metadata ? catalogTools(rt.manager, rt.config.settings, server) : undefined;
  return text(
    renderServerList({
      server,
      status: rt.manager.isConnected(server) ? "connected" : "lazy",
      tools: tools?.map((t) => ({ name: t.name, description: t.description })),
      instructions: metadata?.instructions,
    }),
  );
}

function instructions(rt: McpRuntime, server: string): ToolResult {
  const problem = serverProblem(rt, server);
  if (problem) return text(problem, true);
  return text(
    renderInstructions({
      server,
      instructions: rt.manager.metadata(server)?.instructions,
      connected: rt.manager.isConnected(server),
    }),
  );
}
