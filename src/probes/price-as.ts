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
  "bedrock-converse": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
};

/** The model a probe's requests are priced as: its `model.priceAs`, else its API's default. */
function priceAsOf(model: Probe["model"]): string {
  return model.priceAs ?? DEFAULT_PRICE_AS[model.api];
}

/**
 * What a probe run records of its scripted model as its first event (`probe`), so the analysis
 * commands price the run as its probe says from the run alone, wherever the probe file is kept.
 */
export interface ProbeModelEvent {
  api: string;
  /** The scripted model's id, as the requests name it. */
  model: string;
  priceAs: string;
}

export const PROBE_MODEL_EVENT = "probe";

export function probeModelEvent(probe: Probe): ProbeModelEvent {
  return { api: probe.model.api, model: probe.model.id, priceAs: priceAsOf(probe.model) };
}

/** A `probe` event's data as a run recorded it, or null when it is not one (an older run, a hand edit). */
export function readProbeModelEvent(data: Record<string, unknown>): ProbeModelEvent | null {
  const { api, model, priceAs } = data;
  return typeof api === "string" && typeof model === "string" && typeof priceAs === "string"
    ? { api, model, priceAs }
    : null;
}

/**
 * For a record of a probe's run: the model to price it as, when it was sent by that probe's scripted
 * model (same API, same id, with or without its `provider/` part); undefined for anything else, so
 * a proxied run that happens to share a probe's name keeps its own model.
 */
export function probePriceAs(
  probe: Probe | ProbeModelEvent,
): (record: { api: string; model: string }) => string | undefined {
  const { api, model: id, priceAs } = "name" in probe ? probeModelEvent(probe) : probe;
  const bare = id.slice(id.lastIndexOf("/") + 1);
  return (record) => (record.api === api && (record.model === id || record.model === bare) ? priceAs : undefined);
}
