import { textResult } from "./tool-results.js";
import type { ListedTool, TextToolResult } from "./types.js";

/** The fixed time `stub_time` reports, so every run sees the same bytes. */
const STUB_TIMESTAMP = "2026-01-01T00:00:00.000Z";

/** The probe stub's tools, byte-exact as the adapter must see them in tools/list. */
export const PROBE_TOOLS: ListedTool[] = [
  {
    name: "stub_echo",
    description: "Echo the given value back. Deterministic stub tool.",
    inputSchema: {
      type: "object",
      properties: { value: { type: "string", description: "Value to echo" } },
      required: ["value"],
    },
  },
  {
    name: "stub_time",
    description: "Return a fixed stub timestamp.",
    inputSchema: { type: "object", properties: {} },
  },
];

/** Runs one probe tool; undefined when there is no tool of that name. */
export function callProbeTool(name: string, args: Record<string, unknown>): TextToolResult | undefined {
  switch (name) {
    case "stub_echo":
      return textResult(`STUB_ECHO:${String(args.value ?? "")}`);
    case "stub_time":
      return textResult(`STUB_TIME:${STUB_TIMESTAMP}`);
    default:
      return undefined;
  }
}
