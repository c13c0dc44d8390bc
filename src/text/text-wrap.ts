/**
 * Long lines broken to a terminal's width. A terminal wraps a long line from its left edge, through
 * the middle of a word or a number, and a cut loses what the line was for; so a line is broken
 * between phrases where it can, else between words, and carries on under a hanging indent.
 */
import { strlen } from "cli-table3/src/utils.js";

/**
 * Where a line may break, most wanted first: between ` · ` phrases (the separator is dropped),
 * after a `; ` clause, between words, after a `/` of a path. A break is taken only when it fills
 * the part of the line's room `from` says, so a short phrase or a word does not leave a nearly
 * empty line before a long one.
 */
const BREAKS: { separator: string; kept: number; from: number }[] = [
  { separator: " · ", kept: 0, from: 0.5 },
  { separator: "; ", kept: 1, from: 0.5 },
  { separator: " ", kept: 0, from: 0.25 },
  { separator: "/", kept: 1, from: 0.25 },
];

/** Text one column wide per UTF-16 unit: ASCII, Latin, Greek, dashes, quotes, arrows, box drawing. */
const NARROW = /^[\x20-\x7e\xa0-\u02ff\u0370-\u03ff\u2010-\u205e\u2190-\u21ff\u2212\u2500-\u259f]*$/;

/** The columns `text` takes on a terminal (wide characters count two, colour codes none). */
export function displayWidth(text: string): number {
  return NARROW.test(text) ? text.length : strlen(text);
}

/** The longest start of `text` no wider than `room` columns, as a length in UTF-16 units. */
function fittingLength(text: string, room: number): number {
  if (NARROW.test(text)) return Math.min(text.length, room);
  let width = 0;
  let length = 0;
  for (const char of text) {
    width += strlen(char);
    if (width > room) break;
    length += char.length;
  }
  return length;
}

/** Breaks for captured prose, where a `;` or `·` is the writer's, not a list of ours: words and paths. */
const WORD_BREAKS = BREAKS.slice(2);

/** `text` split into a start no wider than `room` and the rest, at the best break the start holds. */
function breakOnce(text: string, room: number, breaks: typeof BREAKS): [string, string] {
  const fits = fittingLength(text, room);
  const lead = text.length - text.trimStart().length;
  for (const { separator, kept, from } of breaks) {
    const at = text.lastIndexOf(separator, fits - kept);
    if (at > lead && at + kept <= fits && at >= room * from)
      return [text.slice(0, at + kept).trimEnd(), text.slice(at + separator.length).trimStart()];
  }
  // One word wider than the room, with no break in it: cut where the room ends (at least one character).
  const cut = Math.max(fits, text.codePointAt(0)! > 0xffff ? 2 : 1);
  return [text.slice(0, cut), text.slice(cut)];
}

/**
 * `line` as lines of at most `width` columns; lines after the first start with `indent` spaces
 * (at most half the width). A line that fits comes back alone and unchanged. `words` breaks only
 * between words (and paths), for captured text.
 */
export function wrapLine(line: string, width: number, indent = 0, words = false): string[] {
  if (displayWidth(line) <= width) return [line];
  const pad = " ".repeat(Math.min(indent, Math.floor(width / 2)));
  const lines: string[] = [];
  let rest = line;
  let room = width;
  while (displayWidth(rest) > room) {
    const [head, tail] = breakOnce(rest, room, words ? WORD_BREAKS : BREAKS);
    lines.push(lines.length === 0 ? head : pad + head);
    rest = tail;
    room = width - pad.length;
  }
  if (rest !== "") lines.push(lines.length === 0 ? rest : pad + rest);
  return lines;
}

/**
 * Each of `lines` wrapped to `width` (null: as they are), a continuation indented two spaces past
 * its line's own indent.
 */
export function wrapLines(lines: string[], width: number | null): string[] {
  if (width === null) return lines;
  return lines.flatMap((line) => wrapLine(line, width, /^ */.exec(line)![0].length + 2));
}
