/**
 * A tool call's arguments as the model sent them: an object already, or JSON text of one. Shared by
 * the runtime's turn loop (the call's `arguments` string) and the MCP proxy tool (its `args` field),
 * which word their own errors; a neutral module so neither layer reaches into the other.
 */

export type ToolArgs =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; problem: "not-json"; message: string }
  | { ok: false; problem: "not-an-object"; got: "array" | "null" | string };

export function parseToolArgs(raw: unknown): ToolArgs {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return { ok: false, problem: "not-json", message: (error as Error).message };
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    return { ok: false, problem: "not-an-object", got };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
