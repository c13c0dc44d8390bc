import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSkillFile } from "../../src/skills/skill-file.js";
import type { SkillSource } from "../../src/skills/types.js";
import { makeTempDir, skillMd, writeTree } from "./tree.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const source: SkillSource = { scope: "user", mode: "pi", root: "/unused" };

function load(relPath: string, content: string) {
  writeTree(tmp.dir, { [relPath]: content });
  return loadSkillFile(join(tmp.dir, relPath), source);
}

describe("loadSkillFile", () => {
  it("builds the record without the body", () => {
    const { skill, diagnostics } = load(
      "my-skill/SKILL.md",
      skillMd({ name: "my-skill", description: "Does things." }),
    );
    expect(skill).toEqual({
      name: "my-skill",
      description: "Does things.",
      filePath: join(tmp.dir, "my-skill/SKILL.md"),
      baseDir: join(tmp.dir, "my-skill"),
      source,
      disableModelInvocation: false,
    });
    expect(diagnostics).toEqual([]);
  });

  it("names a skill without a name after its directory, with no diagnostic", () => {
    const { skill, diagnostics } = load("from-dir/SKILL.md", skillMd({ description: "d" }));
    expect(skill?.name).toBe("from-dir");
    expect(diagnostics).toEqual([]);
  });

  it("falls back to the directory when name is not a string", () => {
    expect(load("dir-name/SKILL.md", skillMd({ name: "42", description: "d" })).skill?.name).toBe("dir-name");
  });

  it("does not load a SKILL.md without a description and says why", () => {
    const path = join(tmp.dir, "no-desc/SKILL.md");
    expect(load("no-desc/SKILL.md", skillMd({ name: "no-desc" }))).toEqual({
      skill: null,
      diagnostics: [{ type: "warning", message: "description is required", path }],
    });
    expect(load("blank/SKILL.md", skillMd({ description: "  \n " })).diagnostics).toEqual([
      { type: "warning", message: "description is required", path: join(tmp.dir, "blank/SKILL.md") },
    ]);
  });

  it("also reports the name warnings of a SKILL.md it does not load", () => {
    const path = join(tmp.dir, "Bad_Dir/SKILL.md");
    expect(load("Bad_Dir/SKILL.md", "no frontmatter at all").diagnostics).toEqual([
      { type: "warning", message: "description is required", path },
      { type: "warning", message: "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)", path },
    ]);
  });

  it("skips a loose .md without a description silently", () => {
    expect(load("notes.md", "# Just notes\n")).toEqual({ skill: null, diagnostics: [] });
    expect(load("Bad_Name.md", skillMd({ name: "Bad_Name" }))).toEqual({ skill: null, diagnostics: [] });
  });

  it("loads an over-long description with a warning", () => {
    const description = "x".repeat(1025);
    const { skill, diagnostics } = load("long/SKILL.md", skillMd({ description }));
    expect(skill?.description).toBe(description);
    expect(diagnostics).toEqual([
      { type: "warning", message: "description exceeds 1024 characters (1025)", path: join(tmp.dir, "long/SKILL.md") },
    ]);
    expect(load("edge/SKILL.md", skillMd({ description: "y".repeat(1024) })).diagnostics).toEqual([]);
  });

  it("warns about each name rule and still loads", () => {
    const cases: Array<[string, string[]]> = [
      ["a".repeat(65), ["name exceeds 64 characters (65)"]],
      ["Upper", ["name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"]],
      ["-edge-", ["name must not start or end with a hyphen"]],
      ["dou--ble", ["name must not contain consecutive hyphens"]],
      [
        "-Bad--x",
        [
          "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
          "name must not start or end with a hyphen",
          "name must not contain consecutive hyphens",
        ],
      ],
    ];
    for (const [name, messages] of cases) {
      const relPath = `case-${messages.length}-${name.length}/SKILL.md`;
      const { skill, diagnostics } = load(relPath, skillMd({ name: JSON.stringify(name), description: "d" }));
      expect(skill?.name).toBe(name);
      expect(diagnostics).toEqual(
        messages.map((message) => ({ type: "warning", message, path: join(tmp.dir, relPath) })),
      );
    }
    expect(load("ok/SKILL.md", skillMd({ name: "a".repeat(64), description: "d" })).diagnostics).toEqual([]);
  });

  it("does not require the name to match the directory", () => {
    expect(load("folder/SKILL.md", skillMd({ name: "other-name", description: "d" })).diagnostics).toEqual([]);
  });

  it("hides a skill only for disable-model-invocation: true (a boolean)", () => {
    const hidden = load("h/SKILL.md", skillMd({ description: "d", extra: "disable-model-invocation: true" }));
    expect(hidden.skill?.disableModelInvocation).toBe(true);
    const quoted = load("q/SKILL.md", skillMd({ description: "d", extra: 'disable-model-invocation: "true"' }));
    expect(quoted.skill?.disableModelInvocation).toBe(false);
  });

  it("turns bad YAML into one error diagnostic naming the file", () => {
    const path = join(tmp.dir, "broken/SKILL.md");
    expect(load("broken/SKILL.md", "---\nname: a: b\ndescription: d\n---\nBody")).toEqual({
      skill: null,
      diagnostics: [
        {
          type: "error",
          message: "invalid frontmatter: Nested mappings are not allowed in compact mappings at line 1, column 7",
          path,
        },
      ],
    });
  });

  it("turns a file that cannot be read into an error diagnostic", () => {
    // A directory reached as a file fails the read the same way for every user, root included.
    const path = join(tmp.dir, "not-a-file.md");
    writeTree(tmp.dir, { "not-a-file.md/": "" });
    expect(loadSkillFile(path, source)).toEqual({
      skill: null,
      diagnostics: [{ type: "error", message: expect.stringMatching(/^could not read skill file: EISDIR/), path }],
    });
  });
});
