import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import {
  countJsonlRows,
  JsonlWriter,
  jsonlLines,
  jsonlRows,
  lineEndingAt,
  MAX_LINE_BYTES,
} from "../../src/files/jsonl.js";
import { userErrorOf } from "../fixtures/user-error.js";

const dir = mkdtempSync(join(tmpdir(), "pp-jsonl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function written(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;
const rows = (path: string, onTornLine?: (n: number) => void) => [
  ...jsonlRows(path, isObject, "a JSON object", { onTornLine }),
];

describe("JsonlWriter (docs/architecture.md, the run format)", () => {
  it("is append-only: a second writer on the same file adds rows after the first writer's", () => {
    const path = join(dir, "deep", "rows.jsonl");
    const first = new JsonlWriter(path);
    first.write({ n: 1 });
    first.close();
    const second = new JsonlWriter(path);
    second.write({ n: 2, text: "a\nb" });
    second.close();
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2,"text":"a\\nb"}\n');
    expect(rows(path)).toEqual([{ n: 1 }, { n: 2, text: "a\nb" }]);
  });
});

describe("jsonlLines", () => {
  it("splits exactly as String.split does, across chunk boundaries, multi-byte characters and over-long lines", () => {
    // Lines of every length around the 64 KiB chunk, multi-byte characters placed to straddle boundaries.
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) lines.push(`{"i":${i},"t":"${"é€😀x".repeat((i * 37) % 300)}"}`);
    lines.push(`{"long":"${"ü".repeat(200_000)}"}`, "", "   ", '{"after":"long"}\r');
    const text = `${lines.join("\n")}\n`;
    const path = written("many.jsonl", text);
    const expected = text
      .split("\n")
      .map((line, i) => ({ n: i + 1, line }))
      .filter(({ line }) => line.trim() !== "");
    expect([...jsonlLines(path)]).toEqual(expected);
    expect(countJsonlRows(path)).toBe(expected.length);
  });

  it("reads a whole last line without a newline, and an empty file as no lines", () => {
    expect([...jsonlLines(written("tail.jsonl", '{"a":1}\n{"b":2}'))]).toEqual([
      { n: 1, line: '{"a":1}' },
      { n: 2, line: '{"b":2}' },
    ]);
    expect(countJsonlRows(join(dir, "tail.jsonl"))).toBe(2);
    expect([...jsonlLines(written("empty.jsonl", ""))]).toEqual([]);
    expect(countJsonlRows(join(dir, "empty.jsonl"))).toBe(0);
  });

  it("does not count blank lines as rows", () => {
    const path = written("blank.jsonl", '\n{"a":1}\n\n  \n{"b":2}\n\n');
    expect(countJsonlRows(path)).toBe(2);
    expect(rows(path)).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it("names a missing file as an input error", () => {
    expect(() => [...jsonlLines(join(dir, "missing.jsonl"))]).toThrow(UserError);
  });
});

describe("a torn last line (what a crash mid-write leaves)", () => {
  const whole = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ i, text: "x".repeat(i % 90) })).join("\n");

  it("is skipped, the reader is told its number, and the rows before it are read", () => {
    const path = written("torn.jsonl", `${whole}\n{"i":3000,"te`);
    const torn: number[] = [];
    expect(rows(path, (n) => torn.push(n))).toHaveLength(3000);
    expect(torn).toEqual([3001]);
    expect(countJsonlRows(path)).toBe(3000);
  });

  it("cut inside a multi-byte character is still only the last line", () => {
    const bytes = Buffer.from(`${whole}\n{"i":3000,"text":"é€😀"}`);
    const path = join(dir, "torn-utf8.jsonl");
    writeFileSync(path, bytes.subarray(0, bytes.length - 4));
    const torn: number[] = [];
    expect(rows(path, (n) => torn.push(n))).toHaveLength(3000);
    expect(torn).toEqual([3001]);
  });

  it("is corrupt input when it is not the last line, naming file and line", () => {
    const path = written("corrupt.jsonl", '{"ok":true}\n{not json\n{"ok":true}\n');
    expect(() => rows(path)).toThrow(UserError);
    expect(() => rows(path)).toThrow(`${path}: field "line 2": expected one JSON value per line`);
    // A last line that ends with its newline was written whole: not JSON there is corrupt too.
    const ended = written("corrupt-end.jsonl", '{"ok":true}\n{not json\n');
    expect(() => rows(ended)).toThrow(`${ended}: field "line 2": expected one JSON value per line`);
  });
});

describe("a line over the line limit (issue 21: a 1 GB file without a newline)", () => {
  const limit = 128 * 1024;
  const lines = (path: string, onTornLine?: (n: number) => void) => [
    ...jsonlLines(path, { maxLineBytes: limit, onTornLine }),
  ];
  const row = (bytes: number) => `{"t":"${"x".repeat(bytes - 8)}"}`;

  it("reads a line of exactly the limit, and refuses one byte more naming file and line", () => {
    const fits = written("at-limit.jsonl", `{"a":1}\n${row(limit)}\n{"b":2}\n`);
    expect(lines(fits).map(({ n, line }) => [n, line.length])).toEqual([
      [1, 7],
      [2, limit],
      [3, 7],
    ]);
    const over = written("over-limit.jsonl", `{"a":1}\n\n${row(limit + 1)}\n{"b":2}\n`);
    const error = userErrorOf(() => lines(over));
    expect(error.message).toBe(
      `${over}: field "line 3": expected a line of at most 131,072 bytes, but it is longer (reading stopped there)`,
    );
    expect(userErrorOf(() => countJsonlRows(over, { maxLineBytes: limit })).field).toBe("line 3");
  });

  it("refuses an over-long last line without its newline instead of skipping it as torn", () => {
    const path = written("torn-long.jsonl", `{"a":1}\n${"é".repeat(limit)}`);
    const torn: number[] = [];
    expect(userErrorOf(() => lines(path, (n) => torn.push(n))).field).toBe("line 2");
    expect(torn).toEqual([]);
  });

  it("stops reading once the limit is passed: /dev/zero, a line without end, is refused", () => {
    expect(userErrorOf(() => lines("/dev/zero")).field).toBe("line 1");
  });

  it("holds with the real limit: a sparse file of MAX_LINE_BYTES + 1 bytes without a newline", () => {
    const path = join(dir, "sparse.jsonl");
    writeFileSync(path, '{"a":1}\n');
    truncateSync(path, 8 + MAX_LINE_BYTES + 1); // NUL bytes, no newline: one line one byte too long
    const error = userErrorOf(() => [...jsonlLines(path)]);
    expect(error.message).toBe(
      `${path}: field "line 2": expected a line of at most 256 MiB, but it is longer (reading stopped there)`,
    );
    expect(userErrorOf(() => countJsonlRows(path)).field).toBe("line 2");
    rmSync(path);
  });
});

describe("reading part of a file (the run index's reader, analysis/record-summaries.ts)", () => {
  // A first line longer than a chunk, so the backward search for its start reads several chunks.
  const long = JSON.stringify({ text: "é".repeat(70_000) });
  const text = `${long}\n{"n":2}\n\n{"n":3}\n{"n":4,"cut`;
  const path = written("part.jsonl", text);
  const offsetAfter = (prefix: string) => Buffer.byteLength(prefix);

  it("lineEndingAt gives the whole line ending at an offset, or the last whole line; null off a line's end", () => {
    expect(lineEndingAt(path, offsetAfter(`${long}\n`))).toBe(long);
    expect(lineEndingAt(path, offsetAfter(`${long}\n{"n":2}\n`))).toBe('{"n":2}');
    expect(lineEndingAt(path, "last")).toBe('{"n":3}');
    expect(lineEndingAt(path, offsetAfter(`${long}\n{"n"`))).toBeNull();
    expect(lineEndingAt(path, 0)).toBeNull();
  });

  it("a start offset reads and counts from there, numbering lines as if the ones before had been read", () => {
    const start = { offset: offsetAfter(`${long}\n`), line: 1 };
    const torn: number[] = [];
    expect([...jsonlLines(path, { start, onTornLine: (n) => torn.push(n) })]).toEqual([
      { n: 2, line: '{"n":2}' },
      { n: 4, line: '{"n":3}' },
    ]);
    expect(torn).toEqual([5]);
    expect(countJsonlRows(path, { start })).toBe(2);
    expect(countJsonlRows(path, { start: { offset: Buffer.byteLength(text), line: 5 } })).toBe(0);
  });
});
