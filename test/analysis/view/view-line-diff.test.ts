/** The view page's line diff (browser code without the DOM, so it runs here as it runs in the page). */
import { describe, expect, it } from "vitest";
import { lineDiff } from "../../../src/analysis/view/browser/line-diff.js";

describe("lineDiff", () => {
  it("pairs equal lines and sets an added and a removed line against a gap on the other side", () => {
    expect(lineDiff(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"])).toEqual([
      ["a", "a", "same"],
      [null, "x", "add"],
      ["b", null, "del"],
      ["c", "c", "same"],
      ["d", "d", "same"],
      [null, "e", "add"],
    ]);
  });

  it("aligns a line moved past others by the longest common subsequence", () => {
    expect(lineDiff(["m", "a", "b", "c"], ["a", "b", "c", "m"])).toEqual([
      ["m", null, "del"],
      ["a", "a", "same"],
      ["b", "b", "same"],
      ["c", "c", "same"],
      [null, "m", "add"],
    ]);
  });

  it("pairs a middle too large to align line by line, as changed, keeping the common ends", () => {
    const many = (prefix: string) => Array.from({ length: 2001 }, (_, i) => `${prefix}${i}`);
    const rows = lineDiff(["head", ...many("a"), "tail"], ["head", ...many("b"), "more", "tail"]);
    expect(rows[0]).toEqual(["head", "head", "same"]);
    expect(rows[1]).toEqual(["a0", "b0", "chg"]);
    expect(rows.at(-2)).toEqual([null, "more", "chg"]);
    expect(rows.at(-1)).toEqual(["tail", "tail", "same"]);
    expect(rows).toHaveLength(2004);
  });
});
