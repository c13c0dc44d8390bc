import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/*
 * Shared by the runtime's built-in tools and the load_skill model's skill tools (a neutral module, so
 * neither layer imports the other for it).
 */

/** Tool output sent to the model is bounded, as pi bounds it: 2000 lines or 50 KB, whichever comes first. */
export const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;

export interface Truncated {
  text: string;
  truncated: boolean;
  shownLines: number;
  totalLines: number;
}

/** Keep the first lines (files are read from the top). */
export function keepHead(text: string, maxLines = MAX_LINES, maxBytes = MAX_BYTES): Truncated {
  const lines = text.split("\n");
  const kept: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (kept.length >= maxLines || bytes + size > maxBytes) break;
    kept.push(line);
    bytes += size;
  }
  return {
    text: kept.join("\n"),
    truncated: kept.length < lines.length,
    shownLines: kept.length,
    totalLines: lines.length,
  };
}

/** Keep the last lines (command output matters most at its end). */
export function keepTail(text: string, maxLines = MAX_LINES, maxBytes = MAX_BYTES): Truncated {
  const lines = text.split("\n");
  const kept: string[] = [];
  let bytes = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const size = Buffer.byteLength(lines[i]!, "utf8") + 1;
    if (kept.length >= maxLines || bytes + size > maxBytes) break;
    kept.unshift(lines[i]!);
    bytes += size;
  }
  return {
    text: kept.join("\n"),
    truncated: kept.length < lines.length,
    shownLines: kept.length,
    totalLines: lines.length,
  };
}

/** Saves full output that was cut, so the model can be told where the rest is. */
export function saveFullOutput(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "payload-probe-output-"));
  const path = join(dir, "output.txt");
  writeFileSync(path, text);
  return path;
}
