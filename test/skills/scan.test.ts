import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prefixIgnorePattern, scanSkillRoot } from "../../src/skills/scan.js";
import { link, makeTempDir, writeTree } from "./tree.js";

let tmp: ReturnType<typeof makeTempDir>;
let root: string;
beforeEach(() => {
  tmp = makeTempDir();
  root = join(tmp.dir, "skills");
});
afterEach(() => tmp.cleanup());

/** Scan results relative to the root, so expectations read like the tree. */
function scanRel(mode: "pi" | "agents"): string[] {
  return scanSkillRoot(root, mode).map((path) => path.slice(root.length + 1));
}

describe("scanSkillRoot: order and skill roots", () => {
  it("sorts entries by byte order, not by locale or UTF-16 order", () => {
    // U+FF5E is EF BD 9E in UTF-8 and sorts before the emoji's F0 ..., although in UTF-16 the
    // emoji's surrogate D83D comes first.
    writeTree(root, { "a.md": "", "B.md": "", "_c.md": "", "\uFF5E.md": "", "\u{1F600}.md": "", "z.md": "" });
    expect(scanRel("pi")).toEqual(["B.md", "_c.md", "a.md", "z.md", "\uFF5E.md", "\u{1F600}.md"]);
  });

  it("orders subdirectories by byte order too", () => {
    writeTree(root, { "beta/SKILL.md": "", "Alpha/SKILL.md": "", "alpha/SKILL.md": "" });
    expect(scanRel("pi")).toEqual(["Alpha/SKILL.md", "alpha/SKILL.md", "beta/SKILL.md"]);
  });

  it("takes only SKILL.md from a skill directory and never looks below it", () => {
    writeTree(root, {
      "outer/SKILL.md": "",
      "outer/notes.md": "",
      "outer/inner/SKILL.md": "",
      "group/deep/er/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["group/deep/er/SKILL.md", "outer/SKILL.md"]);
  });

  it("treats the scan root itself as a skill when it holds SKILL.md", () => {
    writeTree(root, { "SKILL.md": "", "other.md": "", "sub/SKILL.md": "" });
    expect(scanRel("pi")).toEqual(["SKILL.md"]);
  });

  it("does not treat a directory named SKILL.md as a skill file", () => {
    writeTree(root, { "odd/SKILL.md/SKILL.md": "" });
    expect(scanRel("pi")).toEqual(["odd/SKILL.md/SKILL.md"]);
  });

  it("skips dot-names and node_modules", () => {
    writeTree(root, {
      ".hidden/SKILL.md": "",
      ".dot.md": "",
      "node_modules/pkg/SKILL.md": "",
      "nested/node_modules/pkg/SKILL.md": "",
      "nested/.cache/SKILL.md": "",
      "visible/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["visible/SKILL.md"]);
  });

  it("returns nothing for a missing root or a root that is a file", () => {
    expect(scanSkillRoot(join(tmp.dir, "missing"), "pi")).toEqual([]);
    writeTree(tmp.dir, { "file.md": "" });
    expect(scanSkillRoot(join(tmp.dir, "file.md"), "pi")).toEqual([]);
  });
});

describe("scanSkillRoot: loose .md files per mode", () => {
  beforeEach(() => {
    writeTree(root, { "root.md": "", "readme.txt": "", "sub/loose.md": "", "sub/deeper/more.md": "", "sub/x.txt": "" });
  });

  it("pi mode takes .md files only at the root", () => {
    expect(scanRel("pi")).toEqual(["root.md"]);
  });

  it("agents mode skips root files and takes .md files in subdirectories", () => {
    expect(scanRel("agents")).toEqual(["sub/deeper/more.md", "sub/loose.md"]);
  });
});

describe("scanSkillRoot: symlinks", () => {
  it("follows file and directory symlinks and skips broken ones", () => {
    writeTree(tmp.dir, { "elsewhere/linked-skill/SKILL.md": "", "elsewhere/tip.md": "" });
    writeTree(root, { "real/SKILL.md": "" });
    link(join(tmp.dir, "elsewhere/linked-skill"), join(root, "linked"));
    link(join(tmp.dir, "elsewhere/tip.md"), join(root, "tip.md"));
    link(join(tmp.dir, "nowhere"), join(root, "broken"));
    link(join(tmp.dir, "nowhere.md"), join(root, "broken.md"));
    expect(scanRel("pi")).toEqual(["linked/SKILL.md", "real/SKILL.md", "tip.md"]);
  });

  it("accepts a SKILL.md that is a symlink to a file and skips a broken one", () => {
    writeTree(tmp.dir, { "store/body.md": "" });
    link(join(tmp.dir, "store/body.md"), join(root, "good/SKILL.md"));
    link(join(tmp.dir, "store/missing.md"), join(root, "bad/SKILL.md"));
    writeTree(root, { "bad/inner/SKILL.md": "" });
    expect(scanRel("pi")).toEqual(["bad/inner/SKILL.md", "good/SKILL.md"]);
  });

  it("does not loop on a symlink that points back up the tree", () => {
    writeTree(root, { "loop/SKILL2/SKILL.md": "" });
    link("..", join(root, "loop/back"));
    expect(scanRel("pi")).toEqual(["loop/SKILL2/SKILL.md"]);
  });
});

describe("scanSkillRoot: ignore files", () => {
  it("honours .gitignore, .ignore and .fdignore at the root", () => {
    writeTree(root, {
      ".gitignore": "by-git/\n",
      ".ignore": "by-ignore\n",
      ".fdignore": "by-fd.md\n",
      "by-git/SKILL.md": "",
      "by-ignore/SKILL.md": "",
      "by-fd.md": "",
      "kept/SKILL.md": "",
      "kept.md": "",
    });
    // Files and directories share one sorted pass: "kept" sorts before "kept.md".
    expect(scanRel("pi")).toEqual(["kept/SKILL.md", "kept.md"]);
  });

  it("prefixes a nested file's patterns with its directory, so they apply only below it", () => {
    writeTree(root, {
      "group/.gitignore": "drafts\n/top-only/\n",
      "group/drafts/SKILL.md": "",
      "group/top-only/SKILL.md": "",
      "group/deep/top-only/SKILL.md": "",
      "other/drafts/SKILL.md": "",
      "other/top-only/SKILL.md": "",
    });
    // "drafts" becomes "group/drafts" (anchored by the prefix); "/top-only/" drops its slash.
    expect(scanRel("pi")).toEqual(["group/deep/top-only/SKILL.md", "other/drafts/SKILL.md", "other/top-only/SKILL.md"]);
  });

  it("keeps root patterns active in every directory the walk visits", () => {
    writeTree(root, {
      ".gitignore": "scratch/\n",
      "a/scratch/SKILL.md": "",
      "a/b/scratch/SKILL.md": "",
      "a/keep/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["a/keep/SKILL.md"]);
  });

  it("re-includes with ! negation after prefixing", () => {
    writeTree(root, {
      "pack/.gitignore": "/*\n!/wanted/\n",
      "pack/wanted/SKILL.md": "",
      "pack/unwanted/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["pack/wanted/SKILL.md"]);
  });

  it("skips blank and comment lines and reads \\# and \\! as literal characters", () => {
    writeTree(root, {
      ".gitignore": "\n   \n#comment\n\\#hash\n\\!bang\n",
      "#comment/SKILL.md": "",
      "#hash/SKILL.md": "",
      "!bang/SKILL.md": "",
      "group/.ignore": "\\!bang\n\\#hash\n",
      "group/!bang/SKILL.md": "",
      "group/#hash/SKILL.md": "",
      "group/plain/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["#comment/SKILL.md", "group/plain/SKILL.md"]);
  });

  it("can ignore a SKILL.md file, which then does not make its directory a skill root", () => {
    writeTree(root, {
      "quiet/.ignore": "SKILL.md\n",
      "quiet/SKILL.md": "",
      "quiet/child/SKILL.md": "",
    });
    expect(scanRel("pi")).toEqual(["quiet/child/SKILL.md"]);
  });

  it("tests directories with a trailing slash, so a dir-only pattern leaves same-named files alone", () => {
    writeTree(root, { ".gitignore": "name.md/\n", "name.md": "", "sub/name.md/SKILL.md": "" });
    expect(scanRel("pi")).toEqual(["name.md"]);
  });
});

describe("prefixIgnorePattern", () => {
  it("rewrites one ignore line as §4.2 describes", () => {
    expect(prefixIgnorePattern("", "a/")).toBeNull();
    expect(prefixIgnorePattern("  ", "a/")).toBeNull();
    expect(prefixIgnorePattern("# note", "a/")).toBeNull();
    expect(prefixIgnorePattern("\\#x", "a/")).toBe("a/\\#x");
    expect(prefixIgnorePattern("!keep", "a/")).toBe("!a/keep");
    expect(prefixIgnorePattern("!/keep", "a/")).toBe("!a/keep");
    expect(prefixIgnorePattern("\\!x", "")).toBe("\\!x");
    expect(prefixIgnorePattern("/build/", "a/b/")).toBe("a/b/build/");
    expect(prefixIgnorePattern("*.md", "")).toBe("*.md");
  });
});
