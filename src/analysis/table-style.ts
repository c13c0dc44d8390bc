/**
 * How a table is shown where it is printed: as wide as the terminal and in colour only when the
 * output is a terminal that wants colour. The CLI decides (src/cli/terminal.ts); renderers only
 * take the answer, so analysis never reads the environment.
 */

export interface TableLook {
  /** The widest a table may be; null draws every cell whole (`--wide`, or a pipe with no COLUMNS). */
  maxWidth: number | null;
  colour: boolean;
}

/** Whole cells, no colour: for tests and for output that is not a terminal. */
export const PLAIN_LOOK: TableLook = { maxWidth: null, colour: false };

export type Tone = "bold" | "dim" | "red" | "green" | "yellow";

const SGR: Record<Tone, [string, string]> = {
  bold: ["\x1b[1m", "\x1b[22m"],
  dim: ["\x1b[2m", "\x1b[22m"],
  red: ["\x1b[31m", "\x1b[39m"],
  green: ["\x1b[32m", "\x1b[39m"],
  yellow: ["\x1b[33m", "\x1b[39m"],
};

export function paint(text: string, tone: Tone | null): string {
  if (tone === null || text === "") return text;
  const [on, off] = SGR[tone];
  return `${on}${text}${off}`;
}

/**
 * A legend's phrases joined by ` · `, broken into lines no wider than the table may be (a phrase
 * longer than that is a line of its own, cut with …).
 */
export function legendLines(phrases: string[], look: TableLook): string[] {
  const max = look.maxWidth;
  if (max === null) return [phrases.join(" · ")];
  const lines: string[] = [];
  for (const phrase of phrases) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 3 + phrase.length <= max) lines[lines.length - 1] = `${last} · ${phrase}`;
    else lines.push(phrase.length > max ? `${phrase.slice(0, max - 1)}…` : phrase);
  }
  return lines;
}

/**
 * Lines no wider than `width` (null: as they are), broken between words; a continuation is indented
 * two spaces, and a word longer than the room is cut with ….
 */
export function wrapLines(lines: string[], width: number | null): string[] {
  if (width === null) return lines;
  return lines.flatMap((line) => {
    const indent = /^ */.exec(line)![0];
    const out: string[] = [];
    let current = indent;
    for (const word of line.slice(indent.length).split(" ")) {
      const next = current.trim() === "" ? current + word : `${current} ${word}`;
      if (next.length <= width || current.trim() === "") current = next;
      else {
        out.push(current);
        current = `${indent}  ${word}`;
      }
    }
    out.push(current);
    return out.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
  });
}
