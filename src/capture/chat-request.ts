/**
 * What makes a chat completions body unusable, in the OpenAI API's own error shape
 * (`{"error": {"message", "type": "invalid_request_error", "param", "code"}}`, OpenAI API reference,
 * "Error codes"). The mock answers it with a 400; the capture proxy stores such a body as a side
 * payload with the message, since the capture cannot take it apart.
 */
export interface ChatRequestProblem {
  message: string;
  /** The offending parameter as a path (`messages[2].role`), or null for the body as a whole. */
  param: string | null;
  code: "invalid_json" | "invalid_type" | "missing_required_parameter";
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The JSON text's value when it is an object; null for any other value or text that is not JSON. */
export function parseObject(json: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(json);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const missing = (param: string): ChatRequestProblem => ({
  message: `Missing required parameter: '${param}'.`,
  param,
  code: "missing_required_parameter",
});

export function invalid(param: string | null, expected: string, value: unknown): ChatRequestProblem {
  if (value === undefined && param !== null) return missing(param);
  const message = `Invalid type for '${param ?? "body"}': expected ${expected}, got ${describe(value)}.`;
  return { message, param, code: "invalid_type" };
}

function toolCallsProblem(calls: unknown, at: string): ChatRequestProblem | null {
  if (calls === undefined || calls === null) return null;
  if (!Array.isArray(calls)) return invalid(at, "an array of tool calls", calls);
  for (const [i, call] of calls.entries()) {
    const fn = isObject(call) ? call.function : undefined;
    if (!isObject(call)) return invalid(`${at}[${i}]`, "an object", call);
    if (!isObject(fn)) return invalid(`${at}[${i}].function`, "an object", fn);
    if (typeof fn.name !== "string") return invalid(`${at}[${i}].function.name`, "a string", fn.name);
  }
  return null;
}

function messagesProblem(messages: unknown): ChatRequestProblem | null {
  if (!Array.isArray(messages)) return invalid("messages", "an array of messages", messages);
  for (const [i, message] of messages.entries()) {
    if (!isObject(message)) return invalid(`messages[${i}]`, "an object", message);
    if (typeof message.role !== "string") return invalid(`messages[${i}].role`, "a string", message.role);
    const calls = toolCallsProblem(message.tool_calls, `messages[${i}].tool_calls`);
    if (calls) return calls;
  }
  return null;
}

function toolsProblem(tools: unknown): ChatRequestProblem | null {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools)) return invalid("tools", "an array of tools", tools);
  for (const [i, tool] of tools.entries()) {
    if (!isObject(tool)) return invalid(`tools[${i}]`, "an object", tool);
    if (tool.function === undefined) continue;
    if (!isObject(tool.function)) return invalid(`tools[${i}].function`, "an object", tool.function);
    if (typeof tool.function.name !== "string")
      return invalid(`tools[${i}].function.name`, "a string", tool.function.name);
  }
  return null;
}

/** A body parsed as the JSON object every wire API's request is, or what is wrong with it. */
export function jsonObject(
  body: string,
): { object: Record<string, unknown>; problem?: undefined } | { problem: ChatRequestProblem } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { problem: { message: "The request body is not valid JSON.", param: null, code: "invalid_json" } };
  }
  return isObject(parsed) ? { object: parsed } : { problem: invalid(null, "a JSON object", parsed) };
}

/** The first thing wrong with a chat completions body, or null when the capture can take it apart. */
export function chatRequestProblem(body: string): ChatRequestProblem | null {
  const read = jsonObject(body);
  if (read.problem) return read.problem;
  const parsed = read.object;
  if (parsed.model !== undefined && typeof parsed.model !== "string") return invalid("model", "a string", parsed.model);
  return messagesProblem(parsed.messages) ?? toolsProblem(parsed.tools);
}
