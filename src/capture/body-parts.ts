/**
 * A request body as parts, so a run stores each message, tool definition and system block once.
 *
 * An agent sends its whole conversation again with every request: request 600 repeats requests
 * 1–599 and adds a turn. So a body is cut at the elements of its top-level arrays (`messages`,
 * `tools`, `system`, `contents`, `input`…, whatever the API calls them): each element of at least
 * PART_MIN_CHARS characters is a part, stored once per run under its hash, and the body keeps a
 * skeleton, the text between its parts, exactly as sent. Joining skeleton and parts gives the body
 * back character for character, whatever its whitespace, key order or escapes, since nothing is parsed
 * and re-written: the cuts are positions in the text. The cut is found by a scan of the JSON's
 * structure that never fails a body, only declines one: a body whose text is not an object (or is
 * cut off) has no cuts and is stored whole. The whole body's hash is kept beside it and checked
 * when it is joined again.
 */
import { createHash } from "node:crypto";

/** Elements shorter than this stay in the skeleton: a reference (a hash, about 25 characters) would save little. */
export const PART_MIN_CHARS = 64;
/**
 * Bodies shorter than this are stored whole: the probes' bodies, a few KB, are what they always
 * were, and the sessions that repeat much send bodies far longer.
 */
export const PARTED_MIN_CHARS = 16 * 1024;

/** A body cut into the texts between its parts (one more than the parts) and the parts. */
export interface CutBody {
  skeleton: string[];
  parts: string[];
}

/** A part's name: 128 bits of its SHA-256, URL-safe base64 (22 characters). */
export function partHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("base64url").slice(0, 22);
}

/** The whole body's hash, checked when it is joined again: SHA-256, hex. */
export function bodyHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function skipSpace(text: string, at: number): number {
  let i = at;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
  }
  return i;
}

/** The index after the string that opens at `at` (its quote), or -1 when it never closes. */
function skipString(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** The index after the value that starts at `at`, or -1 when the text ends inside it. */
function skipValue(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return skipString(text, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let i = at;
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    return i > at ? i : -1;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i) - 1;
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The elements of the array that opens at `at`, as [start, end) positions, and the index after it. */
function arrayElements(text: string, at: number, cuts: [number, number][]): number {
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
  for (;;) {
    const start = skipSpace(text, i);
    const end = skipValue(text, start);
    if (end < 0) return -1;
    if (end - start >= PART_MIN_CHARS) cuts.push([start, end]);
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACKET) return i + 1;
    if (c !== COMMA) return -1;
    i++;
  }
}

/** Where the elements of the top-level arrays of a JSON object's text are; null for any other text. */
function elementCuts(text: string): [number, number][] | null {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return null;
  const cuts: [number, number][] = [];
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return cuts;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return null;
    i = skipSpace(text, skipString(text, i));
    if (i < 0 || text.charCodeAt(i) !== COLON) return null;
    i = skipSpace(text, i + 1);
    i = text.charCodeAt(i) === OPEN_BRACKET ? arrayElements(text, i, cuts) : skipValue(text, i);
    if (i < 0) return null;
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return cuts;
    if (c !== COMMA) return null;
    i = skipSpace(text, i + 1);
  }
}

/** The body cut into skeleton and parts; null when it is stored whole (short, not an object, no long elements). */
export function cutBody(text: string): CutBody | null {
  if (text.length < PARTED_MIN_CHARS) return null;
  const cut = cutElements(text);
  return cut && cut.parts.length > 0 ? cut : null;
}

/**
 * Any JSON object's text cut as a long body is, whatever its length (a reader takes a body stored
 * whole apart as it takes a parted one); null for a text that is not an object.
 */
export function cutElements(text: string): CutBody | null {
  const cuts = elementCuts(text);
  if (!cuts) return null;
  const skeleton: string[] = [];
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of cuts) {
    skeleton.push(text.slice(from, start));
    parts.push(text.slice(start, end));
    from = end;
  }
  skeleton.push(text.slice(from));
  return { skeleton, parts };
}

/** The body again: skeleton and parts interleaved. */
export function joinBody(skeleton: readonly string[], parts: readonly string[]): string {
  let text = skeleton[0] ?? "";
  for (let i = 0; i < parts.length; i++) text += parts[i]! + (skeleton[i + 1] ?? "");
  return text;
}
