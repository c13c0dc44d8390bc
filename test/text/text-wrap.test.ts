import { describe, expect, it } from "vitest";
import { displayWidth, wrapLine } from "../../src/text/text-wrap.js";

const widest = (lines: string[]) => Math.max(...lines.map(displayWidth));

describe("wrapLine", () => {
  it("returns a line that fits unchanged", () => {
    expect(wrapLine("  tokens   tools = 148", 80, 11)).toEqual(["  tokens   tools = 148"]);
  });

  it("breaks between ` · ` phrases, dropping the separator, under a hanging indent", () => {
    const line =
      "  tokens   tools 814→802 (-12) · system 381→391 (+10) · messages 333→310 (-23) · total 1531→1506 (-25)";
    expect(wrapLine(line, 80, 11)).toEqual([
      "  tokens   tools 814→802 (-12) · system 381→391 (+10) · messages 333→310 (-23)",
      "           total 1531→1506 (-25)",
    ]);
  });

  it("breaks after a `; ` clause, keeping the semicolon", () => {
    const line =
      "prefix breaks B: #2 in tools after 2972 shared B (tools[1] added: a_tool1); #5 in tools after 3166 shared B (tools[2] added: b_tool2)";
    expect(wrapLine(line, 80, 2)).toEqual([
      "prefix breaks B: #2 in tools after 2972 shared B (tools[1] added: a_tool1);",
      "  #5 in tools after 3166 shared B (tools[2] added: b_tool2)",
    ]);
  });

  it("falls back to spaces, never cutting a number, and keeps every word", () => {
    const line = "breaks in tools: tools[6] added: mcp__probe_stub (shared 6170 B/1408 tok)";
    const lines = wrapLine(line, 20);
    expect(widest(lines)).toBeLessThanOrEqual(20);
    expect(lines.join(" ")).toBe(line);
    expect(lines).toEqual(["breaks in tools:", "tools[6] added:", "mcp__probe_stub", "(shared 6170 B/1408", "tok)"]);
  });

  it("cuts a word wider than the whole room where the room ends", () => {
    const lines = wrapLine(`${"a".repeat(25)} bb`, 10, 2);
    expect(lines).toEqual(["aaaaaaaaaa", "  aaaaaaaa", "  aaaaaaa", "  bb"]);
  });

  it("counts wide characters as two columns", () => {
    const lines = wrapLine("名前名前名前 名前名前", 8);
    expect(widest(lines)).toBeLessThanOrEqual(8);
    expect(lines.join("")).toBe("名前名前名前名前名前");
  });
});
