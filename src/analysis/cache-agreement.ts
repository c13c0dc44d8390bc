/**
 * The provider's explanation of a request's prompt cache (its cache diagnostics) held against ours
 * (the prefix locator's break), and whether the two agree.
 */
import type { RecordSummary } from "../capture/run-index.js";
import type { CacheDiagnostics } from "../capture/types.js";

/**
 * `agree`, `disagree`, or `n/a` when there is nothing to hold against the other: the provider gave no
 * comparison (first turn, not found, pending, unavailable), it named the model (our locator compares
 * each model with itself), or we have no prefix for the request.
 */
export type CacheAgreement = "agree" | "disagree" | "n/a";

export function cacheAgreement(record: RecordSummary): CacheAgreement {
  const said = record.cacheDiagnostics;
  const ours = record.prefix;
  // A conversation's first request is compared with nothing of its own; the provider's lineage may differ.
  if (!said || !ours || (ours.from === undefined && record.kind !== "loop") || ours.newConversation) return "n/a";
  if (said.verdict === "hit") return ours.breakAt === null ? "agree" : "disagree";
  if (said.verdict !== "miss" || said.part === null || said.part === "model") return "n/a";
  if (ours.breakAt === null) return "disagree";
  // OpenAI names instructions and input with one reason; our locator tells the system text apart.
  if (said.reason === "input_changed") return ours.breakAt === "tools" ? "disagree" : "agree";
  return ours.breakAt === said.part ? "agree" : "disagree";
}

/** The provider's word in a few words: `hit`, `miss: tools_changed`, `not-found`… */
function providerWord(said: CacheDiagnostics): string {
  return said.verdict === "miss" ? `miss: ${said.reason}` : said.verdict;
}

/** `provider (anthropic): miss: tools_changed, agrees` — empty when the record has no diagnostics. */
export function providerSummary(record: RecordSummary): string {
  const said = record.cacheDiagnostics;
  if (!said) return "";
  const agreement = cacheAgreement(record);
  const verdict = agreement === "n/a" ? "" : agreement === "agree" ? ", agrees" : ", DISAGREES";
  return `provider (${said.source}): ${providerWord(said)}${verdict}`;
}
