/**
 * What a provider said about its prompt cache for one request (Anthropic's `diagnostics`, OpenAI's
 * `prompt_cache_diagnostics`), read from the response body into one shape for both, beside the raw
 * object as it came.
 */
import { type DiagnosedApi, diagnosticsAsked, isDiagnosedApi } from "../providers/cache-diagnosis.js";
import { parseResponseText, type ResponseBody } from "../providers/response-body.js";
import type { WireApi } from "../providers/types.js";
import type { AddedDiagnostics, CacheDiagnostics, CacheVerdict } from "./types.js";

const REASON_PART: Record<string, CacheDiagnostics["part"]> = {
  model_changed: "model",
  tools_changed: "tools",
  system_changed: "system",
  messages_changed: "messages",
  input_changed: "messages",
};

/**
 * The diagnostics of one exchange, or null when the request did not ask (by its own fields or
 * payload-probe's) and the response says nothing. Never throws: an unreadable body reads as no answer.
 */
export function readCacheDiagnostics(
  api: WireApi,
  requestBody: string,
  responseBody: string,
  {
    diagnosticsAdded: added,
    diagnosticsLeft: left,
  }: { diagnosticsAdded?: AddedDiagnostics; diagnosticsLeft?: string } = {},
): CacheDiagnostics | null {
  if (!isDiagnosedApi(api)) return null;
  const asked = added ?? askedBy(api, requestBody);
  const answer = answerIn(api, responseBody);
  if (!asked && answer === undefined && !left) return null;
  const compareWith = asked?.compareWith ?? null;
  // Nothing was asked: the answer's absence is no first turn.
  const base = normalise(api, answer ?? null, compareWith);
  const notAsked = !asked && answer === undefined && { verdict: "unavailable" as const };
  return {
    ...base,
    ...notAsked,
    comparedWith: compareWith,
    ...(added && { added: added.fields }),
    ...(left && { leftAsSent: left }),
    raw: answer ?? null,
  };
}

function askedBy(api: DiagnosedApi, body: string): { compareWith: string | null } | null {
  if (!body.includes('"diagnostics"') && !body.includes('"prompt_cache_options"')) return null;
  try {
    return diagnosticsAsked(api, JSON.parse(body));
  } catch {
    return null;
  }
}

/** The diagnostics object in a JSON or SSE response body: undefined when there is none at all. */
function answerIn(api: DiagnosedApi, body: string): unknown {
  const key = api === "anthropic-messages" ? "diagnostics" : "prompt_cache_diagnostics";
  if (!body.includes(`"${key}"`)) return undefined;
  const holder = api === "anthropic-messages" ? "message" : "response";
  let found: unknown;
  for (const json of jsonObjects(body)) {
    const object = (json[holder] && typeof json[holder] === "object" ? json[holder] : json) as Record<string, unknown>;
    if (key in object) found = object[key];
  }
  return found;
}

/** The one JSON body, or each SSE event's data, read as the codecs read responses (response-body.ts). */
function* jsonObjects(body: string): Iterable<Record<string, unknown>> {
  let parsed: ResponseBody;
  try {
    parsed = parseResponseText(body);
  } catch {
    return;
  }
  const values = parsed.form === "json" ? [parsed.json] : parsed.events.map((event) => jsonOrNull(event.data));
  for (const value of values) if (value && typeof value === "object") yield value as Record<string, unknown>;
}

/** An event that is not JSON (`[DONE]`, a cut line) says nothing about the cache. */
function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

type Normalised = Omit<CacheDiagnostics, "comparedWith" | "added" | "raw">;

function normalise(api: DiagnosedApi, answer: unknown, compareWith: string | null): Normalised {
  const none = { reason: null, part: null, missedTokens: null, reusableTokens: null };
  if (api === "anthropic-messages") {
    if (answer === null || typeof answer !== "object")
      return { source: "anthropic", verdict: compareWith === null ? "first-turn" : "hit", ...none };
    const reason = (answer as { cache_miss_reason?: unknown }).cache_miss_reason;
    if (reason === null || typeof reason !== "object") return { source: "anthropic", verdict: "pending", ...none };
    const { type, cache_missed_input_tokens: missed } = reason as {
      type?: unknown;
      cache_missed_input_tokens?: unknown;
    };
    if (type === "previous_message_not_found") return { source: "anthropic", verdict: "not-found", ...none };
    if (type === "unavailable") return { source: "anthropic", verdict: "unavailable", ...none };
    return { source: "anthropic", ...missOf(String(type), missed, null) };
  }
  const object = (answer ?? {}) as Record<string, unknown>;
  const verdicts: Record<string, CacheVerdict> = {
    cache_hit: "hit",
    comparison_response_not_found: "not-found",
    unavailable: "unavailable",
  };
  if (object.type !== "cache_miss")
    return { source: "openai", verdict: verdicts[String(object.type)] ?? "unavailable", ...none };
  return {
    source: "openai",
    ...missOf(String(object.reason), object.cache_missed_tokens, object.comparison_reusable_tokens),
  };
}

function missOf(reason: string, missed: unknown, reusable: unknown): Omit<Normalised, "source"> {
  return {
    verdict: "miss",
    reason,
    part: REASON_PART[reason] ?? null,
    missedTokens: typeof missed === "number" ? missed : null,
    reusableTokens: typeof reusable === "number" ? reusable : null,
  };
}
