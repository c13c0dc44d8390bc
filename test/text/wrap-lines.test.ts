import { describe, expect, it } from "vitest";
import { wrapLines } from "../../src/text/text-wrap.js";

describe("wrapLines", () => {
  it("breaks between words at the width, keeps a line's indent and indents continuations two more", () => {
    const line = "  B #5 tools[2] added: b_tool2: this break re-billed 1,408 tokens × 1 request = $0.002112";
    const wrapped = wrapLines([line], 40);
    expect(wrapped).toEqual([
      "  B #5 tools[2] added: b_tool2: this",
      "    break re-billed 1,408 tokens × 1",
      "    request = $0.002112",
    ]);
    for (const l of wrapped) expect(l.length).toBeLessThanOrEqual(40);
    expect(wrapped.join(" ").replace(/ +/g, " ").trim()).toBe(line.replace(/ +/g, " ").trim());
  });

  it("a word longer than the room carries on the next line, nothing lost; null width leaves lines as they are", () => {
    expect(wrapLines(["x".repeat(12)], 8)).toEqual(["xxxxxxxx", "  xxxx"]);
    expect(wrapLines(["a b", "c"], null)).toEqual(["a b", "c"]);
  });
});
