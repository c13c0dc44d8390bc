import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/runtime/tools/builtin.js";
import { globMatcher } from "../../src/runtime/tools/walk.js";
import { profile, removeTempDirs, tempDir } from "./harness.js";

const builtins = createBuiltinTools(profile);
let cwd: string;
const run = async (name: string, args: Record<string, unknown>) =>
  (await builtins.find((t) => t.name === name)!.execute(args, { cwd, env: process.env })).content;

const PATHS = ["a.js", "a.ts", "a.cs", "src/b.ts", "src/deep/c.js", "src/deep/c.md", "docs/d.md", ".env"];
const matching = (glob: string) => PATHS.filter(globMatcher(glob));

describe("globMatcher (find's pattern, grep's glob)", () => {
  it("a bracket class is a class, not literal brackets; [!…] and [^…] negate it", () => {
    expect(matching("*.[jt]s")).toEqual(["a.js", "a.ts"]);
    expect(matching("**/*.[!j]s")).toEqual(["a.ts", "a.cs", "src/b.ts"]);
    expect(matching("**/*.[^j]s")).toEqual(["a.ts", "a.cs", "src/b.ts"]);
    expect(matching("*.[[:lower:]]s")).toEqual(["a.js", "a.ts", "a.cs"]);
  });

  it("braces nest", () => {
    expect(matching("{a.js,{a.ts,docs/*}}")).toEqual(["a.js", "a.ts", "docs/d.md"]);
    expect(matching("src/**/*.{md,{js,ts}}")).toEqual(["src/b.ts", "src/deep/c.js", "src/deep/c.md"]);
  });

  it("** crosses folders (and none), * and ? stay within one", () => {
    expect(matching("**/*.md")).toEqual(["src/deep/c.md", "docs/d.md"]);
    expect(matching("src/**")).toEqual(["src/b.ts", "src/deep/c.js", "src/deep/c.md"]);
    expect(matching("src/*")).toEqual(["src/b.ts"]);
    expect(matching("?.ts")).toEqual(["a.ts"]);
  });

  it("a leading ! negates; dotfiles match like other names", () => {
    expect(matching("!**/*.{js,ts}")).toEqual(["a.cs", "src/deep/c.md", "docs/d.md", ".env"]);
    expect(matching("*")).toEqual(["a.js", "a.ts", "a.cs", ".env"]);
  });
});

describe("the find and grep tools with those globs", () => {
  beforeEach(() => {
    cwd = tempDir("glob-test-");
    for (const path of PATHS) {
      mkdirSync(dirname(join(cwd, path)), { recursive: true });
      writeFileSync(join(cwd, path), `needle in ${path}\n`);
    }
  });
  afterEach(removeTempDirs);

  it("find: a pattern without a slash matches names at any depth, one with a slash the relative path", async () => {
    expect(await run("find", { pattern: "*.[jt]s" })).toBe("a.js\na.ts\nsrc/b.ts\nsrc/deep/c.js");
    expect(await run("find", { pattern: "src/{deep/*.md,*.ts}" })).toBe("src/b.ts\nsrc/deep/c.md");
    expect(await run("find", { pattern: "!*.{js,ts,md}" })).toBe(".env\na.cs");
  });

  it("grep: glob filters files by their path below the search root", async () => {
    expect(await run("grep", { pattern: "needle", glob: "**/*.{md,{cs,txt}}" })).toBe(
      "a.cs:1: needle in a.cs\ndocs/d.md:1: needle in docs/d.md\nsrc/deep/c.md:1: needle in src/deep/c.md",
    );
    expect(await run("grep", { pattern: "needle", glob: "*.[jt]s", path: "src/deep" })).toBe(
      "src/deep/c.js:1: needle in src/deep/c.js",
    );
  });
});
