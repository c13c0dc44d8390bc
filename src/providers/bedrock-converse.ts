import { bedrockConverseEndpoint } from "./cloud-endpoints.js";
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
  Usage,
  WireDissection,
  WireRequest,
} from "./types.js";
import { argumentsObject, asArray, asObject, contentText, count, separateCacheUsage } from "./wire-json.js";

/**
 * Amazon Bedrock's Converse API (Bedrock API reference, "Converse" and "ConverseStream";
 * @aws-sdk/client-bedrock-runtime 3.1178.0, `ConverseRequest`): `POST /model/{modelId}/converse`
 * answers one JSON `ConverseResponse`, `/converse-stream` an AWS EventStream of `ConverseStreamOutput`
 * events. The model is in the path only. The body carries `messages` (roles `user` and `assistant`,
 * each a list of one-key content blocks: `text`, `toolUse`, `toolResult`, `image`, `document`,
 * `reasoningContent`, `cachePoint`…), `system` (blocks `text`, `guardContent`, `cachePoint`),
 * `toolConfig` (`tools` of `toolSpec`, `systemTool` or `cachePoint`, and `toolChoice`),
 * `inferenceConfig` and `additionalModelRequestFields` (a model's own settings, Claude's `thinking`).
 *
 * A `cachePoint` block is Converse's cache breakpoint: everything before it is the prefix cached
 * ("Prompt caching for faster model inference", Bedrock user guide). It is its own block, so it
 * marks the block before it, and a prefix compares the blocks without it (cache-rules.ts).
 *
 * The capture stores a stream as server-sent events (capture/aws-event-stream.ts): each frame as
 * `event: <its :event-type>` with data `{"<event-type>": <payload>}`, the union member the SDK reads.
 */

type Block = Record<string, unknown>;

const CACHE_POINT = { cachePoint: { type: "default" } };

/** A tool call as Converse writes it, in a request's assistant message and in a reply alike. */
const toolUseBlock = (call: ToolCall): Block => ({
  toolUse: { toolUseId: call.id, name: call.name, input: argumentsObject(call.arguments) },
});

function assistantBlocks(message: AssistantMessage): Block[] {
  return [...(message.text.trim() === "" ? [] : [{ text: message.text }]), ...message.toolCalls.map(toolUseBlock)];
}

/** Tool results travel in a user message, consecutive ones together; the last user message ends in a cache point. */
function wireMessages(messages: Message[]): { role: string; content: Block[] }[] {
  const wire: { role: string; content: Block[] }[] = [];
  for (const message of messages) {
    if (message.role === "user") wire.push({ role: "user", content: [{ text: message.content }] });
    else if (message.role === "assistant") {
      const content = assistantBlocks(message);
      if (content.length > 0) wire.push({ role: "assistant", content });
    } else {
      const block = {
        toolResult: {
          toolUseId: message.toolCallId,
          content: [{ text: message.content }],
          status: message.isError ? "error" : "success",
        },
      };
      const last = wire.at(-1);
      if (last?.role === "user" && last.content.every((b) => b.toolResult !== undefined)) last.content.push(block);
      else wire.push({ role: "user", content: [block] });
    }
  }
  const last = wire.at(-1);
  if (last?.role === "user") last.content.push(CACHE_POINT);
  return wire;
}

function buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest {
  const body: Record<string, unknown> = { messages: wireMessages(context.messages) };
  const system = [
    ...(context.systemPrompt === "" ? [] : [{ text: context.systemPrompt }, CACHE_POINT]),
    ...(context.environment === undefined ? [] : [{ text: context.environment }]),
  ];
  if (system.length > 0) body.system = system;
  if (context.tools.length > 0) {
    const tools = context.tools.map((tool) => ({
      toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.parameters } },
    }));
    body.toolConfig = { tools: [...tools, CACHE_POINT] };
  }
  body.inferenceConfig = { maxTokens: model.maxTokens };
  const url = `${model.baseUrl}/model/${encodeURIComponent(model.id)}/converse-stream`;
  return { api: "bedrock-converse", url, body: JSON.stringify(body), kind };
}

/**
 * Bedrock's `TokenUsage`: `inputTokens` is the prompt outside the cache, `cacheReadInputTokens` and
 * `cacheWriteInputTokens` the rest, so the whole prompt is their sum (as Anthropic's `input_tokens`);
 * `cacheDetails` splits the writes by lifetime (`{ttl: "5m"|"1h", inputTokens}`).
 */
function converseUsage(raw: Record<string, unknown>): Usage {
  const details = asArray(raw.cacheDetails).map(asObject);
  const writtenFor = (ttl: string) => count(details.find((d) => d.ttl === ttl)?.inputTokens);
  const counts = {
    uncached: count(raw.inputTokens),
    read: count(raw.cacheReadInputTokens),
    written: count(raw.cacheWriteInputTokens),
    written5m: writtenFor("5m"),
    written1h: writtenFor("1h"),
    output: count(raw.outputTokens),
  };
  return separateCacheUsage(counts, raw);
}

/** Reply blocks as the runtime's message: texts joined, each `toolUse` a call with its input as JSON text. */
function messageOf(blocks: { text?: string; toolUse?: Block; args?: string }[]): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", text: "", toolCalls: [] };
  for (const block of blocks) {
    if (typeof block.text === "string") message.text += block.text;
    if (block.toolUse === undefined) continue;
    const { toolUseId, name, input } = block.toolUse;
    const args = block.args ?? JSON.stringify(input ?? {});
    message.toolCalls.push({ id: String(toolUseId ?? ""), name: String(name ?? ""), arguments: args });
  }
  return message;
}

function withUsage(message: AssistantMessage, raw: unknown): ModelResponse {
  return raw === undefined ? { message } : { message, usage: converseUsage(asObject(raw)) };
}

/** A stream's blocks by `contentBlockIndex`: a tool use opens with `contentBlockStart`, text starts at its first delta. */
function streamedMessage(events: Record<string, unknown>[]): ModelResponse {
  const blocks = new Map<number, { text?: string; toolUse?: Block; args?: string }>();
  let usage: unknown;
  for (const event of events) {
    const start = asObject(event.contentBlockStart);
    const delta = asObject(event.contentBlockDelta);
    if (event.metadata !== undefined) usage = asObject(event.metadata).usage ?? usage;
    if (event.contentBlockStart !== undefined) {
      const toolUse = asObject(start.start).toolUse;
      blocks.set(
        Number(start.contentBlockIndex),
        toolUse === undefined ? {} : { toolUse: asObject(toolUse), args: "" },
      );
    }
    if (event.contentBlockDelta === undefined) continue;
    const index = Number(delta.contentBlockIndex);
    const block = blocks.get(index) ?? {};
    blocks.set(index, block);
    const change = asObject(delta.delta);
    if (typeof change.text === "string") block.text = (block.text ?? "") + change.text;
    const input = asObject(change.toolUse).input;
    if (typeof input === "string") block.args = (block.args ?? "") + input;
  }
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  for (const block of ordered) if (block.toolUse !== undefined && block.args === "") block.args = "{}";
  return withUsage(messageOf(ordered), usage);
}

async function parseStream(stream: ResponseStream): Promise<ModelResponse> {
  const body = await readResponse(stream);
  if (body.form === "sse") return streamedMessage(eventPayloads(body.events));
  const json = asObject(body.json);
  const content = asArray(asObject(asObject(json.output).message).content).map(asObject);
  const blocks = content.map((b) => ({
    ...(typeof b.text === "string" ? { text: b.text } : {}),
    ...(b.toolUse === undefined ? {} : { toolUse: asObject(b.toolUse) }),
  }));
  return withUsage(messageOf(blocks), json.usage);
}

/** The usage a scripted reply states, in Bedrock's shape; none when the reply states none. */
function replyUsage(reply: ScriptedReply): { usage?: Record<string, number> } {
  const usage = reply.usage;
  if (!usage) return {};
  const { inputTokens, outputTokens } = usage;
  return { usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } };
}

/**
 * The stream of `ConverseStreamOutput` events, in the stored form (module comment): messageStart,
 * per block an optional contentBlockStart (tool uses), a contentBlockDelta and a contentBlockStop,
 * then messageStop with the stop reason and metadata with the usage.
 */
function streamedReply(reply: ScriptedReply, stopReason: string): string[] {
  const event = (type: string, payload: Record<string, unknown>) => sseEvent({ [type]: payload }, type);
  const blocks =
    reply.kind === "text"
      ? [{ delta: { text: reply.text } }]
      : reply.calls.map((call) => ({
          start: { toolUse: { toolUseId: call.id, name: call.name } },
          delta: { toolUse: { input: call.arguments } },
        }));
  return [
    event("messageStart", { role: "assistant" }),
    ...blocks.flatMap((block, contentBlockIndex) => [
      ...("start" in block ? [event("contentBlockStart", { contentBlockIndex, start: block.start })] : []),
      event("contentBlockDelta", { contentBlockIndex, delta: block.delta }),
      event("contentBlockStop", { contentBlockIndex }),
    ]),
    event("messageStop", { stopReason }),
    event("metadata", { ...replyUsage(reply), metrics: { latencyMs: 0 } }),
  ];
}

function renderReply(reply: ScriptedReply, _requestBody: string, url = ""): RenderedReply {
  const stopReason = reply.kind === "text" ? "end_turn" : "tool_use";
  if (bedrockConverseEndpoint(url)?.stream) return { streamed: true, chunks: streamedReply(reply, stopReason) };
  const content = reply.kind === "text" ? [{ text: reply.text }] : reply.calls.map(toolUseBlock);
  const whole = { output: { message: { role: "assistant", content } }, stopReason, ...replyUsage(reply) };
  return { streamed: false, chunks: [JSON.stringify({ ...whole, metrics: { latencyMs: 0 } })] };
}

/** The plain text of a content block: its text, a tool use's name and input, a result's texts, reasoning. */
function blockText(block: Block): string {
  if (typeof block.text === "string") return block.text;
  const toolUse = asObject(block.toolUse);
  if (block.toolUse !== undefined) return `${String(toolUse.name)} ${JSON.stringify(toolUse.input ?? {})}`;
  if (block.toolResult !== undefined) {
    const parts = asArray(asObject(block.toolResult).content).map(asObject);
    return parts.map((part) => (part.json === undefined ? contentText([part]) : JSON.stringify(part.json))).join("\n");
  }
  const reasoning = asObject(asObject(block.reasoningContent).reasoningText).text;
  return typeof reasoning === "string" ? reasoning : "";
}

const ttlOf = (block: Block) => String(asObject(block.cachePoint).ttl ?? "5m");

/**
 * The breakpoint a cache point sets: on the element before it in cache order (tools, system,
 * messages), which is where the cached prefix ends. None when nothing comes before it.
 */
function pointBefore(last: Omit<CacheBreakpoint, "ttl"> | null, block: Block): CacheBreakpoint[] {
  return last === null ? [] : [{ ...last, ttl: ttlOf(block) }];
}

interface Walk {
  breakpoints: CacheBreakpoint[];
  /** The last element seen so far, where a cache point would put its breakpoint. */
  last: Omit<CacheBreakpoint, "ttl"> | null;
}

/** Each element of a tools or system list, and for each cache point between them its breakpoint. */
function walkElements<T>(blocks: Block[], part: "tools" | "system", walk: Walk, element: (block: Block) => T): T[] {
  const elements: T[] = [];
  for (const block of blocks) {
    if (block.cachePoint !== undefined) walk.breakpoints.push(...pointBefore(walk.last, block));
    else {
      elements.push(element(block));
      walk.last = { part, index: elements.length - 1 };
    }
  }
  return elements;
}

function dissectTools(entries: Block[], walk: Walk): WireDissection["tools"] {
  return walkElements(entries, "tools", walk, (entry) => {
    const spec = asObject(entry.toolSpec ?? entry.systemTool);
    return { name: String(spec.name ?? Object.keys(entry)[0] ?? ""), json: JSON.stringify(entry) };
  });
}

function dissectSystem(blocks: Block[], walk: Walk): string[] {
  return walkElements(blocks, "system", walk, (block) => {
    const guarded = asObject(asObject(block.guardContent).text).text;
    return typeof block.text === "string" ? block.text : typeof guarded === "string" ? guarded : "";
  });
}

/** A user message of tool results only reads as role `tool`, as the same turn does in chat completions. */
function roleOf(role: string, blocks: Block[]): string {
  return role === "user" && blocks.length > 0 && blocks.every((b) => b.toolResult !== undefined) ? "tool" : role;
}

function dissectMessages(wire: unknown[], walk: Walk): WireDissection["messages"] {
  return wire.map((value, index) => {
    const message = asObject(value);
    const sent = asArray(message.content).map(asObject);
    const blocks = sent.filter((block) => block.cachePoint === undefined);
    let before = 0; // the message's content blocks before this one
    for (const block of sent) {
      if (block.cachePoint === undefined) {
        before++;
        continue;
      }
      walk.breakpoints.push(
        ...pointBefore(before > 0 ? { part: "messages", index, block: before - 1 } : walk.last, block),
      );
    }
    if (blocks.length > 0) walk.last = { part: "messages", index, block: blocks.length - 1 };
    return {
      role: roleOf(String(message.role ?? ""), blocks),
      json: JSON.stringify(message),
      text: blocks
        .map(blockText)
        .filter((t) => t !== "")
        .join("\n"),
      // A cache point renders nothing: the prefix is the message without it.
      ...(blocks.length < sent.length ? { prefixJson: JSON.stringify({ ...message, content: blocks }) } : {}),
    };
  });
}

/**
 * For Claude on Bedrock, Anthropic's rule holds (anthropic-messages.ts, `messageCacheSettings`):
 * a changed tool choice, thinking setting or image count leaves tools and system cached but not the
 * messages. Converse carries them as `toolConfig.toolChoice`, the model's own `thinking` among
 * `additionalModelRequestFields`, and `image` blocks.
 */
function messageCacheSettings(parsed: Record<string, unknown>, messages: WireDissection["messages"]): string {
  const images = messages.reduce((n, m) => n + (m.json.match(/"image":\{/g)?.length ?? 0), 0);
  const toolChoice = asObject(parsed.toolConfig).toolChoice ?? null;
  const thinking = asObject(parsed.additionalModelRequestFields).thinking ?? null;
  return JSON.stringify({ tool_choice: toolChoice, thinking, images });
}

function dissect(body: string, url?: string): WireDissection {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const walk: Walk = { breakpoints: [], last: null };
  const toolConfig = asObject(parsed.toolConfig);
  const tools = dissectTools(asArray(toolConfig.tools).map(asObject), walk);
  const systemParts = dissectSystem(asArray(parsed.system).map(asObject), walk);
  const messages = dissectMessages(asArray(parsed.messages), walk);
  const format = asObject(asObject(parsed.outputConfig).textFormat);
  return {
    model: (url && bedrockConverseEndpoint(url)?.model) ?? "",
    tools,
    toolsJson: toolConfig.tools === undefined ? null : JSON.stringify(toolConfig.tools),
    systemParts,
    messages,
    roles: [...systemParts.map(() => "system"), ...messages.map((m) => m.role)],
    cacheBreakpoints: walk.breakpoints,
    messageCacheSettings: messageCacheSettings(parsed, messages),
    ...(format.type === "json_schema" ? { schemaAnswer: true as const } : {}),
  };
}

export const bedrockConverse: Codec = { api: "bedrock-converse", buildRequest, parseStream, renderReply, dissect };
