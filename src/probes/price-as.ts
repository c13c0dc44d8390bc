import type { WireApi } from "../providers/types.js";
import type { Probe } from "./types.js";

/**
 * The real model a probe's scripted model is priced as when the probe names none: one each API's
 * agents commonly send, so every probe shows dollars with no flag.
 */
const DEFAULT_PRICE_AS: Record<WireApi, string> = {
  "openai-completions": "gpt-4.1",
  "openai-responses": "gpt-4.1",
  "anthropic-messages": "claude-sonnet-4-5",
  "google-generative-ai": "gemini-2.5-flash",
};

/** The model a probe's requests are priced as: its `model.priceAs`, else its API's default. */
function priceAsOf(model: Probe["model"]): string {
  return model.priceAs ?? DEFAULT_PRICE_AS[model.api];
}

/**
 * For a record of a probe's run: the model to price it as, when it was sent by that probe's scripted
 * model (same API, same id, with or without its `provider/` part); undefined for anything else, so
 * a proxied run that happens to share a probe's name keeps its own model.
 */
export function probePriceAs(probe: Probe): (record: { api: string; model: string }) => string | undefined {
  const bare = probe.model.id.slice(probe.model.id.lastIndexOf("/") + 1);
  const as = priceAsOf(probe.model);
  return (record) =>
    record.api === probe.model.api && (record.model === probe.model.id || record.model === bare) ? as : undefined;
}
