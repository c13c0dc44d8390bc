/**
 * Every text the adapter's tools answer with, as pure functions of what the caller already holds
 * (config order, cached or live tool lists, connection states). The formats are pi-mcp-adapter
 * 2.33's, byte for byte, because the model reads them and their size is what a probe measures.
 */
import { formatSchema } from "./format-schema.js";
import { paginate, type SearchableTool } from "./search.js";
import { truncateAtWord } from "./text.js";
import { renderShape } from "./ts-shape.js";

const APPROVAL_MARKER = " (requires approval)";
const DEFAULT_SEARCH_LIMIT = 12;
const LIST_DESCRIPTION_LENGTH = 50;
const INSTRUCTIONS_PREVIEW_LENGTH = 300;

// ---- shared one-liners ----------------------------------------------------------------------

export const EMPTY_QUERY_TEXT = "Search query cannot be empty";

export function serverDisabledText(server: string): string {
  return `Server "${server}" is disabled. Run /mcp enable ${server} and /reload to enable it.`;
}

export function serverUnavailableText(server: string, failedAgoSec: number): string {
  return `Server "${server}" not available (last failed ${failedAgoSec}s ago)`;
}

export function serverNotFoundText(server: string): string {
  return `Server "${server}" not found. Use mcp({}) to see available servers.`;
}

export function ambiguousToolText(tool: string): string {
  return `Tool "${tool}" matches multiple servers. Specify a server.`;
}

export function nativePiToolText(tool: string): string {
  return `"${tool}" is a native Pi tool. Call ${tool} directly instead of using mcp({ tool: "${tool}" }).`;
}

/** A namespace tool (`mcp__<ns>`) called without `tool`; it names the server as configured. */
export function namespaceToolMissingText(server: string): string {
  return `mcp__${server} requires a \`tool\` parameter naming the underlying MCP tool.`;
}

export function connectFailedText(server: string, message: string): string {
  return `Failed to connect to "${server}": ${message}`;
}

/** A call that threw; add `renderToolErrorSuffix` for the tool's schema. */
export function callFailedText(message: string): string {
  return `Failed to call tool: ${message}`;
}

/** What a direct tool answers while its server is in failure backoff. */
export function directToolUnavailableText(server: string, failedAgoSec: number): string {
  return `MCP server "${server}" not available (failed ${failedAgoSec}s ago)`;
}

/** Appended to a failed call so the model can fix its arguments; empty without a schema. */
export function renderToolErrorSuffix(schema: unknown): string {
  return schema ? `\n\nExpected parameters:\n${formatSchema(schema)}` : "";
}

// ---- status ---------------------------------------------------------------------------------

export type ConnectionStatus = "disabled" | "connected" | "needs-auth" | "failed" | "cached" | "disconnected";

export interface ServerStatus {
  name: string;
  state: ConnectionStatus;
  /** Tools known for the server, live or cached. */
  toolCount: number;
  /** Seconds since the last failed connect, for `failed`. */
  failedAgoSec?: number;
  /** The server speaks the legacy protocol (the default), so notifications take the legacy path. */
  legacy?: boolean;
}

/** `mcp({})`: one line per configured server, in config order. */
export function renderStatus(servers: readonly ServerStatus[]): string {
  const enabled = servers.filter((s) => s.state !== "disabled");
  const connected = enabled.filter((s) => s.state === "connected").length;
  // A server in failure backoff offers nothing, whatever its cache says.
  const tools = enabled.reduce((sum, s) => sum + (s.state === "failed" ? 0 : s.toolCount), 0);
  const disabled = servers.length - enabled.length;

  let text = `MCP: ${connected}/${enabled.length} servers, ${tools} tools`;
  if (disabled > 0) text += ` (${disabled} disabled)`;
  text += "\n\n";
  for (const server of servers) text += `${statusLine(server)}\n`;
  if (servers.length > 0) text += `\nmcp({ server: "name" }) to list tools, mcp({ search: "..." }) to search`;
  return text.trim();
}

function statusLine({ name, state, toolCount, failedAgoSec, legacy }: ServerStatus): string {
  switch (state) {
    case "disabled":
      return `⊘ ${name} (disabled)`;
    case "connected":
      return `✓ ${name} (${toolCount} tools${legacy ? ", legacy notification path" : ""})`;
    case "needs-auth":
      return `⚠ ${name} (needs auth)`;
    case "failed":
      return `✗ ${name} (failed ${failedAgoSec ?? 0}s ago)`;
    case "cached":
      return `○ ${name} (${toolCount} tools, cached; not listening)`;
    case "disconnected":
      return `○ ${name} (not listening; disconnected)`;
  }
}

// ---- search ---------------------------------------------------------------------------------

export interface SearchResultInput {
  query: string;
  /** Every match, already ranked; this function pages through them. */
  matches: readonly SearchableTool[];
  /** Show each tool's Shape or Parameters (default true). */
  includeSchemas?: boolean;
  offset?: number;
  limit?: number;
  /** Whether calling this tool needs the user's approval (`approveTools`). */
  requiresApproval?: (tool: SearchableTool) => boolean;
  /** Lazy direct tools this search just activated (`directTools: "search"`). */
  activatedDirect?: readonly string[];
}

/** `mcp({ search })` when something matched. */
export function renderSearchResult(input: SearchResultInput): string {
  const page = paginate(input.matches, input.offset ?? 0, input.limit ?? DEFAULT_SEARCH_LIMIT);
  const showSchemas = input.includeSchemas !== false;
  let text = `Found ${page.total} tool${page.total === 1 ? "" : "s"} matching "${input.query}":\n\n`;
  for (const tool of page.items) {
    const name = `${tool.name}${input.requiresApproval?.(tool) ? APPROVAL_MARKER : ""}`;
    text += showSchemas ? searchItemWithSchema(name, tool) : `${listLine(name, tool.description)}\n`;
  }
  if (page.nextOffset !== null)
    text += `\n${page.items.length} of ${page.total} — offset: ${page.nextOffset} for more\n`;
  text = text.trim();
  const activated = input.activatedDirect ?? [];
  return activated.length > 0 ? `Activated as direct tools: ${activated.join(", ")}.\n\n${text}` : text;
}

function searchItemWithSchema(name: string, tool: SearchableTool): string {
  let text = `${name}\n  ${tool.description || "(no description)"}\n`;
  if (tool.resourceUri) {
    text += "  No parameters (resource tool).\n";
  } else if (tool.inputSchema) {
    const shape = renderShape(tool.inputSchema);
    text +=
      shape === null
        ? `\n  Parameters:\n${formatSchema(tool.inputSchema, 4)}\n`
        : `\n  Shape:\n${shape
            .split("\n")
            .map((line) => `    ${line}`)
            .join("\n")}\n`;
  }
  return `${text}\n`;
}

/** `- name - short description`, the compact line of search and server listings. */
function listLine(name: string, description: string | undefined): string {
  const short = truncateAtWord(description ?? "", LIST_DESCRIPTION_LENGTH);
  return short ? `- ${name} - ${short}` : `- ${name}`;
}

export interface NoMatchInput {
  query: string;
  /** The `server` the search was limited to. */
  server?: string;
  /** Enabled servers still connecting (for a `server` search: that server, if it is). */
  connecting?: readonly string[];
}

/** `mcp({ search })` when nothing matched, saying which servers may still bring tools. */
export function renderNoMatches({ query, server, connecting = [] }: NoMatchInput): string {
  let text = `No tools matching "${query}"${server ? ` in "${server}"` : ""}`;
  const names = [...connecting].sort((a, b) => a.localeCompare(b));
  if (names.length === 1) text += ` Server "${names[0]}" is still connecting; retry in a moment.`;
  if (names.length > 1)
    text += ` Servers ${names.map((n) => `"${n}"`).join(", ")} are still connecting; retry in a moment.`;
  return text;
}

// ---- describe and not found -----------------------------------------------------------------

/** `mcp({ describe })` for a tool that was found. */
export function renderDescribe(tool: SearchableTool, requiresApproval = false): string {
  let text = `${tool.name}${requiresApproval ? APPROVAL_MARKER : ""}\nServer: ${tool.server}\n`;
  if (tool.resourceUri) text += `Type: Resource (reads from ${tool.resourceUri})\n`;
  text += `\n${tool.description || "(no description)"}\n`;
  if (tool.resourceUri) {
    text += "\nNo parameters required (resource tool).";
  } else if (tool.inputSchema) {
    const shape = renderShape(tool.inputSchema);
    text += shape === null ? `\nParameters:\n${formatSchema(tool.inputSchema)}` : `\nShape:\n${shape}`;
  } else {
    text += "\nNo parameters defined.";
  }
  return text.trim();
}

export interface NotFoundInput {
  wanted: string;
  /** The server the name points at (via `server` or a name prefix) and its tool names. */
  serverTools?: { server: string; names: readonly string[] };
  suggestions: readonly string[];
}

/** A call or describe whose tool does not exist. */
export function renderNotFound({ wanted, serverTools, suggestions }: NotFoundInput): string {
  let text = `Tool "${wanted}" not found.`;
  text +=
    serverTools && serverTools.names.length > 0
      ? ` Server "${serverTools.server}" has: ${serverTools.names.join(", ")}`
      : ` Use mcp({ search: "..." }) to search.`;
  return text + didYouMean(suggestions);
}

function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length > 0 ? ` Did you mean: ${suggestions.join(", ")}` : "";
}

// ---- server listing and instructions --------------------------------------------------------

export interface ServerListInput {
  server: string;
  /** `lazy`: tools come from the cache and nothing is connected yet. */
  status: "connected" | "lazy" | "needs-auth";
  /** The server's tools; undefined when nothing is known about them (no cache, never connected). */
  tools?: readonly { name: string; description?: string }[];
  instructions?: string;
}

/** `mcp({ server })` and the answer of `mcp({ connect })`. */
export function renderServerList({ server, status, tools, instructions }: ServerListInput): string {
  let instructionsText = "";
  if (instructions) {
    const preview = truncateAtWord(instructions, INSTRUCTIONS_PREVIEW_LENGTH);
    instructionsText = `\n\nServer instructions:\n${preview}`;
    if (preview !== instructions) instructionsText += `\nUse mcp({ instructions: "${server}" }) for the full text.`;
  }

  if (!tools || tools.length === 0) {
    if (status === "connected") return `Server "${server}" has no tools.${instructionsText}`;
    if (tools) return `Server "${server}" has no cached tools (not connected).${instructionsText}`;
    return `Server "${server}" is configured but not connected. Use mcp({ connect: "${server}" }) or /mcp reconnect ${server} to retry.${instructionsText}`;
  }

  let text = `${server} (${tools.length} tools${listNote(server, status)}):\n\n`;
  for (const tool of tools) text += `${listLine(tool.name, tool.description)}\n`;
  return (text + instructionsText).trim();
}

function listNote(server: string, status: ServerListInput["status"]): string {
  switch (status) {
    case "connected":
      return "";
    case "lazy":
      return ` (lazy: tools from cache, not connected yet — mcp({ connect: "${server}" }) to connect)`;
    case "needs-auth":
      return ` (needs auth — run mcp({ action: "auth-start", server: "${server}" }))`;
  }
}

/** `mcp({ instructions })`. */
export function renderInstructions(input: { server: string; instructions?: string; connected: boolean }): string {
  if (input.instructions) return `${input.server} instructions:\n\n${input.instructions}`;
  if (input.connected) return `Server "${input.server}" does not provide instructions.`;
  return `No instructions cached for "${input.server}". Use mcp({ connect: "${input.server}" }) to connect and refresh.`;
}

// ---- call results ---------------------------------------------------------------------------

/** One item of an MCP `tools/call` result's `content`. */
export interface McpContentItem {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
  uri?: string;
  name?: string;
}

export type ResultBlock = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/**
 * A call result as the blocks the model receives: images stay images, everything else becomes
 * text. With no content, structured content is shown as JSON; with neither, `(empty result)`.
 */
export function renderCallContent(
  content: readonly McpContentItem[] | undefined,
  structuredContent?: unknown,
): ResultBlock[] {
  const blocks = (content ?? []).map(contentBlock);
  if (blocks.length > 0) return blocks;
  if (structuredContent !== undefined && structuredContent !== null) {
    return [{ type: "text", text: JSON.stringify(structuredContent, null, 2) }];
  }
  return [{ type: "text", text: "(empty result)" }];
}

function contentBlock(item: McpContentItem): ResultBlock {
  switch (item.type) {
    case "text":
      return { type: "text", text: item.text ?? "" };
    case "image":
      return { type: "image", data: item.data ?? "", mimeType: item.mimeType ?? "image/png" };
    case "resource": {
      const body = item.resource?.text ?? (item.resource ? JSON.stringify(item.resource) : "(no content)");
      return { type: "text", text: `[Resource: ${item.resource?.uri ?? "(no URI)"}]\n${body}` };
    }
    case "resource_link":
      return {
        type: "text",
        text: `[Resource Link: ${item.name ?? item.uri ?? "unknown"}]\nURI: ${item.uri ?? "(no URI)"}`,
      };
    case "audio":
      return { type: "text", text: `[Audio content: ${item.mimeType ?? "audio/*"}]` };
    default:
      return { type: "text", text: JSON.stringify(item) };
  }
}
