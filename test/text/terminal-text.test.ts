import { describe, expect, it } from "vitest";
import { printable } from "../../src/text/terminal-text.js";

describe("printable", () => {
  it("shows C0 controls, DEL, C1 controls and bidi overrides as escapes", () => {
    expect(printable("a\x1b]0;t\x07b\x1b[2J")).toBe("a\\x1b]0;t\\x07b\\x1b[2J");
    expect(printable("\x00\x7f\u0080\u009b\u009f")).toBe("\\x00\\u007f\\u0080\\u009b\\u009f");
    expect(printable("abc\u202edef\u2066\u2069")).toBe("abc\\u202edef\\u2066\\u2069");
    expect(printable("line\nbreak\tand\rreturn")).toBe("line\\x0abreak\\x09and\\x0dreturn");
  });

  it("keeps line breaks and tabs in multi-line texts, and carriage returns still escaped", () => {
    expect(printable("one\n\ttwo\r\n\x1b[31m", { lines: true })).toBe("one\n\ttwo\\x0d\n\\x1b[31m");
  });

  it("leaves printable text alone, accents, CJK and emoji included", () => {
    const text = "Ünïcödé 中文 😀 — “quoted” \u00a0 \u00ff";
    expect(printable(text)).toBe(text);
  });

  it("keeps a JSON line JSON: what it escapes past C0 uses JSON's own \\u form", () => {
    const json = JSON.stringify({ model: "x\u009by\u007f\u202e" });
    expect(JSON.parse(printable(json)).model).toBe("x\u009by\u007f\u202e");
  });
});
