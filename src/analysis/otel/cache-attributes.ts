/**
 * The prompt cache's figures as span attributes (cost/cache-rates.ts). The GenAI conventions name the
 * tokens read from and written to a cache but no rate, so these are payload-probe's own, namespaced:
 * each chat span carries its request's figures, the agent span the run's rates summed from them.
 */
import type { RequestCacheRate } from "../cost/cache-rates.js";
import type { Attributes } from "./span-plan.js";

const KEYS = {
  input: "payload_probe.cache.input_tokens",
  read: "payload_probe.cache.read_tokens",
  written: "payload_probe.cache.written_tokens",
  unread: "payload_probe.cache.unread_tokens",
  hitRate: "payload_probe.cache.hit_rate",
  writeAmplification: "payload_probe.cache.write_amplification",
  basis: "payload_probe.cache.basis",
} as const;

/** One request's figures, and whose they are (`provider` usage or our cache `model`). */
export function requestCacheAttributes(rate: RequestCacheRate): Attributes {
  return {
    [KEYS.input]: rate.input,
    [KEYS.read]: rate.read,
    [KEYS.written]: rate.written,
    [KEYS.unread]: rate.unread,
    ...(rate.hitRate === null ? {} : { [KEYS.hitRate]: rate.hitRate }),
    [KEYS.basis]: rate.basis,
  };
}

/** The run's hit rate and write amplification from its chat spans' figures (none when no span has them). */
export function runCacheAttributes(chats: Attributes[]): Attributes {
  const withCache = chats.filter((a) => typeof a[KEYS.input] === "number");
  if (withCache.length === 0) return {};
  const sum = (key: string) => withCache.reduce((total, a) => total + (a[key] as number), 0);
  const [input, read, written, unread] = [sum(KEYS.input), sum(KEYS.read), sum(KEYS.written), sum(KEYS.unread)];
  const bases = new Set(withCache.map((a) => a[KEYS.basis]));
  return {
    ...(input > 0 ? { [KEYS.hitRate]: read / input } : {}),
    ...(written > 0 ? { [KEYS.writeAmplification]: unread / written } : {}),
    [KEYS.basis]: bases.size > 1 ? "mixed" : String([...bases][0]),
  };
}
