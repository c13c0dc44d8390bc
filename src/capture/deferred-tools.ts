/**
 * The tools of a request sent for a tool search to load (`defer_loading: true`) that no message has
 * loaded yet. Anthropic's "Tool search tool" page
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool): a deferred tool's
 * definition is kept out of the model's context until a search result names it in a `tool_reference`
 * block, which the API expands into the tool's full definition there. So a deferred tool no message
 * references costs the request no context tokens; one a message references costs its definition.
 * (A Responses tool search hands the tools it loads back in a `tool_search_output` item, counted as
 * the message it is; the deferred definitions in `tools` stay unloaded.)
 */
import type { WireDissection } from "../providers/types.js";
import { asArray, asObject } from "../providers/wire-json.js";

const NONE: ReadonlySet<number> = new Set();

/** Worked out once per request: the counts, the cache reader and the sources all ask. */
const known = new WeakMap<WireDissection, ReadonlySet<number>>();

/** The indices in `d.tools` of deferred tools no message has loaded. */
export function unloadedTools(d: WireDissection): ReadonlySet<number> {
  let unloaded = known.get(d);
  if (unloaded === undefined) {
    unloaded = d.tools.some((tool) => tool.deferred) ? findUnloaded(d) : NONE;
    known.set(d, unloaded);
  }
  return unloaded;
}

function findUnloaded(d: WireDissection): ReadonlySet<number> {
  const loaded = new Set(d.messages.flatMap((message) => toolsLoadedBy(message.json)));
  return new Set(d.tools.flatMap((tool, i) => (tool.deferred && !loaded.has(tool.name) ? [i] : [])));
}

/** The tools a message's JSON loads: the names its `tool_reference` blocks give (a reader of parts asks per message). */
export function toolsLoadedBy(messageJson: string): string[] {
  return messageJson.includes('"tool_reference"') ? toolReferences(JSON.parse(messageJson)) : [];
}

/** The tool names a message's `tool_reference` blocks name, wherever they sit (inside a tool result). */
function toolReferences(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(toolReferences);
  const name = referencedTool(value);
  return name === undefined ? [...asArray(asObject(value).content)].flatMap(toolReferences) : [name];
}

/** The tool a `tool_reference` block loads; undefined for any other value. */
export function referencedTool(value: unknown): string | undefined {
  const { type, tool_name } = asObject(value);
  return type === "tool_reference" && typeof tool_name === "string" ? tool_name : undefined;
}
