/**
 * No test sets a time limit of its own (vitest.config.ts): the config's bound is for a test that
 * hangs, and a test's own limit, shorter or longer, was a guess at how slow a loaded machine is. The
 * real pi and the package install are the exceptions the config names. What is looked for: a
 * number of milliseconds as the last argument of a test or hook (`}, 60_000);`) and a `timeout` in a
 * test's options.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";

const ALLOWED = ["test/package.test.ts", "test/probes/pi-runner.test.ts"];
/** This file quotes each form to test the search. */
const SELF = "test/test-time-limits.test.ts";

/** A callback closed with a number after it, or a test's options holding a timeout (one line or several). */
const OWN_LIMIT = [
  /^\s*\}, \d[\d_]{3,}\);$/m,
  /, \{\s*timeout: [\d_]+,?\s*\},\s*(async )?\(/,
  /= \{ timeout: [\d_]+ \};/,
];

function limitsIn(text: string): string[] {
  return OWN_LIMIT.flatMap((pattern) => {
    const found = new RegExp(pattern.source, `${pattern.flags}g`);
    return [...text.matchAll(found)].map((match) => match[0].trim());
  });
}

describe("test time limits", () => {
  it("no test file but the real pi's and the package's sets one", () => {
    const files = readdirSync(join(PROJECT_ROOT, "test"), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => relative(PROJECT_ROOT, join(PROJECT_ROOT, "test", name)))
      .filter((file) => !ALLOWED.includes(file) && file !== SELF);
    const found = files.flatMap((file) =>
      limitsIn(readFileSync(join(PROJECT_ROOT, file), "utf8")).map((l) => `${file}: ${l}`),
    );
    expect(found).toEqual([]);
  });

  it("finds each form it looks for (a test of the test)", () => {
    expect(limitsIn(`it("a", () => {\n  x();\n}, 60_000);`)).toEqual(["}, 60_000);"]);
    expect(limitsIn(`it("a", { timeout: 120_000 }, async () => {`)).toHaveLength(1);
    expect(limitsIn(`it("a", {\n    timeout: 120_000,\n  }, () => {`)).toHaveLength(1);
    expect(limitsIn("const SPAWNS = { timeout: 180_000 };")).toHaveLength(1);
    // A child's own bound, as spawnSync takes it, is not a test's limit.
    expect(limitsIn(`spawnSync(node, args, { encoding: "utf8", timeout: 120_000 });`)).toEqual([]);
    // Nor a reduce's starting value.
    expect(limitsIn("  return rows.reduce((sum, r) => {\n    return sum + r;\n  }, 0);")).toEqual([]);
  });
});
