/**
 * `show <run> <seq>` output: a decoded request as text to read — a heading per segment with the
 * tokens and bytes it adds, then its content — or as JSON. The line where the kept cache prefix ends
 * is drawn between the two segments it falls between. Every line is made printable by the LineWriter;
 * names that should stay on their line are made printable here, line breaks and all.
 */

import { requestFailure } from "../../capture/request-failure.js";
import { printable } from "../../text/terminal-text.js";
import { automaticReadNote, compactRoles, kindLabel, prefixSummary } from "../format.js";
import { hangingIndent, type LineWriter } from "../table/output.js";
import { providerTokensText, tokenGap } from "../token-gap.js";
import type { DecodedReply } from "./show-reply.js";
import type { DecodedRequest, DecodedSegment } from "./show-request.js";

export type ShowPart = "tools" | "system" | "messages" | "body" | "reply";
export const SHOW_PARTS: ShowPart[] = ["tools", "system", "messages", "body", "reply"];

const PART_TITLES: Record<DecodedSegment["part"], string> = {
  tools: "tools",
  system: "system prompt",
  messages: "messages",
};

function headline(r: DecodedRequest): string[] {
  const rec = r.record;
  const gap = tokenGap(rec);
  const tokens = rec.tokens
    ? `${rec.tokens.total} tokens (ours, ${rec.tokens.encoding})${gap ? ` · ${providerTokensText(gap)}` : ""}`
    : "tokens not counted";
  const failure = requestFailure(rec);
  return [
    `${r.run} · request ${rec.seq} · ${kindLabel(rec)} · ${rec.api} ${printable(rec.model)}`,
    ...(failure === null ? [] : [`FAILED: ${printable(failure)} (no cache read or written, billed nothing)`]),
    `${tokens} · ${rec.bodyBytes} B body · roles ${compactRoles(rec.roles)}`,
    `cache prefix: ${prefixSummary(rec)}${automaticReadNote(rec)}`,
    ...(r.cachedContent === null ? [] : [`explicit cache: ${printable(r.cachedContent)}`]),
    ...(r.settings === null ? [] : [`generationConfig: ${printable(r.settings)}`]),
  ];
}

/** The request's tokens by source (counted at capture), largest first; none for a record without them. */
function sourceLines(rec: DecodedRequest["record"]): string[] {
  if (!rec.sources || !rec.tokens) return [];
  const total = rec.tokens.total;
  const entries = Object.entries(rec.sources).sort((a, b) => b[1] - a[1]);
  const width = Math.max(...entries.map(([source]) => printable(source).length));
  return [
    "",
    `══ where the tokens come from (${entries.length} sources · ${total} tok) ══`,
    ...entries.map(
      ([source, tokens]) =>
        `${printable(source).padEnd(width)}  ${String(tokens).padStart(7)} tok  ${((tokens / total) * 100).toFixed(1).padStart(5)}%`,
    ),
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
  reply: DecodedReply,
  out: LineWriter,
  part: ShowPart | null,
  width: number | null = null,
): Promise<void> {
  const line = (text: string) => out.wrappedLine(text, width, hangingIndent, true);
  for (const text of headline(r)) await line(text);
  if (part === null) for (const text of sourceLines(r.record)) await line(text);
  if (part === "reply") return writeReply(reply, out, line);
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
  if (part === null) return writeReply(reply, out, line);
  await out.flush();
}

async function writeReply(reply: DecodedReply, out: LineWriter, line: (text: string) => Promise<void>) {
  await out.line("");
  for (const text of replyLines(reply)) await line(text);
  await out.flush();
}

/** The same as data: parsed tool definitions and message JSON, so `jq` reaches any field. */
export function showJson(r: DecodedRequest, reply: DecodedReply, part: ShowPart | null): unknown {
  const rec = r.record;
  const head = {
    run: r.run,
    seq: rec.seq,
    kind: rec.kind,
    api: rec.api,
    model: rec.model,
    tokens: rec.tokens,
    sources: rec.sources ?? null,
    usage: rec.usage,
    ...(tokenGap(rec) && { tokenGap: tokenGap(rec) }),
    ...(requestFailure(rec) !== null && { failure: requestFailure(rec) }),
    prefix: rec.prefix,
    prefixEndsBefore: r.keptUntil === null ? null : (r.segments[r.keptUntil]?.segment ?? "end"),
    ...(r.settings !== null && { generationConfig: JSON.parse(r.settings) as unknown }),
    ...(r.cachedContent !== null && { cachedContent: r.cachedContent }),
  };
  if (part === "body") return { ...head, body: JSON.parse(r.body) };
  if (part === "reply") return { ...head, reply: replyJson(reply) };
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
  return { ...head, overhead: r.overhead, segments, ...(part === null && { reply: replyJson(reply) }) };
}

/** How the reply came: `HTTP 200, complete · first byte 120 ms · 2.3 s` (no HTTP for a run made in process). */
function arrivalLine(r: DecodedReply): string {
  const http = r.status === undefined ? "in process" : r.status === null ? "no HTTP status" : `HTTP ${r.status}`;
  const ending = r.ending === undefined ? "" : `, ${r.ending}`;
  const first = r.firstByteMs === null ? "" : ` · first byte ${r.firstByteMs} ms`;
  return `${http}${ending}${first} · took ${r.durationMs} ms`;
}

/** The usage as a small table: whose figures, the rows the provider's and ours share, the raw fields as sent. */
export interface UsageTable {
  whose: string;
  /** Name, the reported figure, ours; "—" where there is none. */
  rows: [string, string, string][];
  /** The usage object as the response sent it; null when none was reported. */
  raw: string | null;
}

export function usageTable(r: DecodedReply): UsageTable {
  const u = r.usage;
  const cell = (n: number | undefined | null) => (n === undefined || n === null ? "—" : String(n));
  return {
    whose: u === null ? "none reported" : u.source === "provider" ? "the provider's" : "a mock's estimate",
    rows: [
      ["prompt tokens", cell(u?.inputTokens), cell(r.ourPromptTokens)],
      ["read from cache", cell(u?.cachedInputTokens), "—"],
      ["written to cache", cell(u?.cacheWriteTokens), "—"],
      ["output tokens", cell(u?.outputTokens), "—"],
    ],
    raw: u ? printable(JSON.stringify(u.raw)) : null,
  };
}

function usageLines(r: DecodedReply): string[] {
  const table = usageTable(r);
  const lines = [
    `── usage · reported: ${table.whose} · ours: our token count`,
    `${"".padEnd(18)}${"reported".padStart(10)}${"ours".padStart(10)}`,
  ];
  for (const [name, reported, ours] of table.rows)
    lines.push(`${name.padEnd(18)}${reported.padStart(10)}${ours.padStart(10)}`);
  if (table.raw !== null) lines.push(`as sent: ${table.raw}`);
  return lines;
}

/** Each tool call's arguments pretty-printed when they are JSON, as they came when not. */
function callArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The reply as lines to read: how it came, why it stopped, its text, thinking, tool calls and usage. */
function replyLines(r: DecodedReply): string[] {
  return [...replyBodyLines(r), ...usageLines(r)];
}

/** The reply's lines up to its usage (the view page draws the usage as a table of its own). */
export function replyBodyLines(r: DecodedReply): string[] {
  const lines = [`══ reply (${arrivalLine(r)}) ══`];
  if (r.error) lines.push(`error: ${r.error}`);
  if (!r.stored) return [...lines, "no response body stored for this request"];
  if (r.unreadable) lines.push(`the body could not be read as a reply: ${r.unreadable}`);
  const thinking = r.facts.thinkingChars > 0 ? `${r.facts.thinkingChars} chars` : "none";
  const hidden = r.facts.hiddenThinking > 0 ? ` (+${r.facts.hiddenThinking} block(s) withheld)` : "";
  lines.push(`stop reason: ${r.facts.stopReason ?? "none sent"} · thinking: ${thinking}${hidden}`);
  if (r.text !== "") lines.push(`── text · ${r.text.length} chars`, r.text);
  for (const call of r.toolCalls)
    lines.push(`── tool call ${call.name}${call.id ? ` (${call.id})` : ""}`, callArguments(call.arguments));
  return lines;
}

/** The reply as data. */
function replyJson(r: DecodedReply): unknown {
  const { facts, toolCalls, ...rest } = r;
  return { ...rest, ...facts, toolCalls: toolCalls.map((c) => ({ ...c, arguments: callArguments(c.arguments) })) };
}
