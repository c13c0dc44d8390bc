/**
 * Text out, a line at a time, without holding a long report in memory: lines are gathered into
 * chunks and a chunk is written only when the stream has room for it, so a slow pipe throttles
 * the reader instead of filling memory. Every line is made printable (text/terminal-text.ts), since most
 * lines hold something a capture said; only a table our own code coloured (table-output.ts) is written as it is.
 */
import type { Writable } from "node:stream";
import { printable } from "../../text/terminal-text.js";
import { wrapLine } from "../../text/text-wrap.js";

const CHUNK_CHARS = 64 * 1024;

/** A broken line carries on two spaces past its own indent (past a list item's `- `), so it reads apart from the next. */
export const hangingIndent = (line: string) => line.length - line.trimStart().length + 2;

export class LineWriter {
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(private readonly stream: Writable) {}

  async line(text: string): Promise<void> {
    return this.styledLine(printable(text, { lines: true }));
  }

  /**
   * `text` (one line or several) with each line broken to `width` columns, lines after the first of
   * each under a hanging indent (`indent`, or what it says for the line); a null width leaves it whole.
   * `words`: captured text, broken between words only (see text/text-wrap.ts).
   */
  async wrappedLine(
    text: string,
    width: number | null,
    indent: number | ((line: string) => number) = 0,
    words = false,
  ): Promise<void> {
    const shown = printable(text, { lines: true });
    if (width === null) return this.styledLine(shown);
    for (const line of shown.split("\n"))
      for (const part of wrapLine(line, width, typeof indent === "number" ? indent : indent(line), words))
        await this.styledLine(part);
  }

  /** A line with our own colour codes in it, whose captured parts were made printable already. */
  async styledLine(text: string): Promise<void> {
    this.pending.push(text);
    this.pendingChars += text.length + 1;
    if (this.pendingChars >= CHUNK_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = `${this.pending.join("\n")}\n`;
    this.pending = [];
    this.pendingChars = 0;
    if (this.stream.write(chunk) || this.stream.destroyed) return;
    // A pipe whose reader left never drains: it closes, and what is left to write is dropped.
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        resolve();
      };
      this.stream.once("drain", done);
      this.stream.once("close", done);
    });
  }
}
