/** A server's tool list as the adapter keeps it: every page, the configured filter, and the cache hints. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CachedTool, McpServerEntry } from "./types.js";

/** What the first tools/list page says about caching its answer; it goes into the cache entry as written. */
export interface ToolListHints {
  ttlMs?: number;
  cacheScope?: string;
}

/** Every page of tools/list, filtered by the entry's `includeTools` / `excludeTools`; hints from the first page only. */
export async function listTools(
  client: Client,
  entry: McpServerEntry,
  timeout: number,
): Promise<{ tools: CachedTool[]; hints: ToolListHints }> {
  const tools: CachedTool[] = [];
  let hints: ToolListHints | undefined;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    hints ??= listHints(page);
    for (const t of page.tools) {
      tools.push({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as Record<string, unknown>,
        outputSchema: t.outputSchema as Record<string, unknown> | undefined,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { tools: filterTools(tools, entry), hints: hints ?? {} };
}

/**
 * `ttlMs` and `cacheScope` are top-level keys of the result, outside the MCP schema (the SDK keeps
 * unknown result keys). A `ttlMs` that is not a safe integer ≥ 0 is dropped.
 */
function listHints(page: Record<string, unknown>): ToolListHints {
  const hints: ToolListHints = {};
  if (typeof page.ttlMs === "number" && Number.isSafeInteger(page.ttlMs) && page.ttlMs >= 0) hints.ttlMs = page.ttlMs;
  if (typeof page.cacheScope === "string") hints.cacheScope = page.cacheScope;
  return hints;
}

/** `includeTools` / `excludeTools` globs (`*` wildcards) filter what a server offers. */
function filterTools(tools: CachedTool[], entry: McpServerEntry): CachedTool[] {
  const matcher = (globs: string[]) =>
    globs.map(
      (g) =>
        new RegExp(
          `^${g
            .split("*")
            .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
            .join(".*")}$`,
        ),
    );
  const include = entry.includeTools ? matcher(entry.includeTools) : undefined;
  const exclude = entry.excludeTools ? matcher(entry.excludeTools) : [];
  return tools.filter((t) => (!include || include.some((r) => r.test(t.name))) && !exclude.some((r) => r.test(t.name)));
}
