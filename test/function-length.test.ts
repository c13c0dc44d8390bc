import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { longFunctions, longFunctionsIn, MAX_FUNCTION_LINES } from "./function-length.js";

const ROOT = join(import.meta.dirname, "..");

describe(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
  it("holds for every function under src/", () => {
    expect(longFunctions(join(ROOT, "src")).map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
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
