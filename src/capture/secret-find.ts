/**
 * Finds secrets in a text with the rules of secret-rules.ts, run through secretlint's rule interface
 * directly (a rule's `file(source)` handler reports to a context): synchronous, so the capture can
 * scan where it writes, and without the per-line index secretlint's core builds for file positions.
 */
import type {
  SecretLintRuleContext,
  SecretLintRuleCreator,
  SecretLintRuleLocalizeMessages,
  SecretLintRuleReportDescriptor,
  SecretLintSourceCode,
} from "@secretlint/types";
import { LiteralSearch } from "./literal-search.js";
import { lastAtOrBefore, type Unescaped, unescapedRare } from "./rare-escapes.js";
import { type Anchor, NOT_SECRET_MESSAGES, OWN_RULES, PRESET_RULES, presetKind } from "./secret-rules.js";
import { JoinedTexts, type Span, unionOf } from "./text-spans.js";

/** Where a secret is in a text, and its kind (the rule that found it). */
export interface SecretSpan extends Span {
  kind: string;
}

/**
 * Texts are scanned in windows of this many characters, each reaching `OVERLAP` into the next, so a
 * rule's working memory stays bounded whatever a body's size; the overlap is longer than the longest
 * secret a rule reports (a private key block, at most 10,000 characters of key).
 */
const WINDOW = 4 * 1024 * 1024;
const OVERLAP = 16 * 1024;

function sourceOf(content: string): SecretLintSourceCode {
  const none = () => {
    throw new Error("a secrets rule asked for a position, which the capture's scan does not keep");
  };
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: "text",
    ext: ".txt",
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    locationToRange: none,
    rangeToLocation: none,
    positionToIndex: none,
    indexToPosition: none,
  };
}

function contextFor(report: (descriptor: SecretLintRuleReportDescriptor) => void): SecretLintRuleContext {
  return {
    sharedOptions: {},
    createTranslator: <T extends SecretLintRuleLocalizeMessages>(messages: T) =>
      ((messageId: string, data?: object) => ({
        message: messages[messageId]?.en(data) ?? messageId,
        messageId,
        data,
      })) as never,
    report,
    ignore() {},
  };
}

/**
 * The secret's own range: where the reported value is (some preset rules report the start of the
 * whole `NAME=value` match with the value's length), narrowed to the password of a URL's userinfo
 * (`postgres://user:[redacted:…]@host`), so the host and user stay readable.
 */
function narrowed(content: string, descriptor: SecretLintRuleReportDescriptor): [number, number] {
  let [start, end] = descriptor.range;
  const data = (descriptor.message.data ?? {}) as Record<string, unknown>;
  for (const value of Object.values(data)) {
    if (typeof value !== "string" || value.length < 8) continue;
    // Looked for within reach only: a search to the text's end for each find would be quadratic.
    const at = content.slice(start, start + 256 + value.length).indexOf(value);
    if (at >= 0) {
      [start, end] = [start + at, start + at + value.length];
      break;
    }
  }
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s/]+)@/i.exec(content.slice(start, end));
  if (userinfo) {
    const password = userinfo[0].length - 1 - userinfo[1]!.length;
    return [start + password, start + password + userinfo[1]!.length];
  }
  return [start, end];
}

/**
 * The text as the rules read it, of the same length: the JSON escapes `\\n`, `\\t`, `\\r`, `\\"` and
 * `\\/` written as a space and the character each stands for (`\\uXXXX` and most `\\/` are decoded
 * before, by unescapedRare), so a key on a line of its own inside a
 * JSON string starts a line, and a quote ends a value. Each is replaced wherever its two characters
 * are, also after another backslash: tool arguments are JSON inside a JSON string, whose escapes
 * are escaped again (`\\\\n`), and those are the breaks that matter; that an escaped backslash
 * followed by an `n` reads as a line break too costs nothing but a boundary. Native replacements
 * keep it fast: a tokenizer that calls back per escape takes ten times as long on code.
 */
function escapeView(text: string): string {
  if (!text.includes("\\")) return text;
  // As UTF-16 code units in a buffer, each escape is rewritten in place and the text decoded once;
  // the escapes are looked for in the text (a string's search costs less per call than a buffer's).
  const units = Buffer.from(text, "utf16le");
  let at = text.indexOf("\\");
  while (at !== -1) {
    // An escaped escape (`\\\\n`, a line break in JSON inside a JSON string) reads as two spaces and the break.
    const doubled = text.charCodeAt(at + 1) === BACKSLASH_UNIT && READ_AS.has(text.charCodeAt(at + 2));
    const letter = doubled ? at + 2 : at + 1;
    const read = READ_AS.get(text.charCodeAt(letter));
    if (read !== undefined) {
      for (let space = at; space < letter; space++) units.writeUInt16LE(SPACE, 2 * space);
      units.writeUInt16LE(read, 2 * letter);
    }
    at = text.indexOf("\\", read === undefined ? at + 2 : letter + 1);
  }
  return units.toString("utf16le");
}

const BACKSLASH_UNIT = 0x5c;
const SPACE = 0x20;
/** What an escape's letter reads as: `n` a line break, `t` a tab, `r` a return, `"` and `/` themselves. */
const READ_AS = new Map([...'ntr"/'].map((char, i) => [char.charCodeAt(0), '\n\t\r"/'.charCodeAt(i)]));

/** Regions joined where they touch or overlap, each cut to the text's `[0, length)`. */
function regionUnion(regions: Span[], length: number): Span[] {
  return unionOf(regions, true).map(({ start, end }) => ({ start: Math.max(start, 0), end: Math.min(end, length) }));
}

/**
 * Every rule's regions of a text, found in one pass over it for all rules' literals, and the text's
 * escape view over the regions of all rules together: each part is escaped once, however many rules
 * read it, and a rule with no region is not run.
 */
class Reading {
  private readonly union: Span[];
  private readonly starts: number[];
  private readonly parts: { decoded: Unescaped; view: string }[];

  constructor(content: string, regions: Span[][]) {
    this.union = regionUnion(regions.flat(), content.length);
    this.starts = this.union.map((span) => span.start);
    this.parts = this.union.map((span) => {
      const decoded = unescapedRare(content.slice(span.start, span.end));
      return { decoded, view: escapeView(decoded.text) };
    });
  }

  /** The view of `[start, end)`, which lies in one of the union's regions, and where its positions are in the content. */
  view(start: number, end: number): RegionView {
    const index = lastAtOrBefore(this.starts, start);
    const from = this.union[index]!.start;
    const { decoded, view } = this.parts[index]!;
    const first = decoded.at(start - from);
    const last = end - from === 0 ? 0 : decoded.at(end - from - 1) + 1;
    return {
      text: view.slice(first, last),
      start: (position) => from + decoded.start(first + position),
      end: (position) => from + decoded.end(first + position),
    };
  }
}

/** A region as a rule reads it, and where its positions (of a find's start, of its end) are in the content. */
interface RegionView {
  text: string;
  start(position: number): number;
  end(position: number): number;
}

/** Each rule's anchors, in RULES order, and one search for all their literals. */
const RULES: {
  rule: SecretLintRuleCreator<never>;
  options: object;
  anchors: Anchor[];
  kind: Kind;
  /** Whether its reports need narrowing to the secret (the preset's); ours report the secret's own range. */
  narrow: boolean;
}[] = [
  ...PRESET_RULES.map(({ rule, options, regions }) => ({
    rule,
    options,
    anchors: regions,
    kind: (id: string) => (NOT_SECRET_MESSAGES.has(id) ? null : presetKind(rule.meta.id, id)),
    narrow: true,
  })),
  ...OWN_RULES.map(({ rule, regions }) => ({
    rule: rule as SecretLintRuleCreator<never>,
    options: {},
    anchors: regions,
    kind: () => rule.meta.id,
    narrow: false,
  })),
];

/** Every literal once, with the (rule, anchor) pairs that read around it. */
const LITERALS = (() => {
  const byText = new Map<string, { rule: number; anchor: Anchor }[]>();
  for (const [rule, { anchors }] of RULES.entries())
    for (const anchor of anchors)
      for (const text of anchor.literals) {
        const id = `${anchor.caseless === true}:${text}`;
        byText.set(id, [...(byText.get(id) ?? []), { rule, anchor }]);
      }
  const ids = [...byText.keys()];
  return {
    search: new LiteralSearch(
      ids.map((id) => ({ text: id.slice(id.indexOf(":") + 1), caseless: id.startsWith("true") })),
    ),
    readers: ids.map((id) => ({ length: id.length - id.indexOf(":") - 1, reading: byText.get(id)! })),
  };
})();

/**
 * Each rule's regions of a text, merged. Places come in order, so a region that reaches the rule's
 * last one joins it at once: a text dense with literals (`://` a thousand times) makes a few long
 * regions, not an object per place for the collector to sweep.
 */
function regionsOf(content: string): Span[][] {
  const regions: Span[][] = RULES.map(() => []);
  const { search, readers } = LITERALS;
  search.each(content, (at, literal) => {
    const { length, reading } = readers[literal]!;
    for (const { rule, anchor } of reading) {
      if (anchor.accept && !anchor.accept(content, at, length)) continue;
      const start = at - anchor.before;
      const end = (anchor.fromEnd ? at + length : at) + anchor.after;
      const spans = regions[rule]!;
      const last = spans.at(-1);
      if (last && start <= last.end && start >= last.start) last.end = Math.max(last.end, end);
      else spans.push({ start, end });
    }
    return undefined;
  });
  return regions.map((spans) => regionUnion(spans, content.length));
}

/**
 * The text a rule reads: its regions' views joined by blank lines; and where a find's start and end
 * (mapped from the region its start is in) are in the content.
 */
function ruleText(
  reading: Reading,
  regions: Span[],
): { text: string; at(position: number, from: number, end: boolean): number } {
  const views = new JoinedTexts(
    regions.map((region) => [reading.view(region.start, region.end)]),
    "\n\n",
  );
  return {
    text: views.text,
    at(position, from, end) {
      const { item, start } = views.at(from);
      return end ? item.end(position - start) : item.start(position - start);
    },
  };
}

function scanWindow(content: string, found: SecretSpan[]): void {
  const regions = regionsOf(content);
  const reading = new Reading(content, regions);
  for (const [index, { rule, options, kind, narrow }] of RULES.entries()) {
    if (regions[index]!.length === 0) continue;
    const read = ruleText(reading, regions[index]!);
    const context = contextFor((descriptor) => {
      const name = kind(descriptor.message.messageId);
      if (name === null) return;
      const [start, end] = narrow ? narrowed(read.text, descriptor) : descriptor.range;
      if (end > start) found.push({ start: read.at(start, start, false), end: read.at(end, start, true), kind: name });
    });
    // The GCP rule's file reader returns a promise that ends at once without a file path.
    void rule.create(context, options as never).file?.(sourceOf(read.text));
  }
}

/** The kind a rule's message names, or null for a message that names no secret. */
type Kind = (messageId: string) => string | null;

/**
 * Every secret in the text, in order, overlapping finds merged into one (a `GITHUB_TOKEN=ghp_…` line
 * is found by the GitHub rule and the generic one; the specific kind is kept).
 */
export function findSecrets(text: string): SecretSpan[] {
  if (text.length <= WINDOW + OVERLAP) {
    const found: SecretSpan[] = [];
    scanWindow(text, found);
    return merged(found);
  }
  const found: SecretSpan[] = [];
  for (let at = 0; at < text.length; at += WINDOW) {
    const last = at + WINDOW >= text.length;
    const spans: SecretSpan[] = [];
    scanWindow(text.slice(at, at + WINDOW + OVERLAP), spans);
    // A find starting in the overlap is found again, whole, by the next window.
    for (const span of spans)
      if (last || span.start < WINDOW) found.push({ start: span.start + at, end: span.end + at, kind: span.kind });
  }
  return merged(found);
}

/** The finds in order, overlapping ones joined under the most specific kind among them. */
function merged(spans: SecretSpan[]): SecretSpan[] {
  return unionOf(spans, false, (kept, span) => {
    if (kept.kind === "generic-secret") kept.kind = span.kind;
  });
}
