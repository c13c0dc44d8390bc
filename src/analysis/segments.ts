/**
 * The token ledger: what each tool definition, system part and message adds to a request.
 *
 * Records carry only part totals; the per-segment counts need the wire bodies (payloads.jsonl),
 * taken apart by the request's codec and counted as the capture counts, so the ledger of a request
 * always sums to the total in its record. The counts come from the token cache, which holds every
 * segment of a run captured on this machine; the tokenizer loads only for a text it lacks.
 */
import { defaultTokenCachePath, TokenCountCache } from "../capture/token-count-cache.js";
import { codecFor } from "../providers/codecs.js";
import type { RequestPayload } from "./load-run.js";

export interface LedgerSegment {
  /** `tools[0]`, `system[1]`, `messages[3]`. */
  segment: string;
  /** The tool's name or the message's role; empty for a system part. */
  name: string;
  tokens: number;
  bytes: number;
}

export interface RequestLedger {
  seq: number;
  kind: RequestPayload["kind"];
  segments: LedgerSegment[];
  /** Tokens no segment owns (the reply opener). */
  overhead: number;
  total: number;
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

export async function* tokenLedger(
  payloads: Iterable<RequestPayload>,
  cache = new TokenCountCache(defaultTokenCachePath()),
): AsyncIterable<RequestLedger> {
  for (const payload of payloads) {
    // A pass-through request no codec reads has no segments to count (and no record either).
    if (payload.api === null) continue;
    const d = codecFor(payload.api).dissect(payload.body);
    const counts = await cache.measure((measure) => measure.countRequestTokens(d));
    const segments: LedgerSegment[] = [
      ...d.tools.map((t, i) => ({
        segment: `tools[${i}]`,
        name: t.name,
        tokens: counts.perTool[i]!,
        bytes: bytes(t.json),
      })),
      ...d.systemParts.map((part, i) => ({
        segment: `system[${i}]`,
        name: "",
        tokens: counts.perSystemPart[i]!,
        bytes: bytes(part),
      })),
      ...d.messages.map((m, i) => ({
        segment: `messages[${i}]`,
        name: m.role,
        tokens: counts.perMessage[i]!,
        bytes: bytes(m.json),
      })),
    ];
    yield { seq: payload.seq, kind: payload.kind, segments, overhead: counts.overhead, total: counts.total };
  }
}
