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
 *
 * A line may be at most MAX_LINE_BYTES long. A longer one is refused (file and line) as soon as the
 * bytes looked at for it pass the limit, in chunk-sized reads: a file without newlines costs one
 * chunk of memory and a scan of the limit, instead of reading on until V8 cannot make the string.
 */
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import { inputError, type StorageError } from "../errors.js";
import { asStorageError, keepingFailure } from "./storage-error.js";

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
    keepingFailure(this, this.path, () => appendFileSync(this.fd, `${json}\n`));
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
  /** Default MAX_LINE_BYTES; tests make it small (at least 64 KiB, one chunk, counts). */
  maxLineBytes?: number;
  /** Read from this byte offset, a line's start, as if `line` lines came before it (default: the file's start). */
  start?: { offset: number; line: number };
}

/**
 * The longest line of a run file, in bytes: 256 MiB, the most payload bytes a probe run may send and
 * receive in all, so no line of such a run comes near it, while a proxied body of tens of megabytes
 * reads as before. It keeps the decoded line well below V8's longest string (about 512 MiB).
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

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
    const infinite = infiniteNumberAt(value);
    if (infinite !== null)
      throw inputError(path, `line ${n} ${infinite}`, "expected a finite number (one past ±1.8e308 reads as infinite)");
    yield value;
  }
}

/**
 * Where a parsed row holds an infinite number (`tokens.total`), or null: JSON.parse reads a number
 * too large for a double (a 401-digit integer, `1e400`) as Infinity (ECMA-262 §25.5.1, the number
 * grammar's value rounded), which no count, size or price accepts.
 */
function infiniteNumberAt(value: unknown, path = ""): string | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : path || "(the row)";
  if (value === null || typeof value !== "object") return null;
  for (const key in value) {
    const at = infiniteNumberAt(
      (value as Record<string, unknown>)[key],
      Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key,
    );
    if (at !== null) return at;
  }
  return null;
}

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
/** Reads that look for a long line's end: larger than a chunk, as nothing is decoded from them. */
const SCAN_BYTES = 1024 * 1024;

/** Non-blank, whole lines of a file, unparsed, with their 1-based numbers. */
export function* jsonlLines(path: string, options: JsonlReadOptions = {}): Generator<{ n: number; line: string }> {
  let n = options.start?.line ?? 0;
  for (const { text, final } of decodedChunks(path, options, () => n + 1)) {
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
export function countJsonlRows(path: string, options: JsonlReadOptions = {}): number {
  let rows = 0;
  let lines = options.start?.line ?? 0;
  for (const { text, final } of decodedChunks(path, options, () => lines + 1)) {
    for (let start = 0; start < text.length; ) {
      const stop = text.indexOf("\n", start);
      const end = stop < 0 ? text.length : stop;
      lines++;
      if (!isBlankSpan(text, start, end) && !(final && stop < 0 && !isJson(text.slice(start, end)))) rows++;
      start = end + 1;
    }
  }
  return rows;
}

/**
 * The file decoded in chunks that each end after a newline, the last one with whatever follows
 * the last newline (`final`). Each chunk is read from the file offset where the previous one was
 * cut, so a chunk always starts at a line's start. A chunk without a newline starts a line longer
 * than a chunk: the reader looks for its end with chunk-sized reads first, and refuses it once the
 * bytes looked at pass the limit (`lineNumber`, told by the reader who counts, names it); only a line
 * within the limit is read, once, into a buffer of its own length.
 */
function* decodedChunks(
  path: string,
  options: JsonlReadOptions,
  lineNumber: () => number,
): Generator<{ text: string; final: boolean }> {
  if (!existsSync(path)) throw inputError(path, undefined, "file not found");
  // A line inside one chunk is shorter than a chunk, so only a limit of at least a chunk checks all.
  const maxLineBytes = Math.max(options.maxLineBytes ?? MAX_LINE_BYTES, CHUNK_BYTES);
  const fd = openSync(path, "r");
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  try {
    for (let position = options.start?.offset ?? 0; ; ) {
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      if (read === 0) return;
      const cut = chunk.lastIndexOf(NEWLINE, read - 1);
      if (cut >= 0) {
        yield { text: chunk.toString("utf8", 0, cut + 1), final: false };
        position += cut + 1;
        continue;
      }
      if (read < CHUNK_BYTES) {
        yield { text: chunk.toString("utf8", 0, read), final: true };
        return;
      }
      const end = lineEnd(fd, position, maxLineBytes);
      if (end === null) throw lineTooLong(path, lineNumber(), maxLineBytes);
      const line = readAt(fd, end.bytes, position);
      yield { text: line.toString("utf8"), final: !end.newline || line.length < end.bytes };
      position += line.length;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the line starting at `start` ends: its byte count with the newline, and whether it has one
 * (the file's last line may not); null once more than `maxLineBytes` were looked at without an end.
 */
function lineEnd(fd: number, start: number, maxLineBytes: number): { bytes: number; newline: boolean } | null {
  const scratch = Buffer.allocUnsafe(SCAN_BYTES);
  for (let offset = start; offset - start <= maxLineBytes; ) {
    const read = readSync(fd, scratch, 0, scratch.length, offset);
    if (read === 0) return { bytes: offset - start, newline: false };
    const at = scratch.subarray(0, read).indexOf(NEWLINE);
    if (at >= 0) return offset + at - start <= maxLineBytes ? { bytes: offset + at + 1 - start, newline: true } : null;
    offset += read;
  }
  return null;
}

/**
 * The whole line that ends just before byte `end` of a file (`end` follows its newline), without the
 * newline; null when the byte before `end` is not a newline. Read backwards a chunk at a time, so
 * only that line is read. The file's last whole line is the one ending after its last newline.
 */
export function lineEndingAt(path: string, end: number | "last"): string | null {
  const fd = openSync(path, "r");
  try {
    const stop = end === "last" ? newlineBefore(fd, fstatSync(fd).size) + 1 : end;
    if (stop <= 0 || newlineBefore(fd, stop) !== stop - 1) return null;
    const start = newlineBefore(fd, stop - 1) + 1;
    return readAt(fd, stop - 1 - start, start).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The offset of the last newline before `before`; -1 when there is none. */
function newlineBefore(fd: number, before: number): number {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let stop = before; stop > 0; ) {
    const from = Math.max(0, stop - CHUNK_BYTES);
    const read = readSync(fd, chunk, 0, stop - from, from);
    const at = chunk.subarray(0, read).lastIndexOf(NEWLINE);
    if (at >= 0) return from + at;
    stop = from;
  }
  return -1;
}

/** `bytes` bytes of the file from `position`, fewer when the file is shorter now. */
function readAt(fd: number, bytes: number, position: number): Buffer {
  const buffer = Buffer.allocUnsafe(bytes);
  let filled = 0;
  while (filled < bytes) {
    const read = readSync(fd, buffer, filled, bytes - filled, position + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

function lineTooLong(path: string, n: number, maxLineBytes: number): Error {
  return inputError(
    path,
    `line ${n}`,
    `expected a line of at most ${formatMiB(maxLineBytes)}, but it is longer (reading stopped there)`,
  );
}

const formatMiB = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes.toLocaleString("en-US")} bytes`;

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
