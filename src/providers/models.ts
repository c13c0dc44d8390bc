import type { ModelSpec, WireApi } from "./types.js";

/**
 * Models whose wire settings we know. The documented experiments ran on `token-plan/qwen3.8-flash`
 * with `--thinking off`; an unknown model gets pi's defaults for a custom provider.
 */
export interface KnownModel {
  reasoning: boolean;
  contextWindow: number;
  maxTokens: number;
}

const KNOWN: Record<string, KnownModel> = {
  "token-plan/qwen3.8-flash": { reasoning: true, contextWindow: 1_000_000, maxTokens: 131_072 },
};

const DEFAULTS: KnownModel = { reasoning: false, contextWindow: 128_000, maxTokens: 16_384 };

/** A model's reasoning flag and limits as the runtime assumes them (pi's defaults for an unknown one). */
export function modelLimits(ref: string): Readonly<KnownModel> {
  return KNOWN[ref] ?? DEFAULTS;
}

export const DEFAULT_MODEL_REF = "token-plan/qwen3.8-flash";

/** Anthropic clients put `/v1` in the request path, so their base URL has none; OpenAI's includes it. */
function defaultBaseUrl(api: WireApi): string {
  return baseUrlFor(api, "http://127.0.0.1/v1");
}

/**
 * A provider's base URL for an API, from the OpenAI form that `mock` and `proxy` print
 * (`http://host:port/v1`): Anthropic's and Bedrock's drop the `/v1` (the request path carries
 * Anthropic's; Bedrock's paths start at `/model/`); Gemini's
 * names the API version its paths sit under, `/v1beta` (Google's REST reference).
 */
export function baseUrlFor(api: WireApi, v1BaseUrl: string): string {
  const base = v1BaseUrl.replace(/\/$/, "");
  if (api === "anthropic-messages" || api === "bedrock-converse") return base.replace(/\/v1$/, "");
  if (api === "google-generative-ai") return `${base.replace(/\/v1$/, "")}/v1beta`;
  return base;
}

export function resolveModel(ref: string, api: WireApi, baseUrl = defaultBaseUrl(api)): ModelSpec {
  const known = KNOWN[ref] ?? DEFAULTS;
  const slash = ref.indexOf("/");
  return {
    api,
    ref,
    id: slash >= 0 ? ref.slice(slash + 1) : ref,
    baseUrl,
    maxTokens: Math.min(known.maxTokens, known.contextWindow),
    reasoning: known.reasoning,
  };
}
