import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { inputError } from "../errors.js";

/**
 * An append-only JSON Lines file. Every row is written with one synchronous append, so what was
 * captured before a crash is on disk after it.
 */
export class JsonlWriter {
  private readonly fd: number;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "a");
  }

  write(row: unknown): void {
    this.writeLine(JSON.stringify(row));
  }

  /** A row already serialized (a large payload is serialized once for every sink). */
  writeLine(json: string): void {
    appendFileSync(this.fd, `${json}\n`);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** One line of a JSONL file as JSON; a line that is not JSON names the file and line (1-based). */
export function parseJsonlLine(path: string, n: number, line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw inputError(path, `line ${n}`, "expected one JSON value per line");
  }
}

/** Every row of a small JSONL file (large ones are streamed by analysis/file-lines.ts). */
export function readJsonl<T>(path: string): T[] {
  const rows: T[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() !== "") rows.push(parseJsonlLine(path, i + 1, line) as T);
    });
  return rows;
}
