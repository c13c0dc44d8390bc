/**
 * A text with its `\/` and `\uXXXX` JSON escapes written as the character each stands for, as the
 * rules must read them: PHP's writer escapes every slash (`https:\/\/user:pass@host`), Go's `<`, `>`
 * and `&`, Gson's `=` and `'`, and any writer may escape a whole secret. Unlike the frequent escapes
 * (`\n`, `\"`, read in place by escapeView), these change the text's length, so positions are
 * mapped both ways. Only the regions the rules read are decoded: a decoded copy of a whole body
 * costs more than the scan (a new string of megabytes is fresh memory to fault in).
 */

/** A backslash run and what it may escape: the run's last one or two backslashes are the escape. */
const RARE = /\\+(?:u[0-9a-fA-F]{4}|\/)/g;

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

interface Escape {
  /** Its position in the decoded text, in the original, and its length there. */
  view: number;
  at: number;
  length: number;
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
  const escapes: Escape[] = [];
  const parts: string[] = [];
  let from = 0;
  let shift = 0;
  for (const match of text.matchAll(RARE)) {
    const letter = match[0].endsWith("/") ? "/" : match[0].slice(-5);
    const run = match[0].length - letter.length;
    const at = match.index + run - escapeLength(run, letter === "/");
    const length = match.index + match[0].length - at;
    parts.push(text.slice(from, at), letter === "/" ? "/" : String.fromCharCode(Number.parseInt(letter.slice(1), 16)));
    escapes.push({ view: at - shift, at, length });
    shift += length - 1;
    from = at + length;
  }
  const same = (position: number) => position;
  if (escapes.length === 0) return { text, start: same, end: same, at: same };
  parts.push(text.slice(from));
  return { text: parts.join(""), ...mapping(escapes) };
}

/** Positions mapped both ways across the escapes (in order). */
function mapping(escapes: Escape[]): Omit<Unescaped, "text"> {
  const views = escapes.map((hit) => hit.view);
  const ats = escapes.map((hit) => hit.at);
  const start = (position: number) => {
    const hit = escapes[lastAtOrBefore(views, position)]!;
    if (hit.view > position) return position;
    return hit.view === position ? hit.at : hit.at + hit.length + position - hit.view - 1;
  };
  const width = (position: number) => {
    const hit = escapes[lastAtOrBefore(views, position)]!;
    return hit.view === position ? hit.length : 1;
  };
  return {
    start,
    end: (position) => (position === 0 ? 0 : start(position - 1) + width(position - 1)),
    at(position) {
      const hit = escapes[lastAtOrBefore(ats, position)]!;
      if (hit.at > position) return position;
      if (position < hit.at + hit.length) return hit.view;
      return hit.view + 1 + position - hit.at - hit.length;
    },
  };
}

/** The index of the last of `starts` (ascending) at or before `position`; 0 when none is. */
export function lastAtOrBefore(starts: readonly number[], position: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= position) low = middle;
    else high = middle - 1;
  }
  return low;
}
