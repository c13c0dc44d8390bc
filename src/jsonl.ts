/**
 * JSON Lines, written and read back: every run file (requests, payloads, events, the MCP wire log)
 * goes through this one module. It imports only node, errors.ts and storage-error.ts, so every layer may use it.
 *
 * Writing: each row is one synchronous append of its JSON and a newline, so what was written
 * before a crash is on disk after it. Reading: a crash can still cut the very last row short. A
 * last line without its newline that is not JSON is such a torn row — it is skipped, and the reader
 * is told, so what is whole is still read; a line that is not JSON anywhere else is corrupt input.
 * Blank lines are no rows: they are neither read nor counted.
 *
 * Long files are read synchronously in fixed-size chunks, never held whole: a run of 100,000
 * requests reads several times faster than through readline. A chunk is cut after its last newline
 * byte (0x0A is never part of a multi-byte UTF-8 sequence), decoded once and sliced into lines.
 * Chunks stay below V8's large-object size (128 KiB): a longer string is allocated on its own pages,
 * which made decoding five times slower.
 */
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import { inputError, type StorageError } from "./errors.js";
import { asStorageError, storageError } from "./storage-error.js";

/**
 * An append-only JSON Lines file, open for the life of its writer. A disk that is full or read-only
 * is a StorageError naming the file; the first failed write stays in `failure`, so its owner knows
 * the file is incomplete (a row cut short by it reads as a torn last line).
 */
export class JsonlWriter {
  private readonly fd: number;
  failure: StorageError | null = null;

  constructor(readonly path: string) {
    this.fd = asStorageError(path, () => {
      mkdirSync(dirname(path), { recursive: true });
      return openSync(path, "a");
    });
  }

  write(row: unknown): void {
    this.writeLine(JSON.stringify(row));
  }

  /** A row already serialized (a large payload is serialized once for every sink). */
  writeLine(json: string): void {
    try {
      appendFileSync(this.fd, `${json}\n`);
    } catch (error) {
      const failure = storageError(this.path, error);
      if (!failure) throw error;
      this.failure ??= failure;
      throw failure;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Appends one row to a file that several processes append to (each write is one O_APPEND write). */
export function appendJsonl(path: string, row: unknown): void {
  appendFileSync(path, jsonlRow(row));
}

function jsonlRow(row: unknown): string {
  return `${JSON.stringify(row)}\n`;
}

/** Told the 1-based number of a last line that was cut off mid-write (and is not read). */
export type TornLineHandler = (n: number) => void;

export interface JsonlReadOptions {
  /** Default: a torn last line is skipped without a word. */
  onTornLine?: TornLineHandler;
}

/** One line of a JSONL file as JSON; a line that is not JSON names the file and line (1-based). */
export function parseJsonlLine(path: string, n: number, line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw inputError(path, `line ${n}`, "expected one JSON value per line");
  }
}

/** Rows of a JSONL file, each checked by `accept`; a row it refuses names file, line and `expected`. */
export function* jsonlRows<T>(
  path: string,
  accept: (value: unknown) => value is T,
  expected: string,
  options: JsonlReadOptions = {},
): Generator<T> {
  for (const { n, line } of jsonlLines(path, options)) {
    const value = parseJsonlLine(path, n, line);
    if (!accept(value)) throw inputError(path, `line ${n}`, `expected ${expected}`);
    yield value;
  }
}

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** Non-blank, whole lines of a file, unparsed, with their 1-based numbers. */
export function* jsonlLines(path: string, options: JsonlReadOptions = {}): Generator<{ n: number; line: string }> {
  let n = 0;
  for (const { text, final } of decodedChunks(path)) {
    for (let start = 0; start < text.length; ) {
      const stop = text.indexOf("\n", start);
      const line = text.slice(start, stop < 0 ? text.length : stop);
      n++;
      start = stop < 0 ? text.length : stop + 1;
      if (isBlank(line)) continue;
      if (final && stop < 0 && !isJson(line)) {
        options.onTornLine?.(n);
        return;
      }
      yield { n, line };
    }
  }
}

/** How many rows jsonlLines reads: non-blank lines, a torn last line left out. */
export function countJsonlRows(path: string): number {
  let rows = 0;
  for (const { text, final } of decodedChunks(path)) {
    for (let start = 0; start < text.length; ) {
      const stop = text.indexOf("\n", start);
      const end = stop < 0 ? text.length : stop;
      if (!isBlankSpan(text, start, end) && !(final && stop < 0 && !isJson(text.slice(start, end)))) rows++;
      start = end + 1;
    }
  }
  return rows;
}

/**
 * The file decoded in chunks that each end after a newline, the last one with whatever follows
 * the last newline (`final`). A line longer than a chunk grows the buffer.
 */
function* decodedChunks(path: string): Generator<{ text: string; final: boolean }> {
  if (!existsSync(path)) throw inputError(path, undefined, "file not found");
  const fd = openSync(path, "r");
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let carried = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, carried, buffer.length - carried, null);
      const end = carried + read;
      if (read === 0) {
        if (end > 0) yield { text: buffer.toString("utf8", 0, end), final: true };
        return;
      }
      const cut = buffer.lastIndexOf(NEWLINE, end - 1);
      if (cut < 0) {
        if (end === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
        carried = end;
        continue;
      }
      yield { text: buffer.toString("utf8", 0, cut + 1), final: false };
      buffer.copy(buffer, 0, cut + 1, end);
      carried = end - cut - 1;
    }
  } finally {
    closeSync(fd);
  }
}

/** A JSON row starts with `{`: only a line that starts with whitespace needs trimming to tell. */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === "");
}

function isBlankSpan(text: string, start: number, end: number): boolean {
  return start === end || (text.charCodeAt(start) <= 32 && text.slice(start, end).trim() === "");
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
