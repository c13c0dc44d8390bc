import { describe, expect, it } from "vitest";
import { dollars, dollarsSideBySide } from "../../../src/analysis/cost/money.js";

describe("dollarsSideBySide: A, B and Δ on one line add up as printed", () => {
  it("prints both sides at the places the finer one needs, and Δ as their printed difference", () => {
    // Each alone: $0.007712 and $0.01, whose difference on screen would not be the true +$0.0064.
    expect([dollars(0.007712), dollars(0.014112)]).toEqual(["$0.007712", "$0.01"]);
    expect(dollarsSideBySide(0.007712, 0.014112)).toEqual({ a: "$0.007712", b: "$0.014112", delta: "+$0.006400" });
    expect(dollarsSideBySide(0.18, 0.07)).toEqual({ a: "$0.18", b: "$0.07", delta: "-$0.11" });
    expect(dollarsSideBySide(null, 0.5)).toEqual({ a: "—", b: "$0.50", delta: "—" });
  });
});
