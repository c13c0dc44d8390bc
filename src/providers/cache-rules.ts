/**
 * The providers' documented prompt-cache rules, in one place, so every part that says what a provider
 * reads from its cache says it alike: the capture's cache reader (capture/cache-reader.ts), the cost
 * model with the hit rate and write amplification it feeds (analysis/cost/), the report's prefix
 * phrase (analysis/format.ts) and the mock's cache diagnostics (cache-diagnosis.ts). Each rule names
 * the page it comes from.
 */
import type { WireDissection } from "./types.js";

/**
 * OpenAI (chat completions and Responses): caching is automatic for prompts of 1,024 tokens or more,
 * and a hit covers the longest matching prefix in steps of 128 tokens (OpenAI, "Prompt caching",
 * https://developers.openai.com/api/docs/guides/prompt-caching; the cookbook's "Prompt Caching 201",
 * 1.1 Basics: "works automatically for prompts containing 1024 tokens or more, with cache hits
 * occurring in increments of 128 tokens"). A prompt shorter than this is never cached.
 */
const OPENAI_MIN_CACHE_TOKENS = 1024;
/** OpenAI: cache hits grow in steps of this many tokens. */
const OPENAI_CACHE_STEP = 128;
/**
 * OpenAI keeps a prefix for 5 to 10 minutes of inactivity (longer off-peak); the model takes the
 * shorter end, so a gap it predicts as cached is one the provider documents as cached.
 */
export const OPENAI_IDLE_MS = 5 * 60_000;

/**
 * Anthropic: the shortest prefix a breakpoint caches, by model family, newest families first. The
 * prompt caching page ("Cache limitations") could not be read from here; the figures are those
 * gateways' copies of it agree on (orq.ai, nano-gpt, aihubmix: 4,096 for Opus 4.5, Opus 4.6 and
 * Haiku 4.5; 2,048 for the Haiku 3 models) and one article for the newest (512 for Opus 5, 2,048
 * for Opus 4.7, where sources differ on Sonnet 4.6: 2,048 taken). Any other Claude model: 1,024,
 * the documented minimum of Sonnet and Opus 4 and earlier. A user pricing file may name its own.
 */
const ANTHROPIC_MIN_CACHE: [RegExp, number][] = [
  [/(opus|fable|mythos)-5(?![-.]\d)/, 512],
  [/opus-4-[56]|haiku-4-5/, 4096],
  [/opus-4-7|sonnet-4-6|haiku/, 2048],
];

export function anthropicMinCacheTokens(modelId: string): number {
  return ANTHROPIC_MIN_CACHE.find(([pattern]) => pattern.test(modelId))?.[1] ?? 1024;
}

/**
 * Amazon Bedrock's Converse API caches at breakpoints as Anthropic's API does: a `cachePoint` block
 * in `system`, `messages` or `toolConfig.tools` caches the prompt before it, for 5 minutes from its
 * last read unless its `ttl` says `1h` (Bedrock user guide, "Prompt caching for faster model
 * inference", https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html; the SDK's
 * `CachePointBlock {type: "default", ttl?: "5m" | "1h"}`). A checkpoint caches nothing under its
 * model's minimum prefix: the page's table gives Claude's models Anthropic's own minimums (1,024 for
 * Claude 3.7 Sonnet, 2,048 for Claude 3.5 Haiku, as anthropicMinCacheTokens has them; Bedrock's ids
 * name the same families) and 1,000 to Amazon Nova Micro, Lite and Pro. The usage reports reads and
 * writes apart from `inputTokens` (`cacheReadInputTokens`, `cacheWriteInputTokens`), as Anthropic's.
 */
export function breakpointCache(api: string): boolean {
  return api === "anthropic-messages" || api === "bedrock-converse";
}

/** The shortest prefix a breakpoint caches, for a model of Anthropic's API or of Bedrock's Converse (above). */
export function breakpointMinCacheTokens(modelId: string): number {
  return /(^|\.)amazon\.nova-/.test(modelId) ? 1000 : anthropicMinCacheTokens(modelId);
}

/**
 * Gemini's implicit cache, on by default for Gemini 2.5 and newer (Gemini API, "Context caching" →
 * "Implicit caching", https://ai.google.dev/gemini-api/docs/caching, the page of 2026-10-23): a request whose prompt reaches the model's minimum
 * and shares its start with a recent request is billed those tokens at the cached-token price
 * (the price table's `cache_read_mtok`, a tenth of the input price for 2.5 Flash); there is no write
 * premium. The minimums by model, newest first, are that page's table: 4,096 for Gemini 3.1 Pro and
 * the 3.5 to 3.8 Flash and 4 models, 2,048 for 2.5 Flash and 2.5 Pro; the older page of 2026-05-07
 * gave 1,024 for Gemini 3 Flash Preview and 4,096 for 3 Pro Preview. Any other model: 2,048. Google
 * documents neither a step nor a lifetime for implicit hits, so a hit covers the whole shared prefix
 * and lives as long as OpenAI's shorter end (OPENAI_IDLE_MS): both are assumptions, named here.
 * An explicit cache (`cachedContent: "cachedContents/…"`) holds tokens outside the request body,
 * which the capture cannot count: its reads are seen only in the reported `cachedContentTokenCount`.
 */
const GEMINI_MIN_CACHE: [RegExp, number][] = [
  [/gemini-(3\.[1-9]|[4-9])|gemini-3-pro/, 4096],
  [/gemini-3-flash/, 1024],
];

export function geminiMinCacheTokens(modelId: string): number {
  return GEMINI_MIN_CACHE.find(([pattern]) => pattern.test(modelId))?.[1] ?? 2048;
}

/** The tokens an OpenAI hit covers when `shared` prompt tokens match a cached prompt. */
export function openaiCachedTokens(shared: number): number {
  if (shared < OPENAI_MIN_CACHE_TOKENS) return 0;
  return Math.floor(shared / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP;
}

/**
 * What a provider with an automatic prefix cache reads of `shared` prompt tokens matching a cached
 * prompt: OpenAI from its minimum in its steps, Gemini's implicit cache from the model's minimum, the
 * whole shared prefix (no step documented). Anthropic and Bedrock's Converse cache at breakpoints,
 * whose reads the cost model follows: null here.
 */
export function automaticCacheRead(api: string, model: string, shared: number): number | null {
  const minimum = automaticCacheMinimum(api, model);
  if (minimum === null) return null;
  if (api === "google-generative-ai") return shared < minimum ? 0 : shared;
  return openaiCachedTokens(shared);
}

/** The shortest prefix an automatic cache reads (OpenAI, Gemini); null for breakpoints (Anthropic, Bedrock's Converse). */
export function automaticCacheMinimum(api: string, model: string): number | null {
  if (breakpointCache(api)) return null;
  return api === "google-generative-ai" ? geminiMinCacheTokens(model) : OPENAI_MIN_CACHE_TOKENS;
}

/**
 * Anthropic: what changed between two requests among the settings that key the messages' cache but
 * not the tools' and system's: `tool_choice`, the thinking settings, and images added or removed
 * ("Prompt caching" → "What invalidates the cache",
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). Each change in a few words
 * (`tool_choice changed`, `images 0 → 1`); empty when none changed or the API has no such rule.
 */
export function messageSettingsChanges(before: WireDissection, after: WireDissection): string[] {
  if (before.messageCacheSettings === undefined || before.messageCacheSettings === after.messageCacheSettings)
    return [];
  const a = JSON.parse(before.messageCacheSettings) as Record<string, unknown>;
  const b = JSON.parse(after.messageCacheSettings ?? "{}") as Record<string, unknown>;
  const changed = Object.keys(a).filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]));
  return changed.map((key) => (key === "images" ? `images ${a[key]} → ${b[key]}` : `${key} changed`));
}
