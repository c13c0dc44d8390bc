import { eventPayloads, readResponse, sseEvent } from "./response-body.js";
import type {
  AssistantMessage,
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
import { asArray, asObject, contentText, openaiUsage, requestedReply, schemaAnswerOf } from "./wire-json.js";
import { wireTools } from "./wire-tools.js";

/**
 * OpenAI chat completions, as pi 0.85.1 serializes it for a qwen-style provider with thinking off:
 * key order `model, messages, stream, stream_options, max_completion_tokens, tools, enable_thinking`.
 */

function wireMessage(message: Message): Record<string, unknown> {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.content }] };
    case "assistant": {
      const wire: Record<string, unknown> = {
        role: "assistant",
        content: message.text.trim() === "" ? null : message.text,
      };
      if (message.toolCalls.length > 0) {
        wire.tool_calls = message.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      return wire;
    }
    case "tool":
      return {
        role: "tool",
        content: message.content === "" ? "(no tool output)" : message.content,
        tool_call_id: message.toolCallId,
      };
  }
}

function isEmptyAssistant(message: Message): boolean {
  return message.role === "assistant" && message.text.trim() === "" && message.toolCalls.length === 0;
}

function buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest {
  const messages = [
    // pi sends no system message when the prompt is empty (a sampling request without one).
    ...(context.systemPrompt === "" ? [] : [{ role: "system", content: context.systemPrompt }]),
    // Two system messages keep the stable part's bytes (and cache prefix) apart from the part that changes.
    ...(context.environment === undefined ? [] : [{ role: "system", content: context.environment }]),
    ...context.messages.filter((m) => !isEmptyAssistant(m)).map(wireMessage),
  ];
  const hasToolHistory = context.messages.some((m) => m.role === "assistant" && m.toolCalls.length > 0);
  const body: Record<string, unknown> = {
    model: model.id,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: model.maxTokens,
  };
  if (context.tools.length > 0 || hasToolHistory) {
    body.tools = context.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters, strict: false },
    }));
  }
  if (model.reasoning) body.enable_thinking = false;
  return { api: "openai-completions", url: `${model.baseUrl}/chat/completions`, body: JSON.stringify(body), kind };
}

interface ChunkToolCall {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

const completionsUsage = (raw: Record<string, unknown>) =>
  openaiUsage(raw, { input: "prompt_tokens", output: "completion_tokens" });

function streamedMessage(chunks: Record<string, unknown>[]): ModelResponse {
  let text = "";
  const calls = new Map<number, ToolCall>();
  let usage: Usage | undefined;
  for (const chunk of chunks) {
    const choice = asObject(asArray(chunk.choices)[0]);
    const delta = choice.delta as { content?: string | null; tool_calls?: ChunkToolCall[] } | undefined;
    if (delta?.content) text += delta.content;
    for (const part of delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(part.index, call);
    }
    if (chunk.usage) usage = completionsUsage(asObject(chunk.usage));
  }
  const message: AssistantMessage = {
    role: "assistant",
    text,
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
  };
  return usage ? { message, usage } : { message };
}

/** A `stream: false` answer: one `chat.completion` object. */
function wholeMessage(json: Record<string, unknown>): ModelResponse {
  const wire = asObject(asObject(asArray(json.choices)[0]).message);
  const message: AssistantMessage = {
    role: "assistant",
    text: contentText(wire.content),
    toolCalls: asArray(wire.tool_calls).map((call) => {
      const fn = asObject(asObject(call).function);
      return {
        id: String(asObject(call).id ?? ""),
        name: String(fn.name ?? ""),
        arguments: String(fn.arguments ?? ""),
      };
    }),
  };
  return json.usage ? { message, usage: completionsUsage(asObject(json.usage)) } : { message };
}

async function parseStream(stream: ResponseStream): Promise<ModelResponse> {
  const body = await readResponse(stream);
  return body.form === "json" ? wholeMessage(asObject(body.json)) : streamedMessage(eventPayloads(body.events));
}

function wireToolCalls(reply: Extract<ScriptedReply, { kind: "tool_calls" }>) {
  return reply.calls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
}

function wireUsage(usage: NonNullable<ScriptedReply["usage"]>) {
  const { inputTokens, outputTokens } = usage;
  return { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
}

/** A streamed answer carries usage only when the request asked (`stream_options.include_usage`), as OpenAI does. */
function streamsUsage(requestBody: string): boolean {
  return asObject((JSON.parse(requestBody) as { stream_options?: unknown }).stream_options).include_usage === true;
}

function renderReply(reply: ScriptedReply, requestBody: string): RenderedReply {
  const { model, stream } = requestedReply(requestBody);
  const finish = reply.kind === "text" ? "stop" : "tool_calls";
  const usage = reply.usage ? { usage: wireUsage(reply.usage) } : {};
  if (!stream) {
    const message =
      reply.kind === "text"
        ? { role: "assistant", content: reply.text }
        : { role: "assistant", content: null, tool_calls: wireToolCalls(reply) };
    const body = { id: "chatcmpl-probe", object: "chat.completion", created: 0, model };
    return {
      streamed: false,
      chunks: [JSON.stringify({ ...body, choices: [{ index: 0, message, finish_reason: finish }], ...usage })],
    };
  }
  const base = { id: "chatcmpl-probe", object: "chat.completion.chunk", created: 0, model };
  const chunk = (delta: unknown, finishReason: string | null) =>
    sseEvent({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  const opening =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: wireToolCalls(reply).map((call, index) => ({ index, ...call })),
        };
  const usageChunk = reply.usage && streamsUsage(requestBody) ? [sseEvent({ ...base, choices: [], ...usage })] : [];
  return { streamed: true, chunks: [chunk(opening, null), chunk({}, finish), ...usageChunk, sseEvent("[DONE]")] };
}

function dissect(body: string): WireDissection {
  const parsed = JSON.parse(body) as {
    model?: string;
    messages?: { role: string; content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] }[];
    tools?: unknown[];
    response_format?: unknown;
  };
  const systemParts: string[] = [];
  const messages: WireDissection["messages"] = [];
  const roles: string[] = [];
  for (const message of parsed.messages ?? []) {
    roles.push(message.role);
    if (message.role === "system" || message.role === "developer") {
      systemParts.push(contentText(message.content));
      continue;
    }
    const calls = (message.tool_calls ?? []).map((c) => `${c.function.name} ${c.function.arguments}`);
    messages.push({
      role: message.role,
      json: JSON.stringify(message),
      text: [contentText(message.content), ...calls].filter((t) => t !== "").join("\n"),
    });
  }
  return {
    model: parsed.model ?? "",
    // A function tool names itself in `function`, a custom one in `custom` (openai 6.49.0, `ChatCompletionCustomTool`).
    tools: wireTools(parsed.tools ?? []),
    toolsJson: parsed.tools === undefined ? null : JSON.stringify(parsed.tools),
    systemParts,
    messages,
    roles,
    cacheBreakpoints: [],
    ...schemaAnswerOf(parsed.response_format),
  };
}

export const openaiCompletions: Codec = { api: "openai-completions", buildRequest, parseStream, renderReply, dissect };
