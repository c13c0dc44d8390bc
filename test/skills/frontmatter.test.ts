import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseFrontmatter, readSkillBody, splitFrontmatter } from "../../src/skills/frontmatter.js";
import { makeTempDir } from "./tree.js";

describe("splitFrontmatter", () => {
  it("separates the YAML between the fences from the trimmed body", () => {
    expect(splitFrontmatter("---\nname: a\n---\n\n  Body text\n\n")).toEqual({ yaml: "name: a", body: "Body text" });
  });

  it("strips a BOM and turns CRLF and lone CR into LF", () => {
    expect(splitFrontmatter("\uFEFF---\r\nname: a\r\ndescription: b\r---\r\nline1\r\nline2\rline3")).toEqual({
      yaml: "name: a\ndescription: b",
      body: "line1\nline2\nline3",
    });
  });

  it("has no frontmatter unless the text starts with ---", () => {
    expect(splitFrontmatter("\n---\nname: a\n---\nBody")).toEqual({ yaml: null, body: "---\nname: a\n---\nBody" });
  });

  it("has no frontmatter when the closing fence is missing", () => {
    expect(splitFrontmatter("---\nname: a\nBody\n")).toEqual({ yaml: null, body: "---\nname: a\nBody" });
  });

  it("ends the frontmatter at the first \\n--- even inside a longer line", () => {
    expect(splitFrontmatter("---\na: 1\n----\nb\n---\nc")).toEqual({ yaml: "a: 1", body: "-\nb\n---\nc" });
  });

  it("accepts an empty frontmatter", () => {
    expect(splitFrontmatter("---\n---\nBody")).toEqual({ yaml: "", body: "Body" });
  });
});

describe("parseFrontmatter", () => {
  it("reads the YAML fields", () => {
    const parsed = parseFrontmatter(
      "---\nname: x\ndescription: >\n  folded\n  text\ndisable-model-invocation: true\n---\nB",
    );
    expect(parsed).toEqual({
      frontmatter: { name: "x", description: "folded text\n", "disable-model-invocation": true },
      body: "B",
    });
  });

  it("gives empty metadata without frontmatter or with an empty one", () => {
    expect(parseFrontmatter("Just text").frontmatter).toEqual({});
    expect(parseFrontmatter("---\n---\nText").frontmatter).toEqual({});
  });

  it("throws on invalid YAML and on YAML that is not a mapping", () => {
    expect(() => parseFrontmatter("---\nname: a: b\n---\n")).toThrow(/Nested mappings/);
    expect(() => parseFrontmatter("---\n- a\n- b\n---\n")).toThrow("frontmatter is not a YAML mapping of fields");
  });
});

describe("readSkillBody", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  it("returns the file minus its frontmatter, trimmed", () => {
    const file = join(tmp.dir, "SKILL.md");
    writeFileSync(file, "---\r\nname: a\r\ndescription: d\r\n---\r\n\r\n# Title\r\n\r\nText\r\n\r\n");
    expect(readSkillBody(file)).toBe("# Title\n\nText");
  });
});
