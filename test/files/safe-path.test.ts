import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { isRunName, isSafeName, removeInside, removeOwnFolder } from "../../src/files/safe-path.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

describe("names that become folders", () => {
  it("are one plain segment: no dots alone, separators, NUL, absolute paths or @", () => {
    for (const name of ["p1", "seq-namespace", "p4-hidden", "_x", "a.b"]) expect(isSafeName(name)).toBe(true);
    for (const name of ["", ".", "..", "../x", "a/b", "a\\b", "/abs", "a\0b", ".hidden", "p1@2", "x".repeat(65)])
      expect(isSafeName(name)).toBe(false);
  });
});

describe("run names", () => {
  it("are safe names, or a safe name with a letters-only agent suffix that can never read as <probe>@N", () => {
    for (const name of ["p1", "p1@pi", "seq-search@pi", `${"x".repeat(64)}@pi`]) expect(isRunName(name)).toBe(true);
    for (const name of ["p1@2", "p1@", "@pi", "p1@pi@pi", "p1@Pi", "../p1@pi", "p1@pi/x", "p1@p1", "a\0@pi"])
      expect(isRunName(name)).toBe(false);
  });
});

describe("removals", () => {
  it("removeInside refuses the folder itself, its parent and anything outside it", () => {
    const root = tempDir("remove-");
    mkdirSync(join(root, "runs", "p1"), { recursive: true });
    writeFileSync(join(root, "keep.txt"), "x");
    for (const target of [join(root, "runs"), root, join(root, "runs", ".."), "/"])
      expect(() => removeInside(join(root, "runs"), target)).toThrow(/refusing to remove/);
    removeInside(join(root, "runs"), join(root, "runs", "p1"));
    expect(existsSync(join(root, "runs", "p1"))).toBe(false);
    expect(existsSync(join(root, "keep.txt"))).toBe(true);
  });

  it("removeOwnFolder replaces a folder holding only what the code writes, and refuses one holding more", () => {
    const root = tempDir("remove-");
    const own = ["requests.jsonl", "events.jsonl"];
    mkdirSync(join(root, "p1"));
    writeFileSync(join(root, "p1", "requests.jsonl"), "");
    removeOwnFolder(root, join(root, "p1"), own, "a run folder");
    expect(existsSync(join(root, "p1"))).toBe(false);

    mkdirSync(join(root, "docs"));
    writeFileSync(join(root, "docs", "requests.jsonl"), "");
    writeFileSync(join(root, "docs", "thesis.tex"), "years of work");
    expect(() => removeOwnFolder(root, join(root, "docs"), own, "a run folder")).toThrow(UserError);
    expect(() => removeOwnFolder(root, join(root, "docs"), own, "a run folder")).toThrow(/holds "thesis.tex"/);
    expect(existsSync(join(root, "docs", "thesis.tex"))).toBe(true);
    removeOwnFolder(root, join(root, "absent"), own, "a run folder");
  });
});
