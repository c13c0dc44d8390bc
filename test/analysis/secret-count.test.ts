import { describe, expect, it } from "vitest";
import { secretsNote } from "../../src/analysis/secret-count.js";

describe("secretsNote", () => {
  it("says nothing when nothing was replaced", () => {
    expect(secretsNote({ replaced: 0, kinds: {} })).toBeNull();
  });

  it("lists every kind, most first, on lines of 80 columns at most, a full one ending in a comma", () => {
    // Kinds of every length from 4 to 40 columns, so some line is filled to each possible width.
    for (let length = 4; length <= 40; length++) {
      const kinds: Record<string, number> = { "openai-key": 30 };
      for (let i = 0; i < 12; i++) kinds[`${String.fromCharCode(97 + i)}-${"k".repeat(length)}`] = 1;
      const lines = secretsNote({ replaced: 42, kinds })!.split("\n");
      expect(lines[0]).toBe("secrets: 42 replaced by markers in this run's stored bodies:");
      expect(lines[1]!.startsWith("  openai-key 30, a-k")).toBe(true);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
      for (const line of lines.slice(1, -1)) expect(line.endsWith(","), line).toBe(true);
      expect(lines.slice(1).join(" ").split(", ").join(" ").trim().split(/\s+/)).toHaveLength(2 * 13);
    }
  });
});
