/**
 * Tool definitions as the APIs send them, whatever their kind: a client's function, a provider's
 * hosted or server tool, a namespace of tools, a tool left for a tool search to load. Each becomes a
 * tool of the dissection, by name, with its own JSON text.
 */
import type { WireDissection } from "./types.js";
import { asArray, asObject } from "./wire-json.js";

type WireTool = WireDissection["tools"][number];

/**
 * The name a tool definition goes by. A client tool names itself (`name`, chat completions'
 * `function.name`, its `custom.name`); a hosted tool that names none goes by its type
 * (`{"type":"web_search"}`, `computer_use_preview`, `tool_search`, `file_search`), and a remote MCP
 * server's tools by the server they come from: Responses `{"type":"mcp","server_label":…}`
 * (openai 6.49.0, `Tool.Mcp`) and Anthropic's `{"type":"mcp_toolset","mcp_server_name":…}`
 * (@anthropic-ai/sdk 1.16.0, `BetaMCPToolset`) read as `mcp:<server>`.
 */
export function wireToolName(tool: Record<string, unknown>): string {
  const named = tool.name ?? asObject(tool.function).name ?? asObject(tool.custom).name;
  if (typeof named === "string") return named;
  const server = tool.server_label ?? tool.mcp_server_name;
  if (typeof server === "string") return `mcp:${server}`;
  return String(tool.type ?? "");
}

/**
 * A tool sent for a tool search to find rather than shown to the model up front: `defer_loading: true`
 * on Anthropic's tools ("Tool search tool") and on Responses function tools (openai 6.49.0,
 * `FunctionTool.defer_loading`).
 */
export function deferredFlag(tool: Record<string, unknown>): { deferred?: true } {
  return tool.defer_loading === true ? { deferred: true } : {};
}

/**
 * The tools inside a Responses namespace (openai 6.49.0, `NamespaceTool`: `{type:"namespace", name,
 * description, tools:[function | custom]}`), each a tool named `<namespace>.<name>`: the model calls
 * it by both (a call item's `namespace` and `name`). The namespace's own name and description are
 * part of what the model reads, so its first tool's text is the namespace holding that tool alone
 * (valid JSON, as every tool's text is), the others their own JSON; a namespace that holds no tool
 * adds bytes to the tools and no tool.
 */
function namespaceTools(namespace: Record<string, unknown>): WireTool[] {
  const prefix = String(namespace.name ?? "");
  return asArray(namespace.tools).map((value, index) => {
    const tool = asObject(value);
    return {
      name: `${prefix}.${wireToolName(tool)}`,
      json: JSON.stringify(index === 0 ? { ...namespace, tools: [tool] } : tool),
      ...deferredFlag(tool),
    };
  });
}

/** The tools of one list of definitions, a namespace standing for the tools it holds. */
export function wireTools(list: unknown[]): WireTool[] {
  return list.flatMap((value) => {
    const tool = asObject(value);
    if (tool.type === "namespace") return namespaceTools(tool);
    return [{ name: wireToolName(tool), json: JSON.stringify(tool), ...deferredFlag(tool) }];
  });
}
