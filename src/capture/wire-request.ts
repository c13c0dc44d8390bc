/**
 * Which wire API an HTTP request speaks (by its path), whether the capture can take its body apart,
 * and how that API's provider words an error, so the mock answers each client in the shape its SDK reads.
 */

import { bedrockConverseEndpoint, cloudMessagesEndpoint } from "../providers/cloud-endpoints.js";
import { codeAssistInner, geminiEndpoint } from "../providers/google-generative-ai.js";
import type { WireApi } from "../providers/types.js";
import { type ChatRequestProblem, chatRequestProblem, invalid, isObject, jsonObject } from "./chat-request.js";

/**
 * APIs whose path is fixed; Gemini's names its model and method (`/v1beta/models/{model}:generateContent`),
 * Bedrock's Converse its model (`/model/{modelId}/converse`).
 */
export type FixedPathApi = Exclude<WireApi, "google-generative-ai" | "bedrock-converse">;

/** The request path each fixed-path API's clients post to, after the base URL's `/v1`. */
export const API_PATHS: Record<FixedPathApi, string> = {
  "openai-completions": "/chat/completions",
  "anthropic-messages": "/messages",
  "openai-responses": "/responses",
};

/**
 * The wire API a request path belongs to (any prefix before it), or null for any other path. Of
 * Gemini's methods only the two that generate are requests the capture takes apart; `countTokens`
 * and the model list stay side requests.
 */
export function apiForPath(path: string): WireApi | null {
  const gemini = geminiEndpoint(path);
  if (gemini) return gemini.method === "countTokens" ? null : "google-generative-ai";
  if (cloudMessagesEndpoint(path)) return "anthropic-messages";
  if (bedrockConverseEndpoint(path)) return "bedrock-converse";
  for (const [api, suffix] of Object.entries(API_PATHS) as [WireApi, string][]) if (path.endsWith(suffix)) return api;
  return null;
}

function listProblem(value: unknown, param: string, what: string, named: boolean): ChatRequestProblem | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return invalid(param, `an array of ${what}`, value);
  for (const [i, item] of value.entries()) {
    if (!isObject(item)) return invalid(`${param}[${i}]`, "an object", item);
    if (named && item.name !== undefined && typeof item.name !== "string")
      return invalid(`${param}[${i}].name`, "a string", item.name);
  }
  return null;
}

/** Anthropic Messages: `messages` (required) of objects with a role; `system` a string or blocks; `tools` objects. */
function messagesBodyProblem(body: Record<string, unknown>): ChatRequestProblem | null {
  if (!Array.isArray(body.messages)) return invalid("messages", "an array of messages", body.messages);
  for (const [i, message] of body.messages.entries()) {
    if (!isObject(message)) return invalid(`messages[${i}]`, "an object", message);
    if (typeof message.role !== "string") return invalid(`messages[${i}].role`, "a string", message.role);
  }
  if (body.system !== undefined && typeof body.system !== "string")
    return listProblem(body.system, "system", "text blocks", false);
  return listProblem(body.tools, "tools", "tools", true);
}

/** OpenAI Responses: `input` a string or items; `instructions` a string; `tools` objects. */
function responsesBodyProblem(body: Record<string, unknown>): ChatRequestProblem | null {
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== "string")
    return invalid("instructions", "a string", body.instructions);
  const input = typeof body.input === "string" ? null : listProblem(body.input, "input", "input items", false);
  return input ?? listProblem(body.tools, "tools", "tools", true);
}

/** A Gemini Content: an object whose `parts` is a list of objects (`role` a string when given). */
function contentProblem(value: unknown, param: string): ChatRequestProblem | null {
  if (!isObject(value)) return invalid(param, "an object", value);
  if (value.role !== undefined && typeof value.role !== "string")
    return invalid(`${param}.role`, "a string", value.role);
  if (!Array.isArray(value.parts)) return invalid(`${param}.parts`, "an array of parts", value.parts);
  return listProblem(value.parts, `${param}.parts`, "parts", false);
}

/**
 * Gemini generateContent: `contents` (required) of Contents; `systemInstruction` a Content or a
 * string; `tools` objects, each `functionDeclarations` a list of named objects.
 */
function geminiBodyProblem(body: Record<string, unknown>): ChatRequestProblem | null {
  if (!Array.isArray(body.contents)) return invalid("contents", "an array of contents", body.contents);
  for (const [i, content] of body.contents.entries()) {
    const problem = contentProblem(content, `contents[${i}]`);
    if (problem) return problem;
  }
  const system = body.systemInstruction;
  if (system !== undefined && typeof system !== "string") {
    const problem = contentProblem(system, "systemInstruction");
    if (problem) return problem;
  }
  const tools = listProblem(body.tools, "tools", "tools", false);
  if (tools) return tools;
  for (const [i, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    const declarations = (tool as Record<string, unknown>).functionDeclarations;
    const problem = listProblem(declarations, `tools[${i}].functionDeclarations`, "function declarations", true);
    if (problem) return problem;
  }
  return null;
}

/** A list of one-key blocks (Converse's content, system and tools): objects, when given at all. */
function blocksProblem(value: unknown, param: string): ChatRequestProblem | null {
  return listProblem(value, param, "blocks", false);
}

/**
 * Bedrock Converse: `messages` of objects with a role and a `content` list of blocks; `system` a
 * list of blocks; `toolConfig` an object whose `tools` is a list (ConverseRequest, Bedrock API reference).
 */
function converseBodyProblem(body: Record<string, unknown>): ChatRequestProblem | null {
  if (body.messages !== undefined && !Array.isArray(body.messages))
    return invalid("messages", "an array of messages", body.messages);
  for (const [i, message] of (body.messages ?? []).entries()) {
    if (!isObject(message)) return invalid(`messages[${i}]`, "an object", message);
    if (typeof message.role !== "string") return invalid(`messages[${i}].role`, "a string", message.role);
    if (!Array.isArray(message.content))
      return invalid(`messages[${i}].content`, "an array of blocks", message.content);
    const problem = blocksProblem(message.content, `messages[${i}].content`);
    if (problem) return problem;
  }
  const system = blocksProblem(body.system, "system");
  if (system) return system;
  if (body.toolConfig === undefined) return null;
  if (!isObject(body.toolConfig)) return invalid("toolConfig", "an object", body.toolConfig);
  return blocksProblem(body.toolConfig.tools, "toolConfig.tools");
}

const BODY_PROBLEMS: Record<
  Exclude<WireApi, "openai-completions">,
  (body: Record<string, unknown>) => ChatRequestProblem | null
> = {
  "anthropic-messages": messagesBodyProblem,
  "openai-responses": responsesBodyProblem,
  "google-generative-ai": geminiBodyProblem,
  "bedrock-converse": converseBodyProblem,
};

/** The first thing wrong with a body of the given API, or null when the capture can take it apart. */
export function requestProblem(api: WireApi, body: string): ChatRequestProblem | null {
  if (api === "openai-completions") return chatRequestProblem(body);
  const read = jsonObject(body);
  if (read.problem) return read.problem;
  if (read.object.model !== undefined && typeof read.object.model !== "string")
    return invalid("model", "a string", read.object.model);
  // A Code Assist body is checked by the Gemini request it wraps.
  const checked = api === "google-generative-ai" ? codeAssistInner(read.object) : read.object;
  return BODY_PROBLEMS[api](checked);
}

/** Anthropic's error types by HTTP status ("Errors" page of its API reference). */
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  404: "not_found_error",
  500: "api_error",
};

/** Google's canonical status names by HTTP status (the Gemini API's "Troubleshooting" error table). */
const GOOGLE_STATUSES: Record<number, string> = { 400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 500: "INTERNAL" };

/**
 * An error body as the API's provider sends it: Anthropic `{"type":"error","error":{"type","message"}}`;
 * both OpenAI APIs `{"error":{"message","type","param","code"}}`; Google `{"error":{"code","message","status"}}`;
 * Bedrock `{"message"}` (its error's type travels in the `x-amzn-errortype` header).
 */
export function errorBody(
  api: WireApi,
  status: number,
  message: string,
  problem?: Pick<ChatRequestProblem, "param" | "code">,
): unknown {
  if (api === "anthropic-messages")
    return { type: "error", error: { type: ANTHROPIC_ERROR_TYPES[status] ?? "api_error", message } };
  if (api === "google-generative-ai")
    return { error: { code: status, message, status: GOOGLE_STATUSES[status] ?? "INTERNAL" } };
  if (api === "bedrock-converse") return { message };
  const type = status === 400 ? "invalid_request_error" : status === 404 ? "not_found_error" : "server_error";
  return { error: { message, type, param: problem?.param ?? null, code: problem?.code ?? null } };
}

/**
 * Whether a response is a stream whose end is checked: an event stream, or Gemini's JSON-array
 * stream (`streamGenerateContent` without `alt=sse`, sent as `application/json`).
 */
export function isCheckedStream(api: WireApi, eventStream: boolean, text: string): boolean {
  return eventStream || (api === "google-generative-ai" && text.trimStart().startsWith("["));
}

/**
 * Gemini's stream ends with the chunk whose candidate carries `finishReason` (REST reference,
 * "GenerateContentResponse"): the last `"finishReason"` must follow the last chunk's `"candidates"`
 * (a text never holds either quoted key unescaped), and an array stream must be closed by `]`. A
 * prompt refused outright ends with `promptFeedback.blockReason` and no candidate.
 */
function geminiStreamEnded(text: string): boolean {
  const tail = text.slice(-4096);
  const blocked = tail.includes('"blockReason"') && !tail.includes('"candidates"');
  const finished = blocked || tail.lastIndexOf('"finishReason"') > tail.lastIndexOf('"candidates"');
  return finished && (!text.trimStart().startsWith("[") || /\]\s*$/.test(tail));
}

/**
 * Whether a successful stream reached its API's last event: chat completions end with
 * `data: [DONE]`, Anthropic with `message_stop`, Responses with `response.completed` (or its
 * `failed`/`incomplete` siblings), Gemini with a chunk carrying `finishReason`, Bedrock's Converse
 * with `metadata` (after `messageStop`, carrying the usage). A stream without it was cut short.
 */
export function streamReachedEnd(api: WireApi, text: string): { ended: boolean; expected: string } {
  const tail = text.slice(-4096);
  if (api === "google-generative-ai")
    return { ended: geminiStreamEnded(text), expected: "a chunk with a finishReason" };
  if (api === "openai-completions") return { ended: /data: ?\[DONE\]\s*$/.test(tail), expected: "data: [DONE]" };
  if (api === "anthropic-messages")
    return { ended: /event: ?message_stop\s*\n/.test(tail), expected: "a message_stop event" };
  if (api === "bedrock-converse") return { ended: /event: ?metadata\s*\n/.test(tail), expected: "a metadata event" };
  return {
    ended: /event: ?response\.(completed|failed|incomplete)\s*\n/.test(tail),
    expected: "a response.completed event",
  };
}
