/**
 * One captured request decoded for reading: its record, and its wire body (payloads.jsonl keeps the
 * body as a JSON string inside JSON) taken apart by the request's codec into tool definitions,
 * system parts and messages, each with the tokens it adds (the token ledger) and its bytes.
 */
import { stringify as stringifyYaml } from "yaml";
import type { RequestRecord } from "../../capture/types.js";
import { UserError } from "../../errors.js";
import { codecFor } from "../../providers/codecs.js";
import type { WireDissection } from "../../providers/types.js";
import type { RequestPayload, RunSource } from "../load-run.js";
import { type LedgerSegment, tokenLedger } from "../segments.js";

export interface DecodedSegment extends LedgerSegment {
  part: "tools" | "system" | "messages";
  /** A tool definition as YAML, a system part's text, a message's plain text. */
  text: string;
  /** The exact JSON text of a tool definition or message inside the body; null for a system part. */
  json: string | null;
}

export interface DecodedRequest {
  run: string;
  record: RequestRecord;
  body: string;
  segments: DecodedSegment[];
  /** Tokens no segment owns (the reply opener). */
  overhead: number;
  /**
   * Index of the first segment that is not part of the prefix kept from the previous loop request
   * (segments.length when all of it was kept); null when the request has no previous loop request.
   */
  keptUntil: number | null;
  /** Gemini: the body's `generationConfig` as sent (JSON text) and the explicit cache it reads; null when absent. */
  settings: string | null;
  cachedContent: string | null;
}

/** The record and the wire body of request `seq`; a run without that seq is bad input naming both. */
function findRequest(source: RunSource, seq: number): { record: RequestRecord; payload: RequestPayload } {
  let record: RequestRecord | undefined;
  const seqs: number[] = [];
  for (const r of source.records()) {
    seqs.push(r.seq);
    if (r.seq === seq) {
      record = r;
      break;
    }
  }
  if (!record)
    throw new UserError(
      `run ${source.label} has no request ${seq}: its requests are ${seqs.length > 0 ? `${seqs[0]}–${seqs.at(-1)}` : "none"}`,
    );
  if (!source.hasPayloads)
    throw new UserError(`run ${source.label} kept no wire bodies (payloads.jsonl): request ${seq} cannot be shown`);
  // One row read by its seq: a run from the database is asked for that row alone.
  const payload = source.payload(seq, "request");
  if (payload) return { record, payload };
  throw new UserError(`run ${source.label}: payloads.jsonl has no body for request ${seq}`);
}

export async function decodeRequest(source: RunSource, seq: number): Promise<DecodedRequest> {
  const { record, payload } = findRequest(source, seq);
  if (payload.api === null) throw new UserError(`run ${source.label}: request ${seq} has no wire API a codec reads`);
  const d = codecFor(payload.api).dissect(payload.body, payload.url);
  const ledger = await firstLedger(payload);
  const segments = ledger.segments.map((s, i) => ({ ...s, ...segmentContent(d, i) }));
  return {
    run: source.label,
    record,
    body: payload.body,
    segments,
    overhead: ledger.overhead,
    keptUntil: keptUntil(
      segments.map((s) => s.bytes),
      record.prefix,
    ),
    settings: d.settingsJson ?? null,
    cachedContent: d.cachedContent ?? null,
  };
}

async function firstLedger(payload: RequestPayload) {
  for await (const ledger of tokenLedger([payload])) return ledger;
  throw new Error(`the token ledger skipped request ${payload.seq}`);
}

/** The i-th segment in cache order (tools, then system parts, then messages), as the ledger numbers them. */
function segmentContent(d: WireDissection, i: number): Pick<DecodedSegment, "part" | "text" | "json"> {
  if (i < d.tools.length) {
    const json = d.tools[i]!.json;
    // YAML keeps a multi-line description as its lines, where JSON would show one long string of `\n`s.
    return { part: "tools", text: stringifyYaml(JSON.parse(json), { lineWidth: 0 }).trimEnd(), json };
  }
  const j = i - d.tools.length;
  if (j < d.systemParts.length) return { part: "system", text: d.systemParts[j]!, json: null };
  const m = d.messages[j - d.systemParts.length]!;
  return { part: "messages", text: m.text, json: m.json };
}

/**
 * Where the kept prefix ends. `sharedBytes` is measured on the cache-order text: every segment
 * joined by one `\n` (src/capture/prefix.ts), so segment i starts after the bytes of those before
 * it plus one separator each.
 */
function keptUntil(segmentBytes: number[], prefix: RequestRecord["prefix"]): number | null {
  if (!prefix || (prefix.breakAt === null && prefix.sharedBytes === 0)) return null;
  let start = 0;
  for (let i = 0; i < segmentBytes.length; i++) {
    const end = start + segmentBytes[i]!;
    if (prefix.sharedBytes < end) return i;
    start = end + 1;
  }
  return segmentBytes.length;
}
