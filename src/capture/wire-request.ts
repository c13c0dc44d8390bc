/**
 * Which wire API an HTTP request speaks (by its path), whether the capture can take its body apart,
 * and how that API's provider words an error, so the mock answers each client in the shape its SDK reads.
 */
import type { WireApi } from "../providers/types.js";
import { type ChatRequestProblem, chatRequestProblem, invalid, isObject, jsonObject } from "./chat-request.js";

/** The request path each API's clients post to, after the base URL's `/v1`. */
export const API_PATHS: Record<WireApi, string> = {
  "openai-completions": "/chat/completions",
  "anthropic-messages": "/messages",
  "openai-responses": "/responses",
};

/** The wire API a request path belongs to (any prefix before it), or null for any other path. */
export function apiForPath(path: string): WireApi | null {
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

/** The first thing wrong with a body of the given API, or null when the capture can take it apart. */
export function requestProblem(api: WireApi, body: string): ChatRequestProblem | null {
  if (api === "openai-completions") return chatRequestProblem(body);
  const read = jsonObject(body);
  if (read.problem) return read.problem;
  if (read.object.model !== undefined && typeof read.object.model !== "string")
    return invalid("model", "a string", read.object.model);
  return api === "anthropic-messages" ? messagesBodyProblem(read.object) : responsesBodyProblem(read.object);
}

/** Anthropic's error types by HTTP status ("Errors" page of its API reference). */
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  404: "not_found_error",
  500: "api_error",
};

/**
 * An error body as the API's provider sends it: Anthropic `{"type":"error","error":{"type","message"}}`;
 * both OpenAI APIs `{"error":{"message","type","param","code"}}`.
 */
export function errorBody(
  api: WireApi,
  status: number,
  message: string,
  problem?: Pick<ChatRequestProblem, "param" | "code">,
): unknown {
  if (api === "anthropic-messages")
    return { type: "error", error: { type: ANTHROPIC_ERROR_TYPES[status] ?? "api_error", message } };
  const type = status === 400 ? "invalid_request_error" : status === 404 ? "not_found_error" : "server_error";
  return { error: { message, type, param: problem?.param ?? null, code: problem?.code ?? null } };
}

/**
 * Whether a successful event stream reached its API's last event: chat completions end with
 * `data: [DONE]`, Anthropic with `message_stop`, Responses with `response.completed` (or its
 * `failed`/`incomplete` siblings). A stream without it was cut short.
 */
export function streamReachedEnd(api: WireApi, text: string): { ended: boolean; expected: string } {
  const tail = text.slice(-4096);
  if (api === "openai-completions") return { ended: /data: ?\[DONE\]\s*$/.test(tail), expected: "data: [DONE]" };
  if (api === "anthropic-messages")
    return { ended: /event: ?message_stop\s*\n/.test(tail), expected: "a message_stop event" };
  return {
    ended: /event: ?response\.(completed|failed|incomplete)\s*\n/.test(tail),
    expected: "a response.completed event",
  };
}
