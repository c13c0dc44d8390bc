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
import { NOT_SECRET_MESSAGES, OWN_RULES, PRESET_RULES, presetKind, type Regions } from "./secret-rules.js";

/** Where a secret is in a text, and its kind (the rule that found it). */
export interface SecretSpan {
  start: number;
  end: number;
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
    const at = content.indexOf(value, start);
    if (at >= 0 && at - start <= 256) {
      [start, end] = [at, at + value.length];
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

/** The text a rule reads: the whole window, or its regions joined by blank lines; and where a position of it is in the window. */
function ruleText(content: string, regions?: Regions): { text: string; at(position: number, from: number): number } {
  if (!regions) return { text: content, at: (position) => position };
  const merged: { start: number; end: number }[] = [];
  for (const { start, end } of regions(content).sort((a, b) => a.start - b.start)) {
    const last = merged.at(-1);
    if (last && start <= last.end) last.end = Math.max(last.end, Math.min(end, content.length));
    else merged.push({ start: Math.max(start, 0), end: Math.min(end, content.length) });
  }
  const starts: number[] = [];
  let length = 0;
  for (const region of merged) {
    starts.push(length);
    length += region.end - region.start + 2;
  }
  const text = merged.map((region) => content.slice(region.start, region.end)).join("\n\n");
  return {
    text,
    // Positions of one find are mapped from its start's region.
    at(position, from) {
      let index = starts.length - 1;
      while (index > 0 && starts[index]! > from) index--;
      return merged[index]!.start + position - starts[index]!;
    },
  };
}

function scanWindow(content: string, found: SecretSpan[], offset: number): void {
  const run = (rule: SecretLintRuleCreator<never>, options: object, regions: Regions | undefined, kind: Kind) => {
    const read = ruleText(content, regions);
    const context = contextFor((descriptor) => {
      const name = kind(descriptor.message.messageId);
      if (name === null) return;
      const [start, end] = narrowed(read.text, descriptor);
      if (end > start)
        found.push({ start: read.at(start, start) + offset, end: read.at(end, start) + offset, kind: name });
    });
    // The GCP rule's file reader returns a promise that ends at once without a file path.
    void rule.create(context, options as never).file?.(sourceOf(read.text));
  };
  for (const { rule, options, regions } of PRESET_RULES)
    run(rule, options, regions, (id) => (NOT_SECRET_MESSAGES.has(id) ? null : presetKind(rule.meta.id, id)));
  for (const rule of OWN_RULES) run(rule as SecretLintRuleCreator<never>, {}, undefined, () => rule.meta.id);
}

/** The kind a rule's message names, or null for a message that names no secret. */
type Kind = (messageId: string) => string | null;

/**
 * Every secret in the text, in order, overlapping finds merged into one (a `GITHUB_TOKEN=ghp_…` line
 * is found by the GitHub rule and the generic one; the specific kind is kept).
 */
export function findSecrets(text: string): SecretSpan[] {
  const found: SecretSpan[] = [];
  for (let at = 0; at < text.length; at += WINDOW) {
    const last = at + WINDOW >= text.length;
    const before = found.length;
    scanWindow(text.slice(at, at + WINDOW + OVERLAP), found, at);
    // A find starting in the overlap is found again, whole, by the next window.
    if (!last) {
      const kept = found.slice(before).filter((span) => span.start < at + WINDOW);
      found.length = before;
      found.push(...kept);
    }
  }
  return merged(found);
}

function merged(spans: SecretSpan[]): SecretSpan[] {
  const sorted = spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: SecretSpan[] = [];
  for (const span of sorted) {
    const last = out.at(-1);
    if (!last || span.start >= last.end) {
      out.push({ ...span });
      continue;
    }
    last.end = Math.max(last.end, span.end);
    if (last.kind === "generic-secret") last.kind = span.kind;
  }
  return out;
}
