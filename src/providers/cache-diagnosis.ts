/**
 * The two providers' prompt-cache diagnostics on the wire: what a request asks for (Anthropic Messages:
 * a `diagnostics` object with `previous_message_id`; OpenAI Responses:
 * `prompt_cache_options.comparison_response_id`), and the answer a provider gives, built here from a
 * comparison of the two requests' bodies so the mock and the scripted model can answer the way the
 * documents describe. The capture reads the answers back (capture/cache-diagnostics.ts).
 */

import { messageSettingsChanges } from "./cache-rules.js";
import type { WireApi, WireDissection } from "./types.js";
import { asObject } from "./wire-json.js";

/** The APIs whose providers answer cache diagnostics. */
export type DiagnosedApi = "anthropic-messages" | "openai-responses";

export const isDiagnosedApi = (api: WireApi | string | null): api is DiagnosedApi =>
  api === "anthropic-messages" || api === "openai-responses";

/**
 * What a parsed request body asks of the diagnostics: null when nothing; else the response id it
 * compares with (null: Anthropic's first turn, which opts in with nothing to compare).
 */
export function diagnosticsAsked(api: DiagnosedApi, body: unknown): { compareWith: string | null } | null {
  const json = asObject(body);
  if (api === "anthropic-messages") {
    if (json.diagnostics === null || typeof json.diagnostics !== "object") return null;
    const id = asObject(json.diagnostics).previous_message_id;
    return { compareWith: typeof id === "string" ? id : null };
  }
  const id = asObject(json.prompt_cache_options).comparison_response_id;
  return typeof id === "string" ? { compareWith: id } : null;
}

/** Where a request first stops extending an earlier one, in the order a prompt is cached; null: it extends it. */
export type Divergence = "model" | "tools" | "system" | "messages" | null;

/**
 * Compared without cache breakpoint markers (`prefixJson`): moving a breakpoint changes no prefix a
 * provider matches (Anthropic, "Prompt caching"), as the prefix locator holds too.
 */
const prefixText = (part: { json: string; prefixJson?: string }) => part.prefixJson ?? part.json;

export function firstDivergence(before: WireDissection, after: WireDissection): Divergence {
  if (before.model !== after.model) return "model";
  if (before.tools.map(prefixText).join(",") !== after.tools.map(prefixText).join(",")) return "tools";
  if (before.systemParts.join("\n") !== after.systemParts.join("\n")) return "system";
  return firstChangedMessage(before, after) === -1 ? null : "messages";
}

/**
 * The first of the earlier request's messages the later one does not keep as it was (-1: all kept).
 * A changed setting that keys the messages' cache (Anthropic's tool_choice, thinking, images) leaves
 * none of them readable, by the same rule the capture's cache reader applies (cache-rules.ts).
 */
function firstChangedMessage(before: WireDissection, after: WireDissection): number {
  if (messageSettingsChanges(before, after).length > 0) return 0;
  return before.messages.findIndex(
    (m, i) => after.messages[i] === undefined || prefixText(m) !== prefixText(after.messages[i]!),
  );
}

/**
 * The comparison's outcome as a provider reports it: a divergence (or none), the earlier response
 * unknown, the comparison not finished, or the first turn (Anthropic's null id).
 */
export type DiagnosisOutcome =
  | { kind: "compared"; divergence: Divergence; missedTokens: number; reusableTokens: number }
  | { kind: "not-found" }
  | { kind: "pending" }
  | { kind: "first-turn" };

/** OpenAI folds the instructions and the input into one reason. */
const OPENAI_REASON = {
  model: "model_changed",
  tools: "tools_changed",
  system: "input_changed",
  messages: "input_changed",
};

/** The response field and its value for an outcome: `diagnostics` (Anthropic) or `prompt_cache_diagnostics` (OpenAI). */
export function diagnosisField(api: DiagnosedApi, outcome: DiagnosisOutcome): [string, unknown] {
  if (api === "anthropic-messages") return ["diagnostics", anthropicDiagnostics(outcome)];
  return ["prompt_cache_diagnostics", openaiDiagnostics(outcome)];
}

function anthropicDiagnostics(outcome: DiagnosisOutcome): unknown {
  if (outcome.kind === "first-turn") return null;
  if (outcome.kind === "pending") return { cache_miss_reason: null };
  if (outcome.kind === "not-found") return { cache_miss_reason: { type: "previous_message_not_found" } };
  if (outcome.divergence === null) return null;
  return {
    cache_miss_reason: { type: `${outcome.divergence}_changed`, cache_missed_input_tokens: outcome.missedTokens },
  };
}

function openaiDiagnostics(outcome: DiagnosisOutcome): unknown {
  // OpenAI answers `unavailable` for a comparison that is not ready yet; it has no first-turn opt-in.
  if (outcome.kind === "pending" || outcome.kind === "first-turn") return { type: "unavailable" };
  if (outcome.kind === "not-found") return { type: "comparison_response_not_found" };
  if (outcome.divergence === null) return { type: "cache_hit" };
  return {
    type: "cache_miss",
    reason: OPENAI_REASON[outcome.divergence],
    cache_missed_tokens: outcome.missedTokens,
    comparison_reusable_tokens: outcome.reusableTokens,
  };
}

/** The texts of a request in cache order, each with the part it belongs to. */
function cacheOrder(d: WireDissection): { part: Exclude<Divergence, null | "model">; text: string }[] {
  return [
    { part: "tools", text: d.tools.map(prefixText).join(",") },
    ...d.systemParts.map((text) => ({ part: "system" as const, text })),
    ...d.messages.map((m) => ({ part: "messages" as const, text: m.json })),
  ];
}

/**
 * The earlier request's tokens from the divergence on (what a matching prefix would have read from the
 * cache), and all of them (its reusable prefix), counted with `count`.
 */
export function missedTokens(
  before: WireDissection,
  after: WireDissection,
  divergence: Divergence,
  count: (text: string) => number,
): { missedTokens: number; reusableTokens: number } {
  const texts = cacheOrder(before);
  const reusableTokens = texts.reduce((sum, t) => sum + count(t.text), 0);
  if (divergence === null) return { missedTokens: 0, reusableTokens };
  let from = divergence === "model" ? 0 : texts.findIndex((t) => t.part === divergence);
  if (divergence === "messages") from += Math.max(0, firstChangedMessage(before, after));
  const missed = texts.slice(Math.max(from, 0)).reduce((sum, t) => sum + count(t.text), 0);
  return { missedTokens: missed, reusableTokens };
}
