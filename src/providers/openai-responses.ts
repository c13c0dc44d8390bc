import { eventPayloads, readResponse, sseEvent } from "./response-body.js";
import type {
  AssistantMessage,
  Codec,
  Context,
  ConversationKeys,
  Message,
  ModelResponse,
  ModelSpec,
  RenderedReply,
  ResponseStream,
  ScriptedReply,
  WireDissection,
  WireRequest,
} from "./types.js";
import { asArray, asObject, contentText, openaiUsage, requestedReply, schemaAnswerOf } from "./wire-json.js";
import { wireTools } from "./wire-tools.js";

/**
 * OpenAI Responses, as pi 0.85.1 sends it (pi-runtime.md §7.2) with thinking off: key order
 * `model, input, stream, prompt_cache_key, store, max_output_tokens, tools`.
 */

/**
 * pi sends its session id (a UUIDv7) as `prompt_cache_key`. A probe has no session, so it sends this
 * fixed id of the same shape: bodies stay byte-identical across runs and as long as pi's.
 */
export const PROBE_PROMPT_CACHE_KEY = "00000000-0000-7000-8000-000000000000";

type Item = Record<string, unknown>;

function assistantItems(message: AssistantMessage, id: string): Item[] {
  return [
    ...(message.text.trim() === ""
      ? []
      : [
          {
            type: "message",
            role: "assistant",
            content: [{ type: "output_text", text: message.text, annotations: [] }],
            status: "completed",
            id,
          },
        ]),
    ...message.toolCalls.map((call) => ({
      type: "function_call",
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    })),
  ];
}

function wireItems(messages: Message[]): Item[] {
  let assistantTurn = 0;
  return messages.flatMap((message): Item[] => {
    if (message.role === "user") return [{ role: "user", content: [{ type: "input_text", text: message.content }] }];
    // Our messages carry no provider item ids; a counter keeps the text items' ids stable across requests.
    if (message.role === "assistant") return assistantItems(message, `msg_${++assistantTurn}`);
    return [{ type: "function_call_output", call_id: message.toolCallId, output: message.content }];
  });
}

/** pi's system role: `developer` for reasoning models, `system` otherwise; the environment part follows it. */
function systemItems(model: ModelSpec, context: Context): Item[] {
  const role = model.reasoning ? "developer" : "system";
  return [
    ...(context.systemPrompt === "" ? [] : [{ role, content: context.systemPrompt }]),
    ...(context.environment === undefined ? [] : [{ role, content: context.environment }]),
  ];
}

function buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest {
  const body: Record<string, unknown> = {
    model: model.id,
    input: [...systemItems(model, context), ...wireItems(context.messages)],
    stream: true,
    prompt_cache_key: PROBE_PROMPT_CACHE_KEY,
    store: false,
    max_output_tokens: model.maxTokens,
  };
  if (context.tools.length > 0) {
    body.tools = context.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }));
  }
  return { api: "openai-responses", url: `${model.baseUrl}/responses`, body: JSON.stringify(body), kind };
}

const responsesUsage = (raw: Record<string, unknown>) =>
  openaiUsage(raw, { input: "input_tokens", output: "output_tokens" });

/** The runtime's message from output items: message items' text joined, function_call items as calls. */
function responseOf(output: Item[], usage: unknown): ModelResponse {
  const message: AssistantMessage = { role: "assistant", text: "", toolCalls: [] };
  for (const item of output) {
    if (item.type === "message") {
      for (const part of asArray(item.content).map(asObject)) {
        if (part.type === "output_text") message.text += String(part.text ?? "");
      }
    }
    if (item.type === "function_call") {
      message.toolCalls.push({
        id: String(item.call_id ?? ""),
        name: String(item.name ?? ""),
        arguments: String(item.arguments ?? ""),
      });
    }
  }
  return usage ? { message, usage: responsesUsage(asObject(usage)) } : { message };
}

/**
 * Items are assembled from `output_item.added` and the text and argument deltas; an item's
 * `output_item.done`, and the final response's `output`, replace what was assembled when present.
 */
function streamedResponse(events: Record<string, unknown>[]): ModelResponse {
  const items = new Map<number, Item>();
  let final: Record<string, unknown> | null = null;
  for (const event of events) {
    const index = Number(event.output_index);
    const item = items.get(index);
    switch (event.type) {
      case "response.output_item.added":
      case "response.output_item.done":
        items.set(index, { ...asObject(event.item) });
        break;
      case "response.output_text.delta":
        if (item) item.streamedText = String(item.streamedText ?? "") + String(event.delta ?? "");
        break;
      case "response.function_call_arguments.delta":
        if (item) item.arguments = String(item.arguments ?? "") + String(event.delta ?? "");
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        final = asObject(event.response);
    }
  }
  const finalOutput = asArray(final?.output).map(asObject);
  const assembled = [...items.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, item]) =>
      item.type === "message" && asArray(item.content).length === 0
        ? { ...item, content: [{ type: "output_text", text: item.streamedText ?? "" }] }
        : item,
    );
  return responseOf(finalOutput.length > 0 ? finalOutput : assembled, final?.usage);
}

async function parseStream(stream: ResponseStream): Promise<ModelResponse> {
  const body = await readResponse(stream);
  if (body.form === "sse") return streamedResponse(eventPayloads(body.events));
  const json = asObject(body.json);
  return responseOf(asArray(json.output).map(asObject), json.usage);
}

function replyItems(reply: ScriptedReply): Item[] {
  if (reply.kind === "text") {
    const part = { type: "output_text", text: reply.text, annotations: [] };
    return [{ id: "msg_probe", type: "message", status: "completed", role: "assistant", content: [part] }];
  }
  return reply.calls.map((call, i) => ({
    id: `fc_probe_${i + 1}`,
    type: "function_call",
    status: "completed",
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
  }));
}

/** The events one output item streams as, per OpenAI's "Streaming API responses" reference. */
function itemEvents(item: Item, outputIndex: number): Item[] {
  const ids = { item_id: item.id, output_index: outputIndex };
  if (item.type === "function_call") {
    return [
      {
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, status: "in_progress", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", ...ids, delta: item.arguments },
      { type: "response.function_call_arguments.done", ...ids, arguments: item.arguments },
      { type: "response.output_item.done", output_index: outputIndex, item },
    ];
  }
  const part = asObject(asArray(item.content)[0]);
  const at = { ...ids, content_index: 0 };
  return [
    {
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { ...item, status: "in_progress", content: [] },
    },
    { type: "response.content_part.added", ...at, part: { ...part, text: "" } },
    { type: "response.output_text.delta", ...at, delta: part.text },
    { type: "response.output_text.done", ...at, text: part.text },
    { type: "response.content_part.done", ...at, part },
    { type: "response.output_item.done", output_index: outputIndex, item },
  ];
}

function renderReply(reply: ScriptedReply, requestBody: string): RenderedReply {
  const { model, stream } = requestedReply(requestBody);
  const output = replyItems(reply);
  const response = { id: "resp_probe", object: "response", created_at: 0, model };
  const usage = reply.usage
    ? {
        usage: {
          input_tokens: reply.usage.inputTokens,
          output_tokens: reply.usage.outputTokens,
          total_tokens: reply.usage.inputTokens + reply.usage.outputTokens,
        },
      }
    : {};
  const done = { ...response, status: "completed", output, ...usage };
  if (!stream) return { streamed: false, chunks: [JSON.stringify(done)] };
  const events = [
    { type: "response.created", response: { ...response, status: "in_progress", output: [] } },
    ...output.flatMap(itemEvents),
    { type: "response.completed", response: done },
  ];
  return {
    streamed: true,
    chunks: events.map((event, n) => sseEvent({ ...event, sequence_number: n }, String(event.type))),
  };
}

/**
 * Roles of input items: a message item keeps its own role; a `function_call` reads as `assistant` and
 * a `function_call_output` as `tool`, the roles the same turn has in chat completions; any other item
 * (reasoning, item_reference, …) reads as its type.
 */
function roleOf(item: Item): string {
  if (item.type === "function_call") return "assistant";
  if (item.type === "function_call_output") return "tool";
  if (typeof item.role === "string") return item.role;
  return String(item.type ?? "");
}

function itemText(item: Item): string {
  if (item.type === "function_call") return `${String(item.name ?? "")} ${String(item.arguments ?? "")}`;
  if (item.type === "function_call_output") return contentText(item.output);
  return contentText(item.content);
}

/**
 * Tools reach a Responses request two ways: the body's `tools`, and input items
 * `{"type":"additional_tools","role":"developer","tools":[…]}` (openai 6.49.0,
 * `ResponseInputItem.AdditionalTools`), which Codex 0.169 sends instead of `tools` with its default
 * model. Both are tools, not messages: the lists in body order, the top level first. The JSON text is
 * the top-level value itself when only it holds tools, else one array of every definition.
 */
function toolLists(parsed: { tools?: unknown }, input: Item[]): { tools: unknown[]; json: string | null } {
  const carried = input.filter((item) => item.type === "additional_tools").flatMap((item) => asArray(item.tools));
  if (carried.length === 0)
    return { tools: asArray(parsed.tools), json: parsed.tools === undefined ? null : JSON.stringify(parsed.tools) };
  const tools = [...asArray(parsed.tools), ...carried];
  return { tools, json: JSON.stringify(tools) };
}

function dissect(body: string): WireDissection {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  // `input` may be one string: a single user message.
  const input =
    typeof parsed.input === "string" ? [{ role: "user", content: parsed.input }] : asArray(parsed.input).map(asObject);
  // `instructions` is system text without a role on the wire; it reads as role `system`, before the items.
  const systemParts = typeof parsed.instructions === "string" ? [parsed.instructions] : [];
  const roles = systemParts.map(() => "system");
  const messages: WireDissection["messages"] = [];
  for (const item of input) {
    if (item.type === "additional_tools") continue;
    const role = roleOf(item);
    roles.push(role);
    if (role === "system" || role === "developer") systemParts.push(contentText(item.content));
    else messages.push({ role, json: JSON.stringify(item), text: itemText(item) });
  }
  const tools = toolLists(parsed, input);
  return {
    model: typeof parsed.model === "string" ? parsed.model : "",
    tools: wireTools(tools.tools),
    toolsJson: tools.json,
    systemParts,
    messages,
    roles,
    cacheBreakpoints: [],
    ...conversationKeysOf(parsed),
    ...schemaAnswerOf(asObject(parsed.text).format),
  };
}

/** Codex and pi name the conversation in `prompt_cache_key`; a chained turn names the response it follows. */
function conversationKeysOf(parsed: Record<string, unknown>): Pick<WireDissection, "conversationKeys"> {
  const keys: ConversationKeys = {};
  if (typeof parsed.prompt_cache_key === "string") keys.promptCacheKey = parsed.prompt_cache_key;
  if (typeof parsed.previous_response_id === "string") keys.previousResponseId = parsed.previous_response_id;
  return Object.keys(keys).length > 0 ? { conversationKeys: keys } : {};
}

export const openaiResponses: Codec = { api: "openai-responses", buildRequest, parseStream, renderReply, dissect };
