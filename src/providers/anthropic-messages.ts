import { cloudMessagesEndpoint } from "./cloud-endpoints.js";
import { eventPayloads, readResponse, sseEvent } from "./response-body.js";
import type {
  AssistantMessage,
  CacheBreakpoint,
  Codec,
  Context,
  Message,
  ModelResponse,
  ModelSpec,
  RenderedReply,
  ResponseStream,
  ScriptedReply,
  ToolCall,
  ToolDefinition,
  Usage,
  WireDissection,
  WireRequest,
} from "./types.js";
import {
  argumentsObject,
  asArray,
  asObject,
  contentText,
  count,
  requestedReply,
  schemaAnswerOf,
  separateCacheUsage,
} from "./wire-json.js";
import { deferredFlag, wireToolName } from "./wire-tools.js";

/**
 * Anthropic Messages, as pi 0.85.1 sends it (pi-runtime.md §7.2) with thinking off: key order
 * `model, messages, max_tokens, stream, system, tools`. Cache breakpoints sit on the system prompt,
 * the last tool and the last user block, so tools + system and the conversation so far are cached.
 */

type Block = Record<string, unknown>;
interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

const EPHEMERAL = { type: "ephemeral" };

function assistantBlocks(message: AssistantMessage): Block[] {
  return [
    ...(message.text.trim() === "" ? [] : [{ type: "text", text: message.text }]),
    ...message.toolCalls.map((call) => ({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: argumentsObject(call.arguments),
    })),
  ];
}

/** Consecutive tool results travel as one user message of `tool_result` blocks, as the API requires. */
function wireMessages(messages: Message[]): WireMessage[] {
  const wire: WireMessage[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      wire.push({ role: "user", content: [{ type: "text", text: message.content }] });
    } else if (message.role === "assistant") {
      const content = assistantBlocks(message);
      if (content.length > 0) wire.push({ role: "assistant", content });
    } else {
      const block = {
        type: "tool_result",
        tool_use_id: message.toolCallId,
        content: message.content,
        is_error: message.isError,
      };
      const last = wire.at(-1);
      if (last?.role === "user" && last.content.every((b) => b.type === "tool_result")) last.content.push(block);
      else wire.push({ role: "user", content: [block] });
    }
  }
  const last = wire.at(-1);
  if (last?.role === "user") {
    const lastBlock = last.content.at(-1)!;
    last.content[last.content.length - 1] = { ...lastBlock, cache_control: EPHEMERAL };
  }
  return wire;
}

/**
 * The stable prompt carries the breakpoint; the environment part (load_skill model) follows without
 * one, so a changed environment never invalidates the cached tools + prompt. No prompt, no `system`.
 */
function systemBlocks(context: Context): Block[] {
  return [
    ...(context.systemPrompt === "" ? [] : [{ type: "text", text: context.systemPrompt, cache_control: EPHEMERAL }]),
    ...(context.environment === undefined ? [] : [{ type: "text", text: context.environment }]),
  ];
}

function wireTools(tools: ToolDefinition[]): Block[] {
  return tools.map((tool, i) => ({
    name: tool.name,
    description: tool.description,
    eager_input_streaming: true,
    input_schema: {
      type: "object",
      properties: tool.parameters.properties ?? {},
      required: tool.parameters.required ?? [],
    },
    ...(i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
}

function buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest {
  const body: Record<string, unknown> = {
    model: model.id,
    messages: wireMessages(context.messages),
    max_tokens: model.maxTokens,
    stream: true,
  };
  const system = systemBlocks(context);
  if (system.length > 0) body.system = system;
  if (context.tools.length > 0) body.tools = wireTools(context.tools);
  return { api: "anthropic-messages", url: `${model.baseUrl}/v1/messages?beta=true`, body: JSON.stringify(body), kind };
}

/**
 * Anthropic's `input_tokens` counts only the uncached rest; the cache reads and writes are separate
 * counts ("Prompt caching" → "Tracking cache performance"), so the total prompt is their sum.
 */
function anthropicUsage(raw: Record<string, unknown>): Usage {
  const split = asObject(raw.cache_creation);
  const counts = {
    uncached: count(raw.input_tokens),
    read: count(raw.cache_read_input_tokens),
    written: count(raw.cache_creation_input_tokens),
    written5m: count(split.ephemeral_5m_input_tokens),
    written1h: count(split.ephemeral_1h_input_tokens),
    output: count(raw.output_tokens),
  };
  return separateCacheUsage(counts, raw);
}

/** The reply's content blocks as the runtime's message: text blocks joined, tool_use blocks as calls. */
function messageOf(blocks: { type?: unknown; text?: unknown; id?: unknown; name?: unknown; args: string }[]) {
  const message: AssistantMessage = { role: "assistant", text: "", toolCalls: [] };
  for (const block of blocks) {
    if (block.type === "text") message.text += String(block.text ?? "");
    if (block.type === "tool_use") {
      const call: ToolCall = { id: String(block.id ?? ""), name: String(block.name ?? ""), arguments: block.args };
      message.toolCalls.push(call);
    }
  }
  return message;
}

function withUsage(message: AssistantMessage, raw: Record<string, unknown> | null): ModelResponse {
  return raw ? { message, usage: anthropicUsage(raw) } : { message };
}

/** `message_delta` repeats usage counts cumulatively; a null there never erases what message_start said. */
function mergeUsage(into: Record<string, unknown> | null, usage: unknown): Record<string, unknown> | null {
  if (usage === undefined || usage === null) return into;
  const defined = Object.entries(asObject(usage)).filter(([, v]) => v !== null);
  return { ...(into ?? {}), ...Object.fromEntries(defined) };
}

function streamedMessage(events: Record<string, unknown>[]): ModelResponse {
  const blocks = new Map<number, Block & { args: string }>();
  let usage: Record<string, unknown> | null = null;
  for (const event of events) {
    const index = Number(event.index);
    if (event.type === "message_start") usage = mergeUsage(usage, asObject(event.message).usage);
    if (event.type === "message_delta") usage = mergeUsage(usage, event.usage);
    if (event.type === "content_block_start") blocks.set(index, { ...asObject(event.content_block), args: "" });
    const block = blocks.get(index);
    if (event.type !== "content_block_delta" || !block) continue;
    const delta = asObject(event.delta);
    if (delta.type === "text_delta") block.text = String(block.text ?? "") + String(delta.text ?? "");
    if (delta.type === "input_json_delta") block.args += String(delta.partial_json ?? "");
  }
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  // A tool_use whose input arrived whole in content_block_start (no deltas) keeps that input.
  for (const block of ordered) if (block.args === "") block.args = JSON.stringify(block.input ?? {});
  return withUsage(messageOf(ordered), usage);
}

async function parseStream(stream: ResponseStream): Promise<ModelResponse> {
  const body = await readResponse(stream);
  if (body.form === "sse") return streamedMessage(eventPayloads(body.events));
  const json = asObject(body.json);
  const blocks = asArray(json.content).map((b) => ({ ...asObject(b), args: JSON.stringify(asObject(b).input ?? {}) }));
  return withUsage(messageOf(blocks), json.usage ? asObject(json.usage) : null);
}

function replyBlocks(reply: ScriptedReply): Block[] {
  if (reply.kind === "text") return [{ type: "text", text: reply.text }];
  return reply.calls.map((call) => ({
    type: "tool_use",
    id: call.id,
    name: call.name,
    input: argumentsObject(call.arguments),
  }));
}

/**
 * The event sequence of Anthropic's "Streaming Messages" page: start, one start/delta/stop per block,
 * end. Input tokens are known at message_start; the output count arrives with message_delta.
 */
function streamedReply(reply: ScriptedReply, message: Record<string, unknown>, stopReason: string): string[] {
  const event = (payload: Record<string, unknown>) => sseEvent(payload, String(payload.type));
  const blocks =
    reply.kind === "text"
      ? [{ start: { type: "text", text: "" }, delta: { type: "text_delta", text: reply.text } }]
      : reply.calls.map((call) => ({
          start: { type: "tool_use", id: call.id, name: call.name, input: {} },
          delta: { type: "input_json_delta", partial_json: call.arguments },
        }));
  const usage = reply.usage;
  const start = usage ? { usage: { input_tokens: usage.inputTokens, output_tokens: 0 } } : {};
  return [
    event({
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, ...start },
    }),
    ...blocks.flatMap((block, index) => [
      event({ type: "content_block_start", index, content_block: block.start }),
      event({ type: "content_block_delta", index, delta: block.delta }),
      event({ type: "content_block_stop", index }),
    ]),
    event({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      ...(usage ? { usage: { output_tokens: usage.outputTokens } } : {}),
    }),
    event({ type: "message_stop" }),
  ];
}

function renderReply(reply: ScriptedReply, requestBody: string): RenderedReply {
  const { model, stream } = requestedReply(requestBody);
  const message = { id: "msg_probe", type: "message", role: "assistant", model };
  const stopReason = reply.kind === "text" ? "end_turn" : "tool_use";
  if (stream) return { streamed: true, chunks: streamedReply(reply, message, stopReason) };
  const usage = reply.usage
    ? { usage: { input_tokens: reply.usage.inputTokens, output_tokens: reply.usage.outputTokens } }
    : {};
  const whole = { ...message, content: replyBlocks(reply), stop_reason: stopReason, stop_sequence: null, ...usage };
  return { streamed: false, chunks: [JSON.stringify(whole)] };
}

function ttlOf(marker: unknown): string {
  return String(asObject(marker).ttl ?? "5m");
}

/** A JSON text without the breakpoint marker of a block and of the blocks inside a tool result. */
function withoutMarkers(block: Block): Block {
  const { cache_control: _marker, ...rest } = block;
  if (Array.isArray(rest.content)) rest.content = rest.content.map((inner) => withoutMarkers(asObject(inner)));
  return rest;
}

/** A block's `cache_control`, or the one on a block inside it (a tool result's content); undefined when none. */
function markerOf(block: Block): unknown {
  if (block.cache_control !== undefined) return block.cache_control;
  return asArray(block.content)
    .map((inner) => markerOf(asObject(inner)))
    .find((marker) => marker !== undefined);
}

function blockText(block: Block): string {
  if (block.type === "tool_use") return `${String(block.name)} ${JSON.stringify(block.input ?? {})}`;
  if (block.type === "tool_result") return contentText(block.content);
  return typeof block.text === "string" ? block.text : "";
}

/** A user message made of tool results only reads as role `tool`, as the same turn does in chat completions. */
function roleOf(role: string, blocks: Block[]): string {
  return role === "user" && blocks.length > 0 && blocks.every((b) => b.type === "tool_result") ? "tool" : role;
}

function dissectMessages(wire: unknown[], breakpoints: CacheBreakpoint[]): WireDissection["messages"] {
  return wire.map((value, index) => {
    const message = asObject(value);
    // Official clients may send content as a plain string; it is one text block.
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : asArray(message.content).map(asObject);
    const markers = blocks.map(markerOf);
    markers.forEach((marker, block) => {
      if (marker !== undefined) breakpoints.push({ part: "messages", index, block, ttl: ttlOf(marker) });
    });
    const json = JSON.stringify(message);
    // The provider caches the rendered prompt: a string is the same text as one text block, and a
    // `cache_control` marker renders nothing (Anthropic, "Prompt caching": moving a breakpoint keeps
    // the prefix). So the prefix text is the content as blocks without markers, whatever was sent.
    const rendered = typeof message.content === "string" || markers.some((marker) => marker !== undefined);
    return {
      role: roleOf(String(message.role ?? ""), blocks),
      json,
      text: blocks
        .map(blockText)
        .filter((t) => t !== "")
        .join("\n"),
      ...(rendered ? { prefixJson: JSON.stringify({ ...message, content: blocks.map(withoutMarkers) }) } : {}),
    };
  });
}

function dissect(body: string, url?: string): WireDissection {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const breakpoints: CacheBreakpoint[] = [];
  const tools = asArray(parsed.tools).map((value, index) => {
    const tool = asObject(value);
    if (tool.cache_control !== undefined) breakpoints.push({ part: "tools", index, ttl: ttlOf(tool.cache_control) });
    // Server tools (web search, code execution, text editor…) name themselves as client tools do;
    // an MCP toolset names its server.
    return {
      name: wireToolName(tool),
      json: JSON.stringify(tool),
      ...(tool.cache_control === undefined ? {} : { prefixJson: JSON.stringify(withoutMarkers(tool)) }),
      ...deferredFlag(tool),
    };
  });
  // `system` is a string or a list of text blocks; each block is one system part.
  const systemBlocksSent =
    typeof parsed.system === "string" ? [{ type: "text", text: parsed.system }] : asArray(parsed.system).map(asObject);
  systemBlocksSent.forEach((block, index) => {
    if (block.cache_control !== undefined) breakpoints.push({ part: "system", index, ttl: ttlOf(block.cache_control) });
  });
  const systemParts = systemBlocksSent.map((block) => String(block.text ?? ""));
  const messages = dissectMessages(asArray(parsed.messages), breakpoints);
  // Automatic caching: a top-level `cache_control` puts the breakpoint on the last cacheable block
  // (Anthropic, "Prompt caching" → "Automatic caching").
  const last = messages.length - 1;
  if (parsed.cache_control !== undefined && last >= 0) {
    const blocks = asArray(asObject(asArray(parsed.messages)[last]).content).length;
    breakpoints.push({
      part: "messages",
      index: last,
      block: Math.max(blocks - 1, 0),
      ttl: ttlOf(parsed.cache_control),
    });
  }
  return {
    // Bedrock and Vertex AI name the model in the path, not the body.
    model: typeof parsed.model === "string" ? parsed.model : ((url && cloudMessagesEndpoint(url)?.model) ?? ""),
    tools,
    toolsJson: parsed.tools === undefined ? null : JSON.stringify(parsed.tools),
    systemParts,
    messages,
    roles: [...systemParts.map(() => "system"), ...messages.map((m) => m.role)],
    cacheBreakpoints: breakpoints,
    messageCacheSettings: messageCacheSettings(parsed, messages),
    ...conversationKeysOf(parsed),
    ...schemaAnswerOf(asObject(parsed.output_config).format),
  };
}

/**
 * Changing `tool_choice` or the thinking settings, or adding or removing images anywhere in the
 * prompt, invalidates the cached messages while tools and system stay cached (Anthropic, "Prompt
 * caching" → "What invalidates the cache"; "Tool use with prompt caching"). One text of the three, so
 * two requests compare them at once.
 */
function messageCacheSettings(parsed: Record<string, unknown>, messages: WireDissection["messages"]): string {
  const images = messages.reduce((n, m) => n + (m.json.match(/"type":"image"/g)?.length ?? 0), 0);
  return JSON.stringify({ tool_choice: parsed.tool_choice ?? null, thinking: parsed.thinking ?? null, images });
}

/** Claude Code names its session in `metadata.user_id`, a JSON text holding `session_id`. */
function conversationKeysOf(parsed: Record<string, unknown>): Pick<WireDissection, "conversationKeys"> {
  const userId = asObject(parsed.metadata).user_id;
  if (typeof userId !== "string" || !userId.startsWith("{")) return {};
  try {
    const session = asObject(JSON.parse(userId)).session_id;
    return typeof session === "string" && session !== "" ? { conversationKeys: { session } } : {};
  } catch {
    return {};
  }
}

export const anthropicMessages: Codec = { api: "anthropic-messages", buildRequest, parseStream, renderReply, dissect };
