/**
 * Where a request's tokens come from: its counted segments (tokens.ts) put under the source each
 * belongs to, so that the sources of a request add up to its total exactly.
 *
 *   system[i]        each system part (the agent's own prompt, as the body splits it)
 *   instructions:<f> an instruction file the agent inlined (CLAUDE.md, AGENTS.md, GEMINI.md; named by
 *                    its path from the working folder), wherever its text appears: in a system part
 *                    or a message (known-texts.ts)
 *   skill:<name>     a skill's body the agent loaded; skill-index:<name> its entry (description) in
 *                    the skills index, wherever that sits in a system part or a message
 *   tools:builtin    tool definitions of the agent itself
 *   tools:<ns>       a Responses namespace's tools (Codex: `functions.exec` → `tools:functions`)
 *   mcp:<server>     an MCP server's tools: `mcp__<server>__<tool>` (Claude Code), the adapter's
 *                    namespace proxy `mcp__<server>` and its direct tools `<server>_<tool>` (servers
 *                    named by the gateway's `Servers:` line), a remote MCP server (wire-tools.ts)
 *                    A tool deferred to a tool search counts nothing until loaded (deferred-tools.ts);
 *                    its name listed for the search, and the `tool_reference` that loads it, are its
 *                    server's too
 *   mcp-adapter      the adapter's own gateway tools, `mcp` and `mcpScript`
 *   history          the conversation: prompts, replies, the model's tool calls
 *   result:<tool>    tool results, by the tool whose call they answer
 *   reasoning        reasoning carried back (thinking blocks, reasoning items, thought parts)
 *   image, document  images and PDFs sent inline, wherever they sit (a tool result's screenshot too),
 *                    at the tokens their provider's documented rule gives (providers/media-rules.ts);
 *                    the JSON around their data (type, media type) goes with the part that holds it
 *   overhead         the reply opener no segment owns
 *
 * A message holding parts of several sources (a user turn with two tool results, an assistant turn
 * with thinking and a call) has its tokens, its frame's with them, shared among them in proportion
 * to each part's own count.
 */
import type { WireDissection } from "../providers/types.js";
import { asArray, asObject } from "../providers/wire-json.js";
import { referencedTool, unloadedTools } from "./deferred-tools.js";
import type { KnownText } from "./known-texts.js";
import { mediaOf } from "./message-media.js";
import { TextMemo } from "./text-memo.js";
import type { RequestTokenCounts, TokenMeasure } from "./tokens.js";

export interface ContextSources {
  /** Tokens by source, in the order sources first appear in the request; they add up to its total. */
  sources: Record<string, number>;
  /** Each tool definition's tokens, in the order of the record's `tools`. */
  toolTokens: number[];
}

/** The tools the MCP adapter itself registers, beside the servers' own. */
const ADAPTER_TOOLS: ReadonlySet<string> = new Set(["mcp", "mcpScript"]);

/** The adapter gateway's description names its servers on one line (`\n\nServers: a, b`). */
const SERVERS_LINE = /\n\nServers: ([^\n]*)/;

/**
 * An agent sends its conversation again with every request, so each distinct message is parsed once
 * (per process, up to this many characters of messages) rather than once per request that repeats
 * it: a long session's request 600 would otherwise parse 1,200 messages again. What is kept is the
 * parsed message and the calls it makes; its pieces are drawn anew, as a result's source depends on
 * the calls of the request it is in.
 */
const PARSED_MAX_CHARS = 64 * 1024 * 1024;
const parsedMessages = new TextMemo<{ item: Record<string, unknown>; calls: [string, string][] }>(PARSED_MAX_CHARS);

function parseMessage(json: string): { item: Record<string, unknown>; calls: [string, string][] } {
  const item = asObject(JSON.parse(json));
  const calls = new Map<string, string>();
  noteCalls(item, calls);
  return { item, calls: [...calls] };
}

export function contextSources(
  d: WireDissection,
  counts: RequestTokenCounts,
  measure: Pick<TokenMeasure, "countText">,
  known: readonly KnownText[] = [],
): ContextSources {
  const sources: Record<string, number> = {};
  const add = (source: string, tokens: number) => {
    sources[source] = (sources[source] ?? 0) + tokens;
  };
  const servers = adapterServers(d.tools);
  const unloaded = unloadedTools(d);
  d.tools.forEach((tool, i) => {
    if (!unloaded.has(i)) add(toolSource(tool.name, servers), counts.perTool[i]!);
  });
  const inlines = (text: string) => known.some((k) => text.includes(k.text));
  counts.perSystemPart.forEach((tokens, i) => {
    const part: Piece[] = [{ source: `system[${i}]`, value: d.systemParts[i] }];
    const pieces = inlines(d.systemParts[i]!) ? withKnownTexts(part, known) : part;
    for (const [source, share] of shareOut(pieces, tokens, measure)) add(source, share);
  });
  const calls = new Map<string, string>();
  d.messages.forEach((message, i) => {
    // A medium's tokens are its rule's; the rest of the message, its data taken out, is shared out.
    const media = mediaOf(message.json, d.model);
    for (const part of media?.parts ?? []) add(part.source, part.tokens);
    const parsed = parsedMessages.get(media?.json ?? message.json, parseMessage);
    for (const [id, tool] of parsed.calls) calls.set(id, tool);
    let pieces = messagePieces(parsed.item, calls);
    const texts = [...(inlines(message.text) ? known : []), ...listedForSearch(message.text)];
    if (texts.length > 0) pieces = withKnownTexts(pieces, texts);
    const text = counts.perMessage[i]! - (media?.tokens ?? 0);
    for (const [source, tokens] of shareOut(pieces, text, measure)) add(source, tokens);
  });
  add("overhead", counts.overhead);
  return { sources, toolTokens: counts.perTool };
}

/**
 * An MCP tool named on a line of its own: how Claude Code lists the tools it defers to its tool
 * search ("The following deferred tools are now available via ToolSearch", one name a line, in a
 * message). Each name is its server's; the agent's own deferred tools stay with the text around them.
 */
const LISTED_MCP_TOOL = /\n(mcp__[^\s]+)(?=\n|$)/g;

function listedForSearch(text: string): KnownText[] {
  if (!text.includes("\nmcp__")) return [];
  return [...text.matchAll(LISTED_MCP_TOOL)].map((match) => ({ source: toolSource(match[1]!), text: match[0] }));
}

/** The servers the adapter's gateway tool lists, longest first so a prefix match takes the most specific. */
function adapterServers(tools: WireDissection["tools"]): string[] {
  const gateway = tools.find((tool) => tool.name === "mcp");
  if (!gateway) return [];
  const parsed = asObject(JSON.parse(gateway.json));
  const description = parsed.description ?? asObject(parsed.function).description;
  const line = typeof description === "string" ? description.match(SERVERS_LINE)?.[1] : undefined;
  if (!line) return [];
  return line
    .split(", ")
    .filter((name) => name !== "")
    .sort((a, b) => b.length - a.length);
}

/** The source a tool definition belongs to (see the module's comment). */
export function toolSource(name: string, servers: readonly string[] = []): string {
  if (name.startsWith("mcp:")) return name;
  if (ADAPTER_TOOLS.has(name)) return "mcp-adapter";
  if (name.startsWith("mcp__")) {
    // `mcp__<server>__<tool>`, `mcp__<namespace>` and a Codex namespace `mcp__<server>__.<tool>`.
    const server = name.slice("mcp__".length).split(".")[0]!.split("__")[0]!;
    // The adapter's namespace writes `-` as `_` (`probe-stub` → `mcp__probe_stub`).
    return `mcp:${servers.find((s) => s.replace(/-/g, "_") === server) ?? server}`;
  }
  const dot = name.indexOf(".");
  if (dot > 0) return `tools:${name.slice(0, dot)}`;
  const server = servers.find((s) => name.startsWith(`${s}_`));
  return server === undefined ? "tools:builtin" : `mcp:${server}`;
}

/** The tool each call id names, from the calls of an assistant turn (all three APIs' shapes). */
function noteCalls(item: Record<string, unknown>, calls: Map<string, string>): void {
  // Responses: a call is an item of its own (`function_call`, `custom_tool_call`), maybe in a namespace.
  if (typeof item.call_id === "string" && typeof item.name === "string") {
    const name = typeof item.namespace === "string" ? `${item.namespace}.${item.name}` : item.name;
    calls.set(item.call_id, name);
  }
  // Chat completions: `tool_calls[].id` and `.function.name`.
  for (const call of asArray(item.tool_calls).map(asObject)) {
    const name = asObject(call.function).name;
    if (typeof call.id === "string" && typeof name === "string") calls.set(call.id, name);
  }
  // Anthropic: `tool_use` blocks (and server tools' `server_tool_use`) in the content.
  for (const block of asArray(item.content).map(asObject)) {
    if (typeof block.id === "string" && typeof block.name === "string") calls.set(block.id, block.name);
  }
}

type Piece = { source: string; value: unknown };

const result = (calls: Map<string, string>, id: unknown) =>
  `result:${(typeof id === "string" && calls.get(id)) || "unknown"}`;

/** A message's parts by source; a message of one source is one piece. */
function messagePieces(item: Record<string, unknown>, calls: Map<string, string>): Piece[] {
  // Responses items: each is of one source.
  if (item.type === "reasoning") return [{ source: "reasoning", value: item }];
  if (typeof item.type === "string" && item.type.endsWith("_output") && "call_id" in item)
    return [{ source: result(calls, item.call_id), value: item }];
  // Chat completions: a tool message answers one call; reasoning may ride on an assistant message.
  if (item.role === "tool") return [{ source: result(calls, item.tool_call_id), value: item }];
  if (Array.isArray(item.parts) && item.parts.length > 0)
    return asArray(item.parts).map((part) => geminiPiece(asObject(part)));
  // Content blocks: the message's frame goes with its blocks, in proportion.
  if (Array.isArray(item.content) && item.content.length > 0)
    return asArray(item.content).flatMap((block) => anthropicPieces(asObject(block), calls));
  const reasoning = item.reasoning_content ?? item.reasoning;
  if (typeof reasoning === "string" && reasoning !== "") {
    const { reasoning_content: _a, reasoning: _b, ...rest } = item;
    return [
      { source: "history", value: rest },
      { source: "reasoning", value: reasoning },
    ];
  }
  return [{ source: "history", value: item }];
}

/** The text a history or system piece holds, and how to put another text in its place. */
function pieceText(value: unknown): { text: string; with(text: string): unknown } | undefined {
  if (typeof value === "string") return { text: value, with: (text) => text };
  const item = asObject(value);
  for (const field of ["text", "content"]) {
    const text = item[field];
    if (typeof text === "string") return { text, with: (next) => ({ ...item, [field]: next }) };
  }
  return undefined;
}

/**
 * The pieces with each known text (an instruction file, a skill's body or index entry) taken out of
 * the piece that holds it, as a piece of its own; what is left of the piece keeps its source.
 */
function withKnownTexts(pieces: Piece[], known: readonly KnownText[]): Piece[] {
  const taken = new WeakSet<Piece>();
  let split = pieces;
  for (const { source, text } of known) {
    split = split.flatMap((piece) => {
      const held = taken.has(piece) ? undefined : pieceText(piece.value);
      if (!held?.text.includes(text)) return [piece];
      const own = { source, value: text };
      taken.add(own);
      return [own, { source: piece.source, value: held.with(held.text.replace(text, "")) }];
    });
  }
  return split;
}

/** Anthropic content blocks (and Responses message content parts, which are all history). */
function anthropicPieces(block: Record<string, unknown>, calls: Map<string, string>): Piece[] {
  if (block.type === "tool_result") return resultPieces(block, result(calls, block.tool_use_id));
  if (block.type === "thinking" || block.type === "redacted_thinking") return [{ source: "reasoning", value: block }];
  return [{ source: "history", value: block }];
}

/**
 * A tool result, and apart from it each `tool_reference` a tool search returned in it: the tool it
 * loads is its server's (deferred-tools.ts), as the definition it expands to is.
 */
function resultPieces(block: Record<string, unknown>, source: string): Piece[] {
  const content = asArray(block.content);
  const isReference = (part: unknown) => referencedTool(part) !== undefined;
  if (!content.some(isReference)) return [{ source, value: block }];
  const references = content.filter(isReference).map((part) => ({
    source: toolSource(referencedTool(part)!),
    value: part,
  }));
  return [{ source, value: { ...block, content: content.filter((part) => !isReference(part)) } }, ...references];
}

/** Gemini parts: a function response names its function; a thought part is reasoning. */
function geminiPiece(part: Record<string, unknown>): Piece {
  const response = asObject(part.functionResponse);
  if (typeof response.name === "string") return { source: `result:${response.name}`, value: part };
  if (part.thought === true) return { source: "reasoning", value: part };
  return { source: "history", value: part };
}

/** A message's tokens shared among its pieces' sources: whole to a message of one source, else by each piece's own count. */
function shareOut(pieces: Piece[], tokens: number, measure: Pick<TokenMeasure, "countText">): Map<string, number> {
  const sources = new Set(pieces.map((piece) => piece.source));
  if (sources.size === 1) return new Map([[pieces[0]!.source, tokens]]);
  const weights = new Map<string, number>();
  for (const piece of pieces) {
    const text = typeof piece.value === "string" ? piece.value : JSON.stringify(piece.value);
    weights.set(piece.source, (weights.get(piece.source) ?? 0) + measure.countText(text));
  }
  return apportion(weights, tokens);
}

/**
 * `total` shared out in whole numbers in proportion to the weights, by largest remainder, so the
 * shares add up to `total` exactly (in turn when every weight is 0).
 */
export function apportion<K>(weights: ReadonlyMap<K, number>, total: number): Map<K, number> {
  let all = 0;
  for (const weight of weights.values()) all += weight;
  const exact = [...weights].map(([key, weight]) => ({ key, share: all === 0 ? 0 : (total * weight) / all }));
  const shares = new Map<K, number>();
  let left = total;
  for (const { key, share } of exact) {
    shares.set(key, Math.floor(share));
    left -= Math.floor(share);
  }
  const byRemainder = [...exact].sort((a, b) => (b.share % 1) - (a.share % 1));
  for (let i = 0; left > 0 && byRemainder.length > 0; i = (i + 1) % byRemainder.length, left--) {
    const key = byRemainder[i]!.key;
    shares.set(key, shares.get(key)! + 1);
  }
  return shares;
}
