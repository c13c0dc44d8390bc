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

/** Token counts as an API that reports the prompt's cache reads and writes apart from the rest sends them. */
export interface SeparateCacheCounts {
  uncached?: number;
  read?: number;
  written?: number;
  written5m?: number;
  written1h?: number;
  output?: number;
}

/**
 * Usage of an API whose input count is only the prompt outside the cache, its cache reads and
 * writes counted apart (Anthropic's `input_tokens`, Bedrock Converse's `inputTokens`): the whole
 * prompt is the sum of the three.
 */
export function separateCacheUsage(counts: SeparateCacheCounts, raw: Record<string, unknown>): Usage {
  const { uncached, read, written } = counts;
  const anyInput = uncached !== undefined || read !== undefined || written !== undefined;
  return {
    source: "provider",
    inputTokens: anyInput ? (uncached ?? 0) + (read ?? 0) + (written ?? 0) : undefined,
    outputTokens: counts.output,
    cachedInputTokens: read,
    cacheWriteTokens: written,
    cacheWrite5mTokens: counts.written5m,
    cacheWrite1hTokens: counts.written1h,
    raw,
  };
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
