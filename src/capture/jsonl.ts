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
    appendFileSync(this.fd, `${JSON.stringify(row)}\n`);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Every row of a JSONL file; a row that is not JSON names the file and line. */
export function readJsonl<T>(path: string): T[] {
  const rows: T[] = [];
  const lines = readFileSync(path, "utf8").split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      throw inputError(path, `line ${i + 1}`, "expected one JSON value per line");
    }
  });
  return rows;
}
