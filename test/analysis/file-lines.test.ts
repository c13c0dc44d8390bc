import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { countLines, fileLines } from "../../src/analysis/file-lines.js";
import { UserError } from "../../src/errors.js";

const dir = mkdtempSync(join(tmpdir(), "pp-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function written(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("fileLines", () => {
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
    expect([...fileLines(path)]).toEqual(expected);
    expect(countLines(path)).toBe(lines.length);
  });

  it("reads a last line without a newline, and an empty file as no lines", () => {
    expect([...fileLines(written("tail.jsonl", '{"a":1}\n{"b":2}'))]).toEqual([
      { n: 1, line: '{"a":1}' },
      { n: 2, line: '{"b":2}' },
    ]);
    expect(countLines(join(dir, "tail.jsonl"))).toBe(2);
    expect([...fileLines(written("empty.jsonl", ""))]).toEqual([]);
  });

  it("names a missing file as an input error", () => {
    expect(() => [...fileLines(join(dir, "missing.jsonl"))]).toThrow(UserError);
  });
});
