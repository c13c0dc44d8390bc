import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { longFunctions, longFunctionsIn, MAX_FUNCTION_LINES } from "./function-length.js";

const ROOT = join(import.meta.dirname, "..");

describe(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
  it("holds for every function under src/", () => {
    const long = longFunctions(join(ROOT, "src"));
    expect(long.map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
  });
});

describe("the function-length walk (a test of the test)", () => {
  const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join("\n");

  it("finds a function declaration, a method, an arrow and a function expression one line over", () => {
    const text = [
      `function long() {\n${body(61)}\n}`,
      `class K {\n  method() {\n${body(61)}\n  }\n}`,
      `const arrow = () => {\n${body(61)}\n};`,
      `const expression = function () {\n${body(61)}\n};`,
    ].join("\n");
    expect(longFunctionsIn("f.ts", text).map((f) => [f.name, f.lines])).toEqual([
      ["long", 61],
      ["method", 61],
      ["arrow", 61],
      ["expression", 61],
    ]);
  });

  it("lets a function of exactly 60 lines pass, its doc comment not counted", () => {
    const text = `/**\n * Doc\n * comment\n */\nfunction fits() {\n${body(60)}\n}`;
    expect(longFunctionsIn("f.ts", text)).toEqual([]);
  });

  it("counts a nested function on its own as well as inside its parent", () => {
    const text = `function outer() {\n  const inner = () => {\n${body(65)}\n  };\n}`;
    expect(longFunctionsIn("f.ts", text).map((f) => f.name)).toEqual(["outer", "inner"]);
  });
});
