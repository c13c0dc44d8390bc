import { describe, expect, it } from "vitest";
import { fitWidths } from "../../../src/analysis/table/table-fit.js";

const sum = (widths: number[]) => widths.reduce((a, b) => a + b, 0);

describe("fitWidths", () => {
  it("returns the widths unchanged when they fit", () => {
    expect(fitWidths([5, 30, 10], [false, true, true], 45)).toEqual([5, 30, 10]);
  });

  it("narrows the widest cuttable columns first, so a short one stays whole", () => {
    const fitted = fitWidths([5, 40, 8, 30], [false, true, true, true], 40);
    expect(sum(fitted)).toBe(40);
    expect(fitted[0]).toBe(5);
    expect(fitted[2]).toBe(8);
    expect(fitted[1]! + fitted[3]!).toBe(27);
  });

  it("never narrows a figure column, and stops at one character and … per cut column", () => {
    const fitted = fitWidths([20, 40, 40], [false, true, true], 10);
    expect(fitted).toEqual([20, 4, 4]);
  });
});
