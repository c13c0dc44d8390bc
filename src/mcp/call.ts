import type { ToolResult } from "../runtime/types.js";
import {
  callFailedText,
  connectFailedText,
  type McpContentItem,
  renderCallContent,
  renderToolErrorSuffix,
  serverUnavailableText,
} from "./render.js";
import type { SearchableTool } from "./search.js";
import { errorMessage, ServerInBackoff, type ServerManager } from "./server-manager.js";

function blocksToText(content: readonly McpContentItem[] | undefined, structured?: unknown): string {
  return renderCallContent(content, structured)
    .map((block) => (block.type === "text" ? block.text : "(see attached image)"))
    .join("\n");
}

/**
 * Call one MCP tool (or read one resource) for the model, connecting its server first if needed. Every
 * failure becomes the text the model reads; none escapes as an exception.
 */
export async function callServerTool(
  manager: ServerManager,
  tool: SearchableTool,
  args: Record<string, unknown>,
  afterConnect: () => void,
  unavailableText: (server: string, failedAgoSec: number) => string = serverUnavailableText,
): Promise<ToolResult> {
  const wasConnected = manager.isConnected(tool.server);
  try {
    await manager.connect(tool.server);
  } catch (error) {
    if (error instanceof ServerInBackoff)
      return { content: unavailableText(tool.server, error.failedAgoSec), isError: true };
    return {
      content: connectFailedText(tool.server, (error as Error).message),
      isError: true,
      details: { error: "call_failed" },
    };
  }
  if (!wasConnected) afterConnect();
  try {
    if (tool.resourceUri) {
      const contents = await manager.readResource(tool.server, tool.resourceUri);
      const text = contents.map((c) => c.text ?? `[binary content: ${c.mimeType ?? "unknown type"}]`).join("\n");
      return { content: text === "" ? "(empty result)" : text };
    }
    const result = await manager.callTool(tool.server, tool.originalName, args);
    const text = blocksToText(result.content as McpContentItem[] | undefined, result.structuredContent);
    if (result.isError) {
      return {
        content: `Error: ${text}${renderToolErrorSuffix(tool.inputSchema)}`,
        isError: true,
        details: { error: "tool_error" },
      };
    }
    return { content: text };
  } catch (error) {
    return {
      content: `${callFailedText(errorMessage(error))}${renderToolErrorSuffix(tool.inputSchema)}`,
      isError: true,
      details: { error: "call_failed" },
    };
  }
}
