/**
 * The names the adapter gives to what MCP servers offer: namespace proxy tools (`mcp__<ns>`),
 * direct tools (`<prefix>_<tool>`), resource tools (`read_<name>`), and the prefixes a wanted
 * name is stripped of before "Did you mean" suggestions are ranked.
 */
import { createHash } from "node:crypto";
import type { ToolPrefixMode } from "./types.js";

/** Names a direct tool never takes: Pi's built-in tools and the proxy itself. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  "read",
  "bash",
  "edit",
  "write",
  "grep",
  "find",
  "ls",
  "mcp",
]);

const ENCODED_MARKER = "_mcpns_";
/** Providers cap tool names at 64 characters; `mcp__` takes five of them. */
const MAX_NAMESPACE_LENGTH = 59;
/** `_h_` can never begin an encoded body (`h` is neither `_` nor a hex digit), so hashed names cannot be forged. */
const HASHED_MARKER = `${ENCODED_MARKER}_h_`;
const DIGEST_LENGTH = 16;

/** The namespace proxy tool of a server: `probe-stub` → `mcp__probe_stub`. */
export function namespaceToolName(server: string): string {
  return `mcp__${serverNamespace(server)}`;
}

function serverNamespace(server: string): string {
  const normalized = server.replace(/-/g, "_");
  const plain = /^[A-Za-z0-9_]*$/.test(normalized) && !normalized.startsWith(ENCODED_MARKER);
  const body = plain ? normalized : encodeNamespace(normalized);
  const namespace = plain ? body : `${ENCODED_MARKER}${body}`;
  if (namespace.length <= MAX_NAMESPACE_LENGTH) return namespace;
  // The digest covers the ASCII form, so names that differ only in unencodable characters stay apart.
  const digest = createHash("sha256").update(namespace, "utf8").digest("hex").slice(0, DIGEST_LENGTH);
  const head = body.slice(0, MAX_NAMESPACE_LENGTH - HASHED_MARKER.length - DIGEST_LENGTH - 1);
  return `${HASHED_MARKER}${head}_${digest}`;
}

/** `_` doubles and every other non-alphanumeric becomes `_<hex>_`, which keeps the encoding reversible. */
function encodeNamespace(name: string): string {
  return Array.from(name, (char) => (char === "_" ? "__" : /^[A-Za-z0-9]$/.test(char) ? char : hexEscape(char))).join(
    "",
  );
}

function hexEscape(char: string): string {
  return `_${char.codePointAt(0)!.toString(16)}_`;
}

/** A server name with every character outside `[A-Za-z0-9_-]` hex-escaped. */
function sanitizeServerName(server: string): string {
  return Array.from(server, (char) => (/^[A-Za-z0-9_-]$/.test(char) ? char : hexEscape(char))).join("");
}

/** The `short` prefix: the server name without a trailing `mcp`/`-mcp`, or `mcp` when nothing is left. */
export function shortPrefix(server: string): string {
  return sanitizeServerName(server.replace(/-?mcp$/i, "")) || "mcp";
}

/** The prefix a mode puts before a server's tools; empty for `none`. */
export function serverPrefix(server: string, mode: ToolPrefixMode): string {
  switch (mode) {
    case "none":
      return "";
    case "short":
      return shortPrefix(server);
    case "mcp":
      return `mcp__${sanitizeServerName(server)}`;
    case "server":
      return sanitizeServerName(server);
  }
}

/** A direct tool's name: `probe-stub` + `stub.echo` → `probe-stub_stub_echo` in `server` mode. */
export function directToolName(server: string, tool: string, mode: ToolPrefixMode): string {
  const prefix = serverPrefix(server, mode);
  const base = tool.replace(/\./g, "_");
  return prefix ? `${prefix}_${base}` : base;
}

/**
 * The original (unprefixed) name of the tool that reads a resource: `read_` + the resource name
 * lowercased with runs of other characters as one `_`. Prefix it with `directToolName`.
 */
export function resourceToolName(resourceName: string): string {
  let slug = resourceName
    .replace(/[^a-zA-Z0-9]/g, "_")
    .replace(/_+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toLowerCase();
  // A tool name must not start with a digit, and an empty slug still needs a name.
  if (!slug || /^\d/.test(slug)) slug = slug ? `resource_${slug}` : "resource";
  return `read_${slug}`;
}

/** Every prefix a model might have put before a tool name, across all configured servers. */
export function suggestionPrefixes(servers: readonly string[]): string[] {
  return servers.flatMap((server) => (["server", "short", "mcp"] as const).map((mode) => serverPrefix(server, mode)));
}

/** The slash command of a server's prompt: `rich` + `summarize` → `mcp__rich__summarize`. */
export function promptCommandName(server: string, prompt: string): string {
  return `mcp__${serverPrefix(server, "server")}__${prompt.replace(/[^A-Za-z0-9_-]+/g, "_")}`;
}
