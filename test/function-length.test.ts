import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { longFunctions, longFunctionsIn, MAX_FUNCTION_LINES } from "./function-length.js";

const ROOT = join(import.meta.dirname, "..");

/**
 * Functions allowed over the limit, by `file name`; each has its reason in NOTES.md ("House rules
 * that run"), and the test fails when one is no longer long, so the list cannot go stale.
 */
const EXEMPT = new Set(["analysis/view-page-script.ts viewPage"]);

const key = (where: string) => where.replace(/:\d+ /, " ");

describe(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
  it("holds for src/, apart from the exemptions NOTES.md gives a reason for", () => {
    const found = longFunctions(join(ROOT, "src"));
    expect(found.filter((f) => !EXEMPT.has(key(f.where))).map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
    expect(found.map((f) => key(f.where)).sort()).toEqual([...EXEMPT].sort());
    const notes = readFileSync(join(ROOT, "NOTES.md"), "utf8");
    for (const exempt of EXEMPT) expect(notes).toContain(`\`${exempt.split(" ")[1]}\``);
  });
});

describe("the function-length walk (a test of the test)", () => {
  const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join("\n");

  it("finds a function declaration, a method, an arrow and a function expression one line over", () => {
    const text = [
      `function long() {\n${body(81)}\n}`,
      `class K {\n  method() {\n${body(81)}\n  }\n}`,
      `const arrow = () => {\n${body(81)}\n};`,
      `const expression = function () {\n${body(81)}\n};`,
    ].join("\n");
    expect(longFunctionsIn("f.ts", text).map((f) => [f.name, f.lines])).toEqual([
      ["long", 81],
      ["method", 81],
      ["arrow", 81],
      ["expression", 81],
    ]);
  });

  it("lets a function of exactly 80 lines pass, its doc comment not counted", () => {
    const text = `/**\n * Doc\n * comment\n */\nfunction fits() {\n${body(80)}\n}`;
    expect(longFunctionsIn("f.ts", text)).toEqual([]);
  });

  it("counts a nested function on its own as well as inside its parent", () => {
    const text = `function outer() {\n  const inner = () => {\n${body(85)}\n  };\n}`;
    expect(longFunctionsIn("f.ts", text).map((f) => f.name)).toEqual(["outer", "inner"]);
  });
});
