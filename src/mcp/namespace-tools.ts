/**
 * Namespace proxies `mcp__<ns>`: one gateway per proxy-only server, with the server fixed, so a
 * model can call that server's tools without searching across all of them first.
 */
import type { RuntimeTool } from "../runtime/types.js";
import { isDirect } from "./direct-tools.js";
import { namespaceToolName } from "./naming.js";
import { namespaceToolMissingText } from "./render.js";
import type { McpRuntime } from "./runtime-context.js";

/**
 * The servers that get a namespace tool, in config order: enabled, not direct, with metadata offering
 * at least one tool (or resource, when exposed), not in backoff, and with a name no direct tool and
 * no other server takes.
 */
export function namespaceServers(rt: McpRuntime, directNames: ReadonlySet<string>): { server: string; name: string }[] {
  const candidates = rt.manager
    .enabled()
    .filter((state) => !isDirect(rt.directSetting(state.name)))
    .filter((state) => {
      const metadata = rt.manager.metadata(state.name);
      if (!metadata || rt.manager.backoffAgoSec(state.name) !== undefined) return false;
      const resources = state.entry.exposeResources === false ? 0 : metadata.resources.length;
      return metadata.tools.length + resources > 0;
    })
    .map((state) => ({ server: state.name, name: namespaceToolName(state.name) }));
  // Two servers normalizing to one name would route calls ambiguously: neither gets it.
  const allNames = rt.manager.all().map((s) => namespaceToolName(s.name));
  return candidates.filter(({ name }) => !directNames.has(name) && allNames.filter((n) => n === name).length === 1);
}

export function createNamespaceTool(rt: McpRuntime, server: string, name: string, proxy: RuntimeTool): RuntimeTool {
  const t = rt.texts.namespace;
  return {
    name,
    label: `MCP: ${server}`,
    description: t.description,
    promptSnippet: t.snippet.replace("{server}", server),
    parameters: {
      type: "object",
      required: ["tool"],
      properties: {
        tool: { type: "string", description: t.parameters.tool },
        args: { type: "object", properties: {}, additionalProperties: true, description: t.parameters.args },
      },
    },
    async execute(params, ctx) {
      if (typeof params.tool !== "string" || params.tool === "") throw new Error(namespaceToolMissingText(server));
      return proxy.execute({ tool: params.tool, args: params.args ?? {}, server }, ctx);
    },
  };
}
