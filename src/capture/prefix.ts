/**
 * Where a request's cacheable prefix stops matching the previous loop request of the run.
 *
 * Providers cache a prompt prefix in one order — tools, then system, then messages — so a request
 * is laid out as that sequence of segments (each tool definition's JSON, each system part, each
 * message's JSON) and compared with the previous one segment by segment. Only the first segment
 * that differs is scanned character by character; everything before it is settled by string
 * equality. Segments are read in place from the dissection rather than copied into arrays, so a
 * diff costs little more than reading the shared text once (scripts/bench-tokenizer.mjs times it).
 */
import type { WireDissection } from "../providers/types.js";
import { isObject, parseObject } from "./chat-request.js";
import { unloadedTools } from "./deferred-tools.js";
import type { TokenMeasure } from "./tokens.js";
import type { CacheSegment, Part, PrefixInfo } from "./types.js";

/** Joins segments in the cache-order text; one line break keeps the text readable when printed. */
const SEPARATOR = "\n";
const SEPARATOR_BYTES = 1;

/** Longest quoted excerpt in a break phrase, so the phrase stays one readable line. */
const EXCERPT_CHARS = 60;

/** The cache-order serialization `sharedBytes` is measured on: the segments joined by `\n`. */
export function cacheOrderText(d: WireDissection): string {
  return segmentTextsFrom(d, 0).join(SEPARATOR);
}

function segmentCount(d: WireDissection): number {
  return d.tools.length + d.systemParts.length + d.messages.length;
}

/** A segment's text as the provider's prefix cache sees it: without breakpoint markers (Anthropic `cache_control`). */
function cachedText(segment: { json: string; prefixJson?: string }): string {
  return segment.prefixJson ?? segment.json;
}

/** The text of the i-th segment in cache order. */
function segmentText(d: WireDissection, i: number): string {
  if (i < d.tools.length) return cachedText(d.tools[i]!);
  const j = i - d.tools.length;
  if (j < d.systemParts.length) return d.systemParts[j]!;
  return cachedText(d.messages[j - d.systemParts.length]!);
}

function segmentKind(d: WireDissection, i: number): Part {
  if (i < d.tools.length) return "tools";
  return i < d.tools.length + d.systemParts.length ? "system" : "messages";
}

/**
 * The i-th segment, or null past the last one; a message names the model that prices its images, a
 * deferred tool no message has loaded says so (it counts no tokens).
 */
function segmentAt(d: WireDissection, i: number): CacheSegment | null {
  if (i >= segmentCount(d)) return null;
  const kind = segmentKind(d, i);
  const text = segmentText(d, i);
  if (kind === "messages") return { kind, text, model: d.model };
  return kind === "tools" && unloadedTools(d).has(i) ? { kind, text, unloaded: true } : { kind, text };
}

function segmentTextsFrom(d: WireDissection, from: number): string[] {
  const texts: string[] = [];
  for (let i = from; i < segmentCount(d); i++) texts.push(segmentText(d, i));
  return texts;
}

/**
 * UTF-8 length of the longest common prefix of two strings, counted in whole characters: a
 * character that differs is not shared, even when its first UTF-8 bytes happen to agree.
 */
export function sharedPrefixBytes(a: string, b: string): number {
  return Buffer.byteLength(a.slice(0, sharedPrefixUnits(a, b)));
}

/** Common prefix length in UTF-16 units, never ending between the two halves of a surrogate pair. */
function sharedPrefixUnits(a: string, b: string): number {
  const end = Math.min(a.length, b.length);
  let i = 0;
  // Equal strides are settled by native string comparison; only the stride that differs is walked.
  const STRIDE = 256;
  while (i + STRIDE <= end && a.slice(i, i + STRIDE) === b.slice(i, i + STRIDE)) i += STRIDE;
  while (i < end && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (
    i > 0 &&
    isHighSurrogate(a.charCodeAt(i - 1)) &&
    (isLowSurrogate(a.charCodeAt(i)) || isLowSurrogate(b.charCodeAt(i)))
  ) {
    i--;
  }
  return i;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export type PrefixBreak = PrefixInfo & { sharedTokens?: number };

/**
 * Locates the prefix breaks of one run, loop request after loop request: one call's `cur` is the
 * next call's `prev`. It keeps the UTF-8 lengths of the last request's leading segments, which
 * spares the next call measuring them again, so in a growing conversation each segment is measured
 * once. Each run owns its locator, so two runs captured or analysed in one process never share it.
 */
export class PrefixLocator {
  /** Dissections are never mutated, so a length kept for a dissection stays true. */
  private measured: MeasuredSegments | null = null;

  /**
   * Compare a request with the previous loop request of its run. Appending messages is how a
   * conversation grows, so it is no break: `breakAt` is null when everything of `prev` is still
   * the start of `cur`. With a token counter, `sharedTokens` is the common token prefix of the two
   * requests in the token serialization of `tokens.ts`.
   */
  locate(prev: WireDissection | null, cur: WireDissection, counter?: TokenMeasure, limit?: ReadLimit): PrefixBreak {
    if (prev === null) {
      return { sharedBytes: 0, breakAt: null, breakDetail: null, ...(counter ? { sharedTokens: 0 } : {}) };
    }
    const firstDiff = firstDifferentSegment(prev, cur);
    if (limit && limit.segments < firstDiff) return this.limited(prev, cur, limit, counter);
    const onlyAppended =
      firstDiff === segmentCount(prev) &&
      prev.tools.length === cur.tools.length &&
      prev.systemParts.length === cur.systemParts.length;
    const found = onlyAppended
      ? null
      : (toolsBreak(prev.tools, cur.tools) ??
        systemBreak(prev.systemParts, cur.systemParts) ??
        messagesBreak(prev.messages, cur.messages));
    const known = this.measured?.d === prev ? this.measured.lengths : [];
    const shared = sharedSegmentBytes(prev, cur, firstDiff, known);
    this.measured = { d: cur, lengths: shared.lengths };
    const info: PrefixBreak = {
      sharedBytes: shared.bytes,
      breakAt: found?.at ?? null,
      breakDetail: found?.detail ?? null,
    };
    if (counter) info.sharedTokens = sharedSegmentTokens(prev, cur, firstDiff, counter);
    return info;
  }

  /** Only the first `limit.segments` segments can be read, though more are the same: a break there. */
  private limited(prev: WireDissection, cur: WireDissection, limit: ReadLimit, counter?: TokenMeasure): PrefixBreak {
    const k = limit.segments;
    const known = this.measured?.d === prev ? this.measured.lengths : [];
    const lengths: number[] = [];
    for (let i = 0; i < k; i++) lengths.push(known[i] ?? Buffer.byteLength(segmentText(prev, i)));
    this.measured = { d: cur, lengths };
    const bytes = lengths.reduce((a, b) => a + b, 0) + Math.max(k - 1, 0) * SEPARATOR_BYTES;
    const info: PrefixBreak = { sharedBytes: bytes, breakAt: limit.at, breakDetail: limit.detail };
    if (counter) {
      let tokens = 0;
      for (let i = 0; i < k; i++) tokens += counter.segmentTokens(segmentAt(prev, i)!);
      info.sharedTokens = tokens;
    }
    return info;
  }
}

/** A cap on what can be read although more is the same: the segments readable, and why no more. */
export interface ReadLimit {
  segments: number;
  at: Part;
  detail: string;
}

/** How many leading segments two requests share (string equality of their prefix texts). */
export function sharedSegments(a: WireDissection, b: WireDissection): number {
  return firstDifferentSegment(a, b);
}

/** Segments of a request's tools and system text: the cache levels before its messages. */
export function headSegments(d: WireDissection): number {
  return d.tools.length + d.systemParts.length;
}

/** One comparison on its own, outside a run (nothing is kept for a next call). */
export function locatePrefixBreak(
  prev: WireDissection | null,
  cur: WireDissection,
  counter?: TokenMeasure,
): PrefixBreak {
  return new PrefixLocator().locate(prev, cur, counter);
}

function firstDifferentSegment(a: WireDissection, b: WireDissection): number {
  const end = Math.min(segmentCount(a), segmentCount(b));
  let k = 0;
  while (k < end && segmentText(a, k) === segmentText(b, k)) k++;
  return k;
}

/** UTF-8 lengths of a request's first segments (those it shared with the request before it). */
interface MeasuredSegments {
  d: WireDissection;
  lengths: number[];
}

/**
 * Bytes of the cache-order text `a` and `b` share, given that their first `k` segments are equal;
 * `known` holds lengths of `a`'s segments already measured. Returns the lengths of those k too.
 */
function sharedSegmentBytes(
  a: WireDissection,
  b: WireDissection,
  k: number,
  known: number[],
): { bytes: number; lengths: number[] } {
  const lengths: number[] = [];
  let bytes = 0;
  for (let i = 0; i < k; i++) {
    const length = known[i] ?? Buffer.byteLength(segmentText(a, i));
    lengths.push(length);
    bytes += length;
  }
  bytes += Math.max(k - 1, 0) * SEPARATOR_BYTES;
  // One text ends where the other goes on: the shorter one is shared whole.
  if (k === segmentCount(a) || k === segmentCount(b)) return { bytes, lengths };
  if (k > 0) bytes += SEPARATOR_BYTES;
  const x = segmentText(a, k);
  const y = segmentText(b, k);
  const units = sharedPrefixUnits(x, y);
  if (units < x.length && units < y.length) return { bytes: bytes + Buffer.byteLength(x.slice(0, units)), lengths };
  // One segment is a prefix of the other, so the match runs on into the segments after it.
  const rest = sharedPrefixBytes(segmentTextsFrom(a, k).join(SEPARATOR), segmentTextsFrom(b, k).join(SEPARATOR));
  return { bytes: bytes + rest, lengths };
}

function sharedSegmentTokens(a: WireDissection, b: WireDissection, k: number, counter: TokenMeasure): number {
  let tokens = 0;
  for (let i = 0; i < k; i++) tokens += counter.segmentTokens(segmentAt(a, i)!);
  // Past the last shared segment the two token sequences part inside one framed segment (or the
  // reply opener that ends a request), so comparing those two token runs finishes the count. Those
  // runs hold a medium's base64 as text; a message counts its media by their rule, so the share
  // read of it is no more than the message itself.
  const [x, y] = [segmentAt(a, k), segmentAt(b, k)];
  const partial = counter.sharedFramedTokens(x, y);
  return tokens + (x === null ? partial : Math.min(partial, counter.segmentTokens(x)));
}

interface Break {
  at: Part;
  detail: string;
}

function toolsBreak(prev: WireDissection["tools"], cur: WireDissection["tools"]): Break | null {
  const end = Math.min(prev.length, cur.length);
  let i = 0;
  while (i < end && cachedText(prev[i]!) === cachedText(cur[i]!)) i++;
  if (i === prev.length && i === cur.length) return null;
  const at = "tools";
  if (i === cur.length) return { at, detail: `tools[${i}] removed: ${namesFrom(prev, i)}` };
  if (i === prev.length) return { at, detail: `tools[${i}] added: ${namesFrom(cur, i)}` };
  const p = prev[i]!;
  const c = cur[i]!;
  if (p.name === c.name)
    return { at, detail: `tools[${i}] changed: ${c.name} (${changedToolKeys(cachedText(p), cachedText(c))})` };
  const curIndexOfP = indexOfName(cur, p.name, i + 1);
  const prevIndexOfC = indexOfName(prev, c.name, i + 1);
  if (prevIndexOfC < 0 && curIndexOfP < 0) return { at, detail: `tools[${i}] replaced: ${p.name} by ${c.name}` };
  if (prevIndexOfC < 0) return { at, detail: `tools[${i}] added: ${c.name}` };
  if (curIndexOfP < 0) return { at, detail: `tools[${i}] removed: ${p.name}` };
  // Both tools are still there, so the order changed. Name the one whose single move explains it.
  const prevNames = prev.map((t) => t.name);
  const curNames = cur.map((t) => t.name);
  const movedBack = moveName(prevNames, i, curIndexOfP);
  if (sameNames(movedBack, curNames) && !sameNames(moveName(prevNames, prevIndexOfC, i), curNames)) {
    return { at, detail: `tools reordered: ${p.name} moved from ${i} to ${curIndexOfP}` };
  }
  return { at, detail: `tools reordered: ${c.name} moved from ${prevIndexOfC} to ${i}` };
}

/** The first name from `from` on, and how many more follow it. */
function namesFrom(tools: WireDissection["tools"], from: number): string {
  const more = tools.length - from - 1;
  return more > 0 ? `${tools[from]!.name} (+${more} more)` : tools[from]!.name;
}

function indexOfName(tools: WireDissection["tools"], name: string, from: number): number {
  for (let j = from; j < tools.length; j++) if (tools[j]!.name === name) return j;
  return -1;
}

function moveName(names: string[], from: number, to: number): string[] {
  const moved = names.slice();
  const [name] = moved.splice(from, 1);
  moved.splice(to, 0, name!);
  return moved;
}

function sameNames(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

/**
 * Which top-level keys of a tool definition differ. The chat-completions shape wraps the
 * definition in `{type, function}`; its inner keys (`description`, `parameters`) are the ones
 * worth naming, so the wrapper is looked through.
 */
export function changedToolKeys(prevJson: string, curJson: string): string {
  const p = parseObject(prevJson);
  const c = parseObject(curJson);
  if (!p || !c) return "definition text";
  const a = definitionEntries(p);
  const b = definitionEntries(c);
  const keys = [...new Set([...b.keys(), ...a.keys()])];
  const changed = keys.filter((key) => JSON.stringify(a.get(key)) !== JSON.stringify(b.get(key)));
  if (changed.length > 0) return changed.join(", ");
  return sameNames([...a.keys()], [...b.keys()]) ? "formatting" : "key order";
}

function definitionEntries(definition: Record<string, unknown>): Map<string, unknown> {
  const inner = definition.function;
  if (definition.type !== "function" || !isObject(inner)) return new Map(Object.entries(definition));
  const entries = Object.entries(definition).filter(([key]) => key !== "function");
  return new Map([...entries, ...Object.entries(inner)]);
}

function systemBreak(prev: string[], cur: string[]): Break | null {
  const end = Math.min(prev.length, cur.length);
  let k = 0;
  while (k < end && prev[k] === cur[k]) k++;
  if (k === prev.length && k === cur.length) return null;
  const at = "system";
  if (k === cur.length) return { at, detail: `system[${k}] removed: ${excerpt(firstLine(prev[k]!))}` };
  if (k === prev.length) return { at, detail: `system[${k}] added: ${excerpt(firstLine(cur[k]!))}` };
  return { at, detail: `system[${k}] ${lineChange(prev[k]!, cur[k]!)}` };
}

/**
 * `line n added|removed|changed: "…"` for the first line (1-based) where two texts differ. Only
 * the lines around the first differing character are cut out; a long prompt is never split whole.
 */
function lineChange(prevText: string, curText: string): string {
  const diff = sharedPrefixUnits(prevText, curText);
  const start = diff === 0 ? 0 : prevText.lastIndexOf("\n", diff - 1) + 1;
  const n = lineNumberAt(prevText, start);
  const p = lineAt(prevText, start);
  const c = lineAt(curText, start);
  if (p.text === c.text) {
    // One text stops at the end of this line and the other goes on: the line after it differs.
    if (p.next < 0) return `line ${n + 1} added: ${excerpt(lineAt(curText, c.next).text)}`;
    return `line ${n + 1} removed: ${excerpt(lineAt(prevText, p.next).text)}`;
  }
  // A line slipped in or dropped out when the text right after it still lines up.
  if (c.next >= 0 && lineAt(curText, c.next).text === p.text) return `line ${n} added: ${excerpt(c.text)}`;
  if (p.next >= 0 && lineAt(prevText, p.next).text === c.text) return `line ${n} removed: ${excerpt(p.text)}`;
  return `line ${n} changed: ${excerpt(c.text)}`;
}

interface Line {
  text: string;
  /** Where the following line starts, or -1 when this is the last line. */
  next: number;
}

function lineAt(text: string, start: number): Line {
  const end = text.indexOf("\n", start);
  return end < 0 ? { text: text.slice(start), next: -1 } : { text: text.slice(start, end), next: end + 1 };
}

/** 1-based number of the line that starts at `start`. */
function lineNumberAt(text: string, start: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < start; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function messagesBreak(prev: WireDissection["messages"], cur: WireDissection["messages"]): Break | null {
  const end = Math.min(prev.length, cur.length);
  let j = 0;
  while (j < end && cachedText(prev[j]!) === cachedText(cur[j]!)) j++;
  // Every earlier message is still in place: the conversation only grew.
  if (j === prev.length) return null;
  const at = "messages";
  const p = prev[j]!;
  if (j === cur.length) {
    const more = prev.length - j - 1;
    return { at, detail: `messages[${j}] removed: ${p.role}${more > 0 ? ` (+${more} more)` : ""}` };
  }
  const c = cur[j]!;
  if (p.role !== c.role) return { at, detail: `messages[${j}] replaced: ${p.role} by ${c.role}` };
  const from = sharedPrefixUnits(cachedText(p), cachedText(c));
  const quoted = excerpt(textFrom(cachedText(c), from));
  return { at, detail: `messages[${j}] edited (${c.role}) at char ${from}: ${quoted}` };
}

/**
 * What a message's JSON says from `from` on, as text: inside a string literal, the rest of that
 * string decoded (an escape cut at `from` is taken whole), so an excerpt is quoted once, not JSON
 * inside JSON; between values, the JSON as it is.
 */
function textFrom(json: string, from: number): string {
  let inString = false;
  let escapeAt = -1;
  // How many characters follow an escape's backslash: `\uXXXX` five, any other one.
  const escapeLength = (at: number) => (json[at + 1] === "u" ? 5 : 1);
  for (let i = 0; i < from; i++) {
    if (escapeAt >= 0 && i - escapeAt <= escapeLength(escapeAt)) continue;
    escapeAt = -1;
    const ch = json[i];
    if (inString && ch === "\\") escapeAt = i;
    else if (ch === '"') inString = !inString;
  }
  if (!inString) return json.slice(from);
  const start = escapeAt >= 0 && from - escapeAt <= escapeLength(escapeAt) ? escapeAt : from;
  let end = start;
  while (end < json.length && json[end] !== '"') end += json[end] === "\\" ? 2 : 1;
  try {
    return JSON.parse(`"${json.slice(start, end)}"`) as string;
  } catch {
    return json.slice(from);
  }
}

function firstLine(text: string): string {
  const end = text.indexOf("\n");
  return end < 0 ? text : text.slice(0, end);
}

/** A short quoted piece of text; JSON quoting keeps control characters out of the phrase. */
function excerpt(text: string): string {
  if (text.length <= EXCERPT_CHARS) return JSON.stringify(text);
  const cut = isHighSurrogate(text.charCodeAt(EXCERPT_CHARS - 1)) ? EXCERPT_CHARS - 1 : EXCERPT_CHARS;
  return JSON.stringify(`${text.slice(0, cut)}…`);
}
