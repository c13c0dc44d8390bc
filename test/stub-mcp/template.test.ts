import { describe, expect, it } from "vitest";
import { fillTemplate } from "../../src/stub-mcp/template.js";

describe("fillTemplate", () => {
  it("puts string arguments in as they are and other values as JSON", () => {
    expect(fillTemplate("A_TOOL1:{value}", { value: "first" })).toBe("A_TOOL1:first");
    expect(fillTemplate("B_TOOL2:{count}", { count: 2 })).toBe("B_TOOL2:2");
    expect(fillTemplate("{flag}/{list}", { flag: true, list: [1, "x"] })).toBe('true/[1,"x"]');
  });

  it("renders {args} as the compact JSON of all arguments", () => {
    expect(fillTemplate("GOT:{args}", { b: 1, a: "x" })).toBe('GOT:{"b":1,"a":"x"}');
  });

  it("leaves a missing argument empty and text outside placeholders untouched", () => {
    expect(fillTemplate("V={value}; {not a placeholder}", {})).toBe("V=; {not a placeholder}");
  });
});
