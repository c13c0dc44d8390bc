/**
 * Our token count beside the provider's. Ours is one tokenizer (`TokenCounts.encoding`, OpenAI's
 * o200k_base) for every API, so for Claude and Gemini it is an estimate; where a response reported
 * the prompt's tokens (`usage.source` "provider"), the two are shown side by side and a gap over a
 * fifth of the provider's count is flagged: a figure that far off should not be read as the provider's.
 */
import type { RecordSummary } from "../capture/run-index.js";

/** Beyond this share of the provider's count, our count is flagged as far from it. */
export const TOKEN_GAP_FLAG = 0.2;

export interface TokenGap {
  /** Our count of the prompt and the tokenizer that made it. */
  ours: number;
  encoding: string;
  /** The prompt tokens the provider reported, cached ones included. */
  provider: number;
  /** (ours − provider) / provider; null when the provider reported 0. */
  gap: number | null;
  /** The gap is over TOKEN_GAP_FLAG (or the provider reported 0 against our count). */
  flagged: boolean;
}

export function tokenGap(r: Pick<RecordSummary, "tokens" | "usage">): TokenGap | null {
  const provider = r.usage?.source === "provider" ? r.usage.inputTokens : undefined;
  if (!r.tokens || provider === undefined) return null;
  const ours = r.tokens.total;
  const gap = provider > 0 ? (ours - provider) / provider : null;
  const flagged = gap === null ? ours > 0 : Math.abs(gap) > TOKEN_GAP_FLAG;
  return { ours, encoding: r.tokens.encoding, provider, gap, flagged };
}

const signedPercent = (gap: number) => `${gap > 0 ? "+" : ""}${Math.round(gap * 1000) / 10}%`;

/** `provider 20 (ours +44865%, over 20% apart)`, `provider 1301`: what follows our count where it is printed. */
export function providerTokensText(g: TokenGap): string {
  if (!g.flagged) return `provider ${g.provider}`;
  const apart = g.gap === null ? "ours against none" : `ours ${signedPercent(g.gap)}`;
  return `provider ${g.provider} (${apart}, over ${TOKEN_GAP_FLAG * 100}% apart)`;
}
