/**
 * `mcpScript`: trusted JavaScript, run in a `node:vm` context, that calls MCP tools through the
 * gateway (`tools.<prefixedName>(args)`, `tools.search/describe/call`) and reports with `emit(value)`.
 * The context is a convenience, not a sandbox: the code is the user's own.
 */
import { createContext, Script } from "node:vm";
import type { RuntimeTool, ToolContext, ToolResult } from "../runtime/types.js";
import type { McpRuntime } from "./runtime-context.js";

const DEFAULT_SCRIPT_TIMEOUT_MS = 30_000;

function show(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
}

/** The `tools` object a script sees: the gateway's modes, and every other name as a tool call. */
function scriptTools(proxy: RuntimeTool, ctx: ToolContext): Record<string, unknown> {
  const run = async (params: Record<string, unknown>): Promise<string> => {
    const result = await proxy.execute(params, ctx);
    if (result.isError) throw new Error(result.content);
    return result.content;
  };
  const modes: Record<string, (...args: never[]) => Promise<string>> = {
    search: (query: string) => run({ search: query }),
    describe: (name: string) => run({ describe: name }),
    call: (name: string, args?: Record<string, unknown>) => run({ tool: name, args: args ?? {} }),
  };
  return new Proxy(modes, {
    get: (target, key) =>
      typeof key !== "string"
        ? undefined
        : (target[key] ?? ((args?: Record<string, unknown>) => run({ tool: key, args: args ?? {} }))),
  });
}

/** Runs `code` as the body of an async function; rejects when it throws or outlives `timeoutMs`. */
async function runScript(
  code: string,
  tools: Record<string, unknown>,
  timeoutMs: number,
): Promise<{ emitted: unknown[]; returned: unknown }> {
  const emitted: unknown[] = [];
  const context = createContext({ tools, emit: (value: unknown) => void emitted.push(value) });
  // The vm timeout stops synchronous loops; the timer below stops code that awaits forever.
  const running = new Script(`(async () => {\n${code}\n})()`).runInContext(context, {
    timeout: timeoutMs,
  }) as Promise<unknown>;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ScriptTimeout()), timeoutMs);
  });
  try {
    return { emitted, returned: await Promise.race([running, expired]) };
  } finally {
    clearTimeout(timer);
  }
}

class ScriptTimeout extends Error {}

/** Errors thrown inside the context come from another realm, so `instanceof Error` cannot tell. */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(error);
}

export function createScriptTool(rt: McpRuntime, proxy: RuntimeTool): RuntimeTool {
  const t = rt.texts.script;
  return {
    name: "mcpScript",
    label: "MCP Script",
    description: t.description,
    promptSnippet: t.snippet,
    parameters: {
      type: "object",
      required: ["code"],
      properties: {
        code: { type: "string", description: t.parameters.code },
        timeoutMs: { type: "number", minimum: 1, description: t.parameters.timeoutMs },
      },
    },
    async execute(params, ctx): Promise<ToolResult> {
      const code = typeof params.code === "string" ? params.code : "";
      const timeoutMs =
        typeof params.timeoutMs === "number" && params.timeoutMs >= 1 ? params.timeoutMs : DEFAULT_SCRIPT_TIMEOUT_MS;
      try {
        const { emitted, returned } = await runScript(code, scriptTools(proxy, ctx), timeoutMs);
        const parts = emitted.length > 0 ? emitted : returned === undefined ? [] : [returned];
        return { content: parts.length > 0 ? parts.map(show).join("\n") : t.noOutput };
      } catch (error) {
        const timedOut =
          error instanceof ScriptTimeout || (error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT";
        const content = timedOut
          ? t.timedOut.replace("{ms}", String(timeoutMs))
          : t.failed.replace("{message}", messageOf(error));
        return { content, isError: true };
      }
    },
  };
}
