import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkLayers, formatCycle, formatViolation, type LayerReport } from "./layers-rules.js";

const SRC = join(import.meta.dirname, "..", "src");

let cached: LayerReport | undefined;
const report = (): LayerReport => (cached ??= checkLayers(SRC));

describe("layer boundaries under src/ (docs/architecture.md's table, as amended in docs/decisions.md)", () => {
  it("no import breaks the layer table and no modules import each other in a cycle", () => {
    const { violations, cycles } = report();
    expect([...violations.map(formatViolation), ...cycles.map(formatCycle)]).toEqual([]);
  });

  it("the walk sees the tree: static, type-only and dynamic imports are all edges", () => {
    // The edges the report above was made from: the walk over src/ runs once for both tests.
    const { edges } = report();
    const from = (module: string) => edges.filter((edge) => edge.from === module).map((edge) => edge.to);
    // cli/main.ts loads every command with import("./<command>.js").
    expect(from("cli/main.ts")).toContain("cli/check.ts");
    // `import type` lines count: the extension API is mostly types.
    expect(from("mcp/extension.ts")).toContain("runtime/types.ts");
    expect(edges.every((edge) => edge.to !== undefined)).toBe(true);
  });
});
