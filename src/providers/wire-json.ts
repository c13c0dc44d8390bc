/** Small readers shared by the codecs: the parts of a wire body every API spells alike. */
import type { Usage } from "./types.js";

/** What every API's request says about the reply it wants. */
export interface RequestedReply {
  model: string;
  /** `stream` is false when absent in all three APIs. */
  stream: boolean;
}

export function requestedReply(body: string): RequestedReply {
  const parsed = JSON.parse(body) as { model?: unknown; stream?: unknown };
  return { model: typeof parsed.model === "string" ? parsed.model : "scripted", stream: parsed.stream === true };
}

/** The plain text of a content value: a string, or the `text` of each part joined by line breaks. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && "text" in part ? String((part as { text: unknown }).text) : "",
      )
      .join("\n");
  }
  return "";
}

/** Tool-call arguments as an object, for APIs that carry them parsed; text that is no JSON object reads as `{}`. */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `{ schemaAnswer: true }` when `format` asks for a JSON-schema-shaped answer (`{"type":"json_schema",…}`). */
export function schemaAnswerOf(format: unknown): { schemaAnswer?: true } {
  return asObject(format).type === "json_schema" ? { schemaAnswer: true } : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A count, or undefined when the provider sent none (or null). */
export function count(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

/**
 * Both OpenAI APIs count cached prompt tokens inside the input count, under `<input key>_details.cached_tokens`
 * (chat completions: `prompt_tokens`; Responses: `input_tokens`).
 */
export function openaiUsage(raw: Record<string, unknown>, keys: { input: string; output: string }): Usage {
  return {
    source: "provider",
    inputTokens: count(raw[keys.input]),
    outputTokens: count(raw[keys.output]),
    cachedInputTokens: count(asObject(raw[`${keys.input}_details`]).cached_tokens),
    raw,
  };
}
