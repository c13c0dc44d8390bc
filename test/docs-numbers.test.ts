/**
 * The format numbers docs/architecture.md quotes are the code's (issue 36: the page said the database
 * format was "now 1" while the code wrote 2). A number bumped in code without its sentence fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DATABASE_FORMAT, RUN_INDEX_FORMAT } from "../src/capture/run-format.js";

const ARCHITECTURE = readFileSync(join(import.meta.dirname, "..", "docs", "architecture.md"), "utf8");

/** Every number the page writes after `pattern` (its one capture group). */
const quoted = (pattern: RegExp) => [...ARCHITECTURE.matchAll(pattern)].map((m) => Number(m[1]));

describe("docs/architecture.md quotes the run format's numbers as the code has them", () => {
  it("the database format (`DATABASE_FORMAT`, now N)", () => {
    const numbers = quoted(/`DATABASE_FORMAT`, now (\d+)/g);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.every((n) => n === DATABASE_FORMAT)).toBe(true);
  });

  it('the run index\'s header ({"runIndex":N})', () => {
    const numbers = quoted(/\{"runIndex":(\d+)\}/g);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.every((n) => n === RUN_INDEX_FORMAT)).toBe(true);
  });
});
