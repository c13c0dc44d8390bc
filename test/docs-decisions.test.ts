/**
 * docs/decisions.md keeps its rules (issue 36): every record numbered once, every status `in force`
 * or superseded by a record that exists, and docs/decisions-index.md written from the records as
 * they are now. A record added without a number, or an index not rewritten, fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script, typed by its use here
import { indexPage, numbered, parseDecisions, problems } from "../scripts/decisions-index.mjs";

const DOCS = join(import.meta.dirname, "..", "docs");
const DECISIONS = readFileSync(join(DOCS, "decisions.md"), "utf8");

describe("docs/decisions.md and its index", () => {
  it("every record has a number of its own and a status naming records that exist", () => {
    const records = parseDecisions(DECISIONS);
    // Every section holds records: a parse that found none would pass the next line vacuously.
    const sections = DECISIONS.split("\n").filter((line) => line.startsWith("## ")).length;
    expect(new Set(records.map((r: { section: string }) => r.section)).size).toBe(sections);
    expect(problems(records)).toEqual([]);
  });

  it("the index is the one the records make", () => {
    expect(readFileSync(join(DOCS, "decisions-index.md"), "utf8")).toBe(indexPage(parseDecisions(DECISIONS)));
  });

  it("finds a record without a number, a status that names nothing, and numbers new records after the last", () => {
    const text = [
      "## A",
      "- D7. **Kept.** Why.",
      "  *Recorded 2026-12-04 (abc1234); superseded by D9.*",
      "- **New.** Why.",
      "  *Recorded 2026-12-04; in force.*",
      "- **Newer.** Why.",
      "  *Recorded 2026-12-04; replaced below.*",
    ].join("\n");
    const found = problems(parseDecisions(text));
    expect(found).toEqual([
      "docs/decisions.md:4: the record has no number (D<n>. at its start)",
      "docs/decisions.md:6: the record has no number (D<n>. at its start)",
      "docs/decisions.md:6: status 'replaced below' is not 'in force' or 'superseded by D<n>'",
      "docs/decisions.md:2: D9 does not exist",
    ]);
    const renumbered = parseDecisions(numbered(text));
    expect(renumbered.map((r: { number: number }) => r.number)).toEqual([7, 8, 9]);
    expect(problems(renumbered)).toEqual([
      "docs/decisions.md:6: status 'replaced below' is not 'in force' or 'superseded by D<n>'",
    ]);
  });
});
