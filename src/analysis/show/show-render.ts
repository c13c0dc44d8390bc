/**
 * `show <run> <seq>` output: a decoded request as text to read — a heading per segment with the
 * tokens and bytes it adds, then its content — or as JSON. The line where the kept cache prefix ends
 * is drawn between the two segments it falls between. Every line is made printable by the LineWriter;
 * names that should stay on their line are made printable here, line breaks and all.
 */

import { printable } from "../../terminal-text.js";
import { compactRoles, prefixSummary } from "../format.js";
import { hangingIndent, type LineWriter } from "../table/output.js";
import type { DecodedRequest, DecodedSegment } from "./show-request.js";

export type ShowPart = "tools" | "system" | "messages" | "body";
export const SHOW_PARTS: ShowPart[] = ["tools", "system", "messages", "body"];

const PART_TITLES: Record<DecodedSegment["part"], string> = {
  tools: "tools",
  system: "system prompt",
  messages: "messages",
};

function headline(r: DecodedRequest): string[] {
  const rec = r.record;
  const tokens = rec.tokens ? `${rec.tokens.total} tokens (${rec.tokens.encoding})` : "tokens not counted";
  return [
    `${r.run} · request ${rec.seq} · ${rec.kind} · ${rec.api} ${printable(rec.model)}`,
    `${tokens} · ${rec.bodyBytes} B body · roles ${compactRoles(rec.roles)}`,
    `cache prefix: ${prefixSummary(rec)}`,
    ...(r.cachedContent === null ? [] : [`explicit cache: ${printable(r.cachedContent)}`]),
    ...(r.settings === null ? [] : [`generationConfig: ${printable(r.settings)}`]),
  ];
}

function segmentHeading(s: DecodedSegment): string {
  const name = s.name ? ` ${printable(s.name)}` : "";
  return `── ${s.segment}${name} · ${s.tokens} tok · ${s.bytes} B`;
}

function breakLine(r: DecodedRequest): string {
  const p = r.record.prefix!;
  const what = p.newConversation
    ? "a new conversation: what follows is its own"
    : p.breakAt === null
      ? "what follows was appended"
      : `breaks in ${p.breakAt}: ${p.breakDetail ?? "changed"}`;
  // Since prefix.from, the request the prefix was read from is named; before it, it was the previous loop request.
  const source = typeof p.from === "number" ? `#${p.from}` : "the previous loop request";
  return `━━ cache prefix ends here (${p.sharedBytes} B shared with ${source}) · ${what} ━━`;
}

function partTotals(segments: DecodedSegment[]): string {
  let tokens = 0;
  let bytes = 0;
  for (const s of segments) {
    tokens += s.tokens;
    bytes += s.bytes;
  }
  return `${segments.length} · ${tokens} tok · ${bytes} B`;
}

/**
 * The request as text: headline, then each asked part with its segments; `body` is the whole wire body.
 * With a width, every line wider than it is broken between words (`--json` and a pipe keep them whole).
 */
export async function writeShow(
  r: DecodedRequest,
  out: LineWriter,
  part: ShowPart | null,
  width: number | null = null,
): Promise<void> {
  const line = (text: string) => out.wrappedLine(text, width, hangingIndent, true);
  for (const text of headline(r)) await line(text);
  if (part === "body") {
    await out.line("");
    await line(JSON.stringify(JSON.parse(r.body), null, 2));
    return out.flush();
  }
  for (const p of ["tools", "system", "messages"] as const) {
    if (part !== null && part !== p) continue;
    const segments = r.segments.filter((s) => s.part === p);
    await out.line("");
    await line(`══ ${PART_TITLES[p]} (${partTotals(segments)}) ══`);
    for (const s of segments) {
      if (r.keptUntil !== null && r.segments.indexOf(s) === r.keptUntil) await line(breakLine(r));
      await line(segmentHeading(s));
      await line(s.text);
    }
  }
  await out.flush();
}

/** The same as data: parsed tool definitions and message JSON, so `jq` reaches any field. */
export function showJson(r: DecodedRequest, part: ShowPart | null): unknown {
  const rec = r.record;
  const head = {
    run: r.run,
    seq: rec.seq,
    kind: rec.kind,
    api: rec.api,
    model: rec.model,
    tokens: rec.tokens,
    usage: rec.usage,
    prefix: rec.prefix,
    prefixEndsBefore: r.keptUntil === null ? null : (r.segments[r.keptUntil]?.segment ?? "end"),
    ...(r.settings !== null && { generationConfig: JSON.parse(r.settings) as unknown }),
    ...(r.cachedContent !== null && { cachedContent: r.cachedContent }),
  };
  if (part === "body") return { ...head, body: JSON.parse(r.body) };
  const segments = r.segments
    .filter((s) => part === null || s.part === part)
    .map((s) => ({
      segment: s.segment,
      part: s.part,
      name: s.name,
      tokens: s.tokens,
      bytes: s.bytes,
      ...(s.part === "system" ? { text: s.text } : { text: s.text, json: JSON.parse(s.json!) }),
    }));
  return { ...head, overhead: r.overhead, segments };
}
