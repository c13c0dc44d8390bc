/**
 * A text with its `\/` and `\uXXXX` JSON escapes and its `%XX` percent escapes (RFC 3986 §2.1: a
 * URL or form value sent encoded, `postgres%3A%2F%2Fapp%3A…`) written as the character each stands
 * for, as the rules must read them: PHP's writer escapes every slash (`https:\/\/user:pass@host`), Go's `<`, `>`
 * and `&`, Gson's `=` and `'`, and any writer may escape a whole secret. Unlike the frequent escapes
 * (`\n`, `\"`, read in place by escapeView), these change the text's length, so positions are
 * mapped both ways. Only the regions the rules read are decoded: a decoded copy of a whole body
 * costs more than the scan (a new string of megabytes is fresh memory to fault in).
 */

/**
 * A whole backslash run and what it may escape: the run's last one or two backslashes are the
 * escape. A run starts after a character that is no backslash: tried from inside a long run too,
 * `\\+` would read the rest of the run again from each of its backslashes (quadratic in its length).
 */
const RARE = /(?<!\\)\\+(?:u[0-9a-fA-F]{4}|\/)|%[0-9a-fA-F]{2}/g;

/** The decoded text, and where its positions were in the original. */
export interface Unescaped {
  text: string;
  /** Where the character at `position` starts in the original (an escape's first backslash). */
  start(position: number): number;
  /** Where the characters before `position` end in the original (after an escape's last character). */
  end(position: number): number;
  /** Where the original's `position` is in the decoded text (an escape's own character from inside it). */
  at(position: number): number;
}

/**
 * The escapes in order, as three columns: each one's position in the decoded text, in the original,
 * and its length there. Typed columns rather than an object per escape: a text of nothing but
 * escapes makes millions, and the collector's work on objects was most of the scan's.
 */
class Escapes {
  views = new Int32Array(16);
  ats = new Int32Array(16);
  lengths = new Int32Array(16);
  count = 0;

  add(view: number, at: number, length: number): void {
    if (this.count === this.views.length) {
      const grown = (column: Int32Array) => {
        const wider = new Int32Array(column.length * 2);
        wider.set(column);
        return wider;
      };
      [this.views, this.ats, this.lengths] = [grown(this.views), grown(this.ats), grown(this.lengths)];
    }
    this.views[this.count] = view;
    this.ats[this.count] = at;
    this.lengths[this.count] = length;
    this.count++;
  }
}

/**
 * How many of a run of `count` backslashes before `u` or `/` belong to the escape, the rest being
 * escaped backslashes (pairs from the left, as escapeView pairs them). Escaped once or twice (tool
 * arguments are JSON inside a JSON string): `\\u0041` is `\u0041` escaped again; a slash is `\/`,
 * `\\/` when only the inner writer escaped it, `\\\/` when both did.
 */
function escapeLength(count: number, slash: boolean): number {
  if (!slash) return count % 2 === 1 ? 1 : 2;
  return count % 4 === 0 ? 2 : count % 4;
}

/** Decodes the escapes; a text without any is returned as it is. */
export function unescapedRare(text: string): Unescaped {
  const escapes = new Escapes();
  let shift = 0;
  const decoded = text.replace(RARE, (match: string, index: number) => {
    if (match.startsWith("%")) {
      escapes.add(index - shift, index, 3);
      shift += 2;
      return String.fromCharCode(Number.parseInt(match.slice(1), 16));
    }
    const slash = match.endsWith("/");
    const run = match.length - (slash ? 1 : 5);
    const kept = run - escapeLength(run, slash);
    const length = match.length - kept;
    escapes.add(index + kept - shift, index + kept, length);
    shift += length - 1;
    return match.slice(0, kept) + (slash ? "/" : String.fromCharCode(Number.parseInt(match.slice(-4), 16)));
  });
  const same = (position: number) => position;
  if (escapes.count === 0) return { text, start: same, end: same, at: same };
  return { text: decoded, ...mapping(escapes) };
}

/** Positions mapped both ways across the escapes (in order). */
function mapping({ views, ats, lengths, count }: Escapes): Omit<Unescaped, "text"> {
  const viewsUsed = views.subarray(0, count);
  const atsUsed = ats.subarray(0, count);
  const start = (position: number) => {
    const hit = lastAtOrBefore(viewsUsed, position);
    if (views[hit]! > position) return position;
    return views[hit] === position ? ats[hit]! : ats[hit]! + lengths[hit]! + position - views[hit]! - 1;
  };
  const width = (position: number) => {
    const hit = lastAtOrBefore(viewsUsed, position);
    return views[hit] === position ? lengths[hit]! : 1;
  };
  return {
    start,
    end: (position) => (position === 0 ? 0 : start(position - 1) + width(position - 1)),
    at(position) {
      const hit = lastAtOrBefore(atsUsed, position);
      if (ats[hit]! > position) return position;
      if (position < ats[hit]! + lengths[hit]!) return views[hit]!;
      return views[hit]! + 1 + position - ats[hit]! - lengths[hit]!;
    },
  };
}

/** The index of the last of `starts` (ascending) at or before `position`; 0 when none is. */
export function lastAtOrBefore(starts: ArrayLike<number>, position: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= position) low = middle;
    else high = middle - 1;
  }
  return low;
}
