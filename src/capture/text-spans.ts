/**
 * Spans of a text and texts read joined: what the secret scan shares between finding (secret-find.ts:
 * a rule reads its regions joined, and its finds are mapped back into the content) and replacing
 * (secrets.ts: an SSE stream's strings are scanned joined, and each find is cut back into the strings
 * it covers).
 */
import { lastAtOrBefore } from "./rare-escapes.js";

/** Where a part of a text is: `[start, end)`. */
export interface Span {
  start: number;
  end: number;
}

/**
 * The spans in order of their start, those that overlap (with `touching`, also those that meet) joined
 * into one: `joined(kept, span)` is told of each span folded into a kept one. The spans given are left
 * as they were; the kept ones are copies.
 */
export function unionOf<S extends Span>(
  spans: readonly S[],
  touching: boolean,
  joined?: (kept: S, span: S) => void,
): S[] {
  const out: S[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start || b.end - a.end)) {
    const last = out.at(-1);
    if (last && (touching ? span.start <= last.end : span.start < last.end)) {
      last.end = Math.max(last.end, span.end);
      joined?.(last, span);
    } else out.push({ ...span });
  }
  return out;
}

/**
 * Texts read as one: the texts of a group follow each other directly, and groups are joined by `gap`
 * (a separator no secret rule reads across). A position in the joined text leads back to its text.
 */
export class JoinedTexts<T extends { text: string }> {
  readonly text: string;
  private readonly texts: T[] = [];
  private readonly starts: number[] = [];

  constructor(groups: Iterable<readonly T[]>, gap: string) {
    const parts: string[] = [];
    let length = 0;
    for (const group of groups) {
      if (parts.length > 0) {
        parts.push(gap);
        length += gap.length;
      }
      for (const item of group) {
        this.texts.push(item);
        this.starts.push(length);
        parts.push(item.text);
        length += item.text.length;
      }
    }
    // A single text is read as it is, not copied: a body may be tens of megabytes.
    this.text = parts.length === 1 ? parts[0]! : parts.join("");
  }

  /** The text `position` is in (in a gap: the text before it), and where that text starts. */
  at(position: number): { item: T; start: number } {
    const index = lastAtOrBefore(this.starts, position);
    return { item: this.texts[index]!, start: this.starts[index]! };
  }

  /** Each text `[start, end)` covers, in order, with the part of it covered (`[from, to)` in that text). */
  *covered(start: number, end: number): Generator<{ item: T; from: number; to: number }> {
    for (let i = lastAtOrBefore(this.starts, start); i < this.texts.length && this.starts[i]! < end; i++) {
      const item = this.texts[i]!;
      const from = Math.max(start - this.starts[i]!, 0);
      const to = Math.min(end - this.starts[i]!, item.text.length);
      if (to > from) yield { item, from, to };
    }
  }
}
