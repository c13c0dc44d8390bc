/**
 * How a table is shown where it is printed: as wide as the terminal and in colour only when the
 * output is a terminal that wants colour. The CLI decides (src/cli/terminal.ts); renderers only
 * take the answer, so analysis never reads the environment.
 */

import { displayWidth, wrapLine } from "../../text/text-wrap.js";

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
 * longer than that is broken between words onto lines of its own).
 */
export function legendLines(phrases: string[], look: TableLook): string[] {
  const max = look.maxWidth;
  if (max === null) return [phrases.join(" · ")];
  const lines: string[] = [];
  for (const phrase of phrases) {
    const last = lines.at(-1);
    if (last !== undefined && displayWidth(last) + 3 + displayWidth(phrase) <= max)
      lines[lines.length - 1] = `${last} · ${phrase}`;
    else lines.push(...wrapLine(phrase, max, 2));
  }
  return lines;
}

/** What a narrow terminal cost a table: the heads of the columns left out, the notes of those shortened. */
export interface Narrowed {
  left: string[];
  shortened: string[];
}

/** The legend's phrases that say so, and how to see the whole table. */
export function narrowedLegend({ left, shortened }: Narrowed): string[] {
  if (left.length === 0 && shortened.length === 0) return [];
  const phrases = left.length > 0 ? [`left out at this width: ${left.join(", ")}`] : [];
  return [...phrases, ...shortened, "--wide: every column"];
}
