/**
 * Replaces the secrets in what the capture stores with markers (`[redacted:aws-secret-key:3f2a9c1e]`).
 * A body is scanned as the provider reads it: JSON escapes read as the characters they stand for,
 * an SSE stream's deltas joined across events, so a key split over chunks is found whole.
 */
import { createHmac, randomBytes } from "node:crypto";
import { findSecrets, type SecretSpan } from "./secret-find.js";
import { JoinedTexts } from "./text-spans.js";

/** How many secrets were replaced, by kind. */
export interface SecretTally {
  replaced: number;
  kinds: Record<string, number>;
}

/** A text with its secrets replaced, and what was replaced in it. */
export interface Redacted {
  text: string;
  tally: SecretTally;
}

/** One string of what is scanned (an SSE stream's, or the whole text): its text, and how to put a changed text back. */
interface Settable {
  text: string;
  set(text: string): void;
}

/** Strings of one stream are joined directly (SSE deltas); streams are joined by this, which no rule crosses. */
const STREAM_GAP = "\n\n";

/** Texts shorter than this hold no secret any rule finds, and are not scanned. */
const SHORTEST = 8;

/** Widens a find that starts or ends inside an escape (`\\n`, `\\u0041`) to hold all of it, so the text stays valid JSON. */
function wholeEscapes(text: string, span: SecretSpan): SecretSpan {
  /** Whether `text[at]` is the letter of an escape: an odd run of backslashes before it. */
  const escaped = (at: number) => {
    let count = 0;
    while (at - 1 - count >= 0 && text[at - 1 - count] === "\\") count++;
    return count % 2 === 1;
  };
  const unicodeAt = (at: number) => at >= 0 && text[at] === "u" && escaped(at);
  let { start, end } = span;
  if (escaped(start)) start--;
  for (let k = 1; k <= 4; k++) if (unicodeAt(start - k)) start -= k + 1;
  if (end < text.length && escaped(end)) end++;
  for (let k = 1; k <= 5; k++) if (unicodeAt(end - k)) end = Math.max(end, end - k + 5);
  end = Math.min(end, text.length);
  return start === span.start && end === span.end ? span : { ...span, start, end };
}

/** The secret a find covers, its JSON escapes decoded (two levels): one secret hashes alike wherever it is. */
function decoded(raw: string): string {
  let text = raw;
  for (let level = 0; level < 2 && text.includes("\\"); level++) {
    try {
      text = JSON.parse(`"${text}"`) as string;
    } catch {
      return text;
    }
  }
  return text;
}

/** An SSE stream's `data:` JSON events, each string keyed by its path: one path's strings form a stream. */
function sseStrings(body: string): { streams: Map<string, Settable[]>; rebuild(): string } {
  const lines = body.split("\n");
  const streams = new Map<string, Settable[]>();
  const add = (key: string, item: Settable) => {
    const list = streams.get(key);
    if (list) list.push(item);
    else streams.set(key, [item]);
  };
  const written = new Set<{ index: number; prefix: string; event: unknown }>();
  for (const [index, line] of lines.entries()) {
    const data = /^data: ?(?=[{[])/.exec(line);
    let event: unknown;
    try {
      event = data ? JSON.parse(line.slice(data[0].length)) : undefined;
    } catch {}
    if (event === undefined) {
      add(`#${index}`, { text: line, set: (text) => (lines[index] = text) });
      continue;
    }
    const changed = { index, prefix: data![0], event };
    walkStrings(event, "", (path, text, set) =>
      // A value every event repeats (the model, the message id) is no delta: joined to its copies,
      // `ghp_…ghp_…` would be one run no rule's end finds, so each copy is scanned on its own.
      add(streams.get(path)?.at(-1)?.text === text && text.length >= SHORTEST ? `${path}#${index}` : path, {
        text,
        set(value) {
          set(value);
          written.add(changed);
        },
      }),
    );
  }
  return {
    streams,
    rebuild() {
      for (const { index, prefix, event } of written) lines[index] = `${prefix}${JSON.stringify(event)}`;
      return lines.join("\n");
    },
  };
}

function walkStrings(
  holder: unknown,
  path: string,
  visit: (path: string, text: string, set: (text: string) => void) => void,
) {
  if (holder === null || typeof holder !== "object") return;
  const object = holder as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    const at = `${path}/${key}`;
    if (typeof value === "string") visit(at, value, (text) => (object[key] = text));
    else walkStrings(value, at, visit);
  }
}

const looksLikeSse = (body: string) => /^(?:data|event|id|retry):/m.test(body.slice(0, 4096));

/**
 * The run's scanner: its markers are keyed with a random key made for the run and never stored, so
 * one secret gets one marker throughout a run while a marker's hash cannot be tested against guesses
 * of a short password offline.
 */
export class SecretScanner {
  private readonly key = randomBytes(32);

  /** The marker for a secret of a kind: its rule and the first 8 hex digits of its keyed hash. */
  marker(kind: string, secret: string): string {
    return `[redacted:${kind}:${createHmac("sha256", this.key).update(secret).digest("hex").slice(0, 8)}]`;
  }

  /**
   * A stored text with its secrets replaced, and how many of each kind: an SSE stream's deltas joined
   * by path across events (a key split over chunks is found whole, and each piece of it replaced),
   * any other text — a JSON body, its strings' escapes read as what they stand for — scanned as it is.
   */
  redact(text: string): Redacted {
    const tally: SecretTally = { replaced: 0, kinds: {} };
    if (text.length < SHORTEST) return { text, tally };
    if (looksLikeSse(text)) {
      const { streams, rebuild } = sseStrings(text);
      return { text: this.replaceIn(streams.values(), tally) ? rebuild() : text, tally };
    }
    let result = text;
    const whole = { text, set: (changed: string) => (result = changed) };
    this.replaceIn([[whole]], tally);
    return { text: result, tally };
  }

  /** A JSON value (an agent event's data) with the secrets in its strings replaced. */
  value<T>(value: T): T {
    const json = JSON.stringify(value);
    const safe = this.redact(json).text;
    return safe === json ? value : (JSON.parse(safe) as T);
  }

  /** Scans all streams as one text, replaces each find in the strings it covers and counts it in `tally`; false when none. */
  private replaceIn(streams: Iterable<Settable[]>, tally: SecretTally): boolean {
    const joined = new JoinedTexts(streams, STREAM_GAP);
    const spans = findSecrets(joined.text).map((span) => wholeEscapes(joined.text, span));
    if (spans.length === 0) return false;
    const edits = new Map<Settable, Edit[]>();
    // A secret repeated in a body is hashed once: a keyed hash costs more than finding it.
    const markers = new Map<string, string>();
    for (const span of spans) {
      const secret = decoded(joined.text.slice(span.start, span.end));
      const known = markers.get(`${span.kind}\0${secret}`);
      const marker = known ?? this.marker(span.kind, secret);
      if (known === undefined) markers.set(`${span.kind}\0${secret}`, marker);
      tally.replaced++;
      tally.kinds[span.kind] = (tally.kinds[span.kind] ?? 0) + 1;
      // The marker goes where the secret starts; the rest of it, in later strings, is cut out.
      let markerPlaced = false;
      for (const { item, from, to } of joined.covered(span.start, span.end)) {
        const list = edits.get(item) ?? [];
        list.push({ from, to, text: markerPlaced ? "" : marker });
        edits.set(item, list);
        markerPlaced = true;
      }
    }
    for (const [item, list] of edits) item.set(edited(item.text, list));
    return true;
  }
}

interface Edit {
  from: number;
  to: number;
  text: string;
}

function edited(text: string, edits: Edit[]): string {
  let out = "";
  let at = 0;
  for (const edit of edits.sort((a, b) => a.from - b.from)) {
    out += text.slice(at, edit.from) + edit.text;
    at = edit.to;
  }
  return out + text.slice(at);
}
