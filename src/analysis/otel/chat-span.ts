/**
 * One provider request as a `chat {model}` span of the OpenTelemetry GenAI semantic conventions
 * (gen-ai-spans.md: "Inference" spans; the attribute registry's gen_ai.* names), with what only
 * payload-probe knows under `payload_probe.*`. Everything comes from the record; the texts
 * (`--content full`) come from the request's wire body, taken apart by the codec that reads its API.
 */

import type { RequestRecord } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import type { WireApi } from "../../providers/types.js";
import { requestCacheAttributes } from "./cache-attributes.js";
import type { Attributes, PlanOptions, SpanPlan } from "./span-plan.js";

/**
 * `gen_ai.provider.name` by wire API: the conventions' well-known values for the vendors whose APIs
 * we speak (Gemini's API at generativelanguage.googleapis.com is `gcp.gemini`; `gcp.vertex_ai` is Vertex's;
 * Bedrock's Converse `aws.bedrock`).
 */
const PROVIDER_BY_API: Record<WireApi, string> = {
  "openai-completions": "openai",
  "openai-responses": "openai",
  "anthropic-messages": "anthropic",
  "google-generative-ai": "gcp.gemini",
  "bedrock-converse": "aws.bedrock",
};

/** Where the token figures on a span come from, so a dashboard can tell a bill from a guess. */
const USAGE_SOURCE = {
  provider: "provider",
  /** A mock's made-up figures (the record's usage says `estimate`). */
  mock: "mock_estimate",
  /** Our offline count of the request (o200k_base): input only, since records keep no reply tokens. */
  offline: "payload_probe_estimate",
} as const;

/** The conventions' provider name for the API a request spoke. */
export function providerName(api: string): string {
  return PROVIDER_BY_API[api as WireApi] ?? api;
}

function usageAttributes(record: RequestRecord): Attributes {
  const usage = record.usage;
  if (usage) {
    const attributes: Attributes = {
      "payload_probe.usage.source": usage.source === "provider" ? USAGE_SOURCE.provider : USAGE_SOURCE.mock,
    };
    // Our Usage counts cached tokens inside inputTokens, as the conventions ask of gen_ai.usage.input_tokens.
    if (usage.inputTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
    if (usage.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
    if (usage.cachedInputTokens !== undefined)
      attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cachedInputTokens;
    if (usage.cacheWriteTokens !== undefined)
      attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheWriteTokens;
    return attributes;
  }
  if (!record.tokens) return {};
  return { "gen_ai.usage.input_tokens": record.tokens.total, "payload_probe.usage.source": USAGE_SOURCE.offline };
}

/** The record's own measurements: sizes, our token estimate per part, markers, the prefix. */
function measureAttributes(record: RequestRecord, options: PlanOptions): Attributes {
  const attributes: Attributes = {
    "payload_probe.run.id": record.run,
    "payload_probe.probe": record.probe,
    "payload_probe.seq": record.seq,
    "payload_probe.request.kind": record.kind,
    "payload_probe.api": record.api,
    "payload_probe.tools.count": record.tools.length,
    "payload_probe.tools.bytes": record.toolsBytes,
    "payload_probe.system.bytes": record.systemBytes,
    "payload_probe.messages.bytes": record.messagesBytes,
    "payload_probe.body.bytes": record.bodyBytes,
  };
  if (record.tokens) {
    attributes["payload_probe.tokens.encoding"] = record.tokens.encoding;
    attributes["payload_probe.tokens.tools"] = record.tokens.tools;
    attributes["payload_probe.tokens.system"] = record.tokens.system;
    attributes["payload_probe.tokens.messages"] = record.tokens.messages;
    attributes["payload_probe.tokens.total"] = record.tokens.total;
  }
  for (const [name, count] of Object.entries(record.markers)) attributes[`payload_probe.marker.${name}`] = count;
  if (record.prefix) {
    attributes["payload_probe.prefix.shared_bytes"] = record.prefix.sharedBytes;
    if (record.prefix.breakAt) attributes["payload_probe.prefix.break_at"] = record.prefix.breakAt;
    // The detail quotes what changed (a tool name, a system line): content, so only with the texts.
    if (record.prefix.breakDetail && options.content === "full")
      attributes["payload_probe.prefix.break_detail"] = record.prefix.breakDetail;
  }
  if (options.content !== "none") {
    attributes["payload_probe.hash.tools"] = record.hashes.tools;
    attributes["payload_probe.hash.system"] = record.hashes.system;
    attributes["payload_probe.hash.body"] = record.hashes.body;
    // Where the context goes, one attribute per source (capture/context-sources.ts). Source names
    // name the user's tools, servers and instruction files, so `--content none` leaves them out.
    for (const [source, tokens] of Object.entries(record.sources ?? {}))
      attributes[`payload_probe.context.${source}`] = tokens;
  }
  const cost = options.price?.(record);
  if (cost !== undefined) attributes["payload_probe.cost.predicted_usd"] = cost;
  const cache = options.cacheRate?.(record);
  return cache ? { ...attributes, ...requestCacheAttributes(cache) } : attributes;
}

/** How an HTTP exchange went (mock and proxy records only), and the failure class when it failed. */
function exchangeAttributes(record: RequestRecord): { attributes: Attributes; errorType?: string } {
  const attributes: Attributes = {};
  if (record.status !== undefined && record.status !== null) attributes["http.response.status_code"] = record.status;
  if (record.firstByteMs !== undefined && record.firstByteMs !== null)
    attributes["payload_probe.http.first_byte_ms"] = record.firstByteMs;
  if (record.ending) attributes["payload_probe.http.ending"] = record.ending;
  // error.type wants a low-cardinality class (recording-errors.md): the status code, else how it ended.
  let errorType: string | undefined;
  if (typeof record.status === "number" && (record.status < 200 || record.status > 299))
    errorType = String(record.status);
  else if (record.ending && record.ending !== "complete") errorType = record.ending;
  else if (!record.response && record.error) errorType = "unreadable_response";
  if (errorType) attributes["error.type"] = errorType;
  return { attributes, errorType };
}

/** The request's texts as the conventions name them (JSON text, since OTLP attributes hold no nested maps). */
function bodyAttributes(record: RequestRecord, body: string | undefined): Attributes {
  if (body === undefined) return {};
  const d = codecFor(record.api as WireApi).dissect(body);
  return {
    "gen_ai.system_instructions": JSON.stringify(d.systemParts.map((content) => ({ type: "text", content }))),
    "gen_ai.input.messages": JSON.stringify(
      d.messages.map((m) => ({ role: m.role, parts: [{ type: "text", content: m.text }] })),
    ),
    "gen_ai.tool.definitions": JSON.stringify(d.tools.map((t) => JSON.parse(t.json))),
  };
}

/** What the record itself says of the texts: the tools' names and the reply. */
function contentAttributes(record: RequestRecord): Attributes {
  const attributes: Attributes = {};
  attributes["payload_probe.tools.names"] = record.tools;
  if (record.response) {
    const parts: unknown[] = [];
    if (record.response.text) parts.push({ type: "text", content: record.response.text });
    for (const name of record.response.calls) parts.push({ type: "tool_call", name });
    attributes["gen_ai.output.messages"] = JSON.stringify([
      { role: "assistant", parts, finish_reason: finishReason(record) },
    ]);
  }
  return attributes;
}

/** The record keeps whether the model answered with tool calls or text, not the provider's own word for it. */
function finishReason(record: RequestRecord): string {
  return record.response?.kind === "tool_calls" ? "tool_calls" : "stop";
}

/**
 * A request's `gen_ai.conversation.id`: its conversation's id within the run, made unique across runs
 * (the conventions' id identifies one conversation wherever it is stored), or the run's own id for a
 * record that carries no conversation.
 */
export function conversationIdOf(record: Pick<RequestRecord, "run" | "conversation">): string {
  return record.conversation ? `${record.run}/${record.conversation.id}` : record.run;
}

/** When a request's response had been read: its start plus its duration. */
export function recordEndMs(record: RequestRecord): number {
  return Date.parse(record.ts) + record.durationMs;
}

/**
 * The `chat {model}` span of one request; `body` reads its wire body, needed only for `--content
 * full`, when the span is sent.
 */
export function chatSpan(
  record: RequestRecord,
  parent: string | null,
  options: PlanOptions,
  body?: () => string | undefined,
): SpanPlan {
  const exchange = exchangeAttributes(record);
  const attributes: Attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": providerName(record.api),
    "gen_ai.request.model": record.model,
    "gen_ai.conversation.id": conversationIdOf(record),
    ...usageAttributes(record),
    ...(record.response && { "gen_ai.response.finish_reasons": [finishReason(record)] }),
    ...exchange.attributes,
    ...measureAttributes(record, options),
    ...(options.content === "full" && contentAttributes(record)),
  };
  const full = options.content === "full" && body;
  return {
    id: `chat:${record.seq}`,
    parent,
    name: `chat ${record.model}`,
    kind: "client",
    startMs: Date.parse(record.ts),
    endMs: recordEndMs(record),
    attributes,
    ...(full && { lateAttributes: () => bodyAttributes(record, full()) }),
    errorType: exchange.errorType,
  };
}
