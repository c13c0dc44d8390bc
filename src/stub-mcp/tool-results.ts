import type { TextToolResult } from "./types.js";

export function textResult(text: string, isError = false): TextToolResult {
  return { content: [{ type: "text", text }], isError };
}

/** The error text every stub gives for a tools/call naming a tool it does not have. */
export function unknownToolMessage(name: string): string {
  return `Unknown tool: ${name}`;
}

/**
 * A line that is not JSON-RPC, written to stdout on purpose so a client's handling of a corrupted
 * stream can be observed.
 */
export const GARBAGE_LINE = "stub-mcp: this line is deliberate garbage, not JSON-RPC\n";
