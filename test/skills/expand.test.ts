import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { expandSkillCommand } from "../../src/skills/expand.js";
import type { Skill } from "../../src/skills/types.js";
import { makeTempDir, writeTree } from "./tree.js";

let tmp: ReturnType<typeof makeTempDir>;
let skills: Skill[];
let dir: string;

function skillAt(name: string, baseDir: string, disableModelInvocation = false): Skill {
  return {
    name,
    description: "d",
    filePath: join(baseDir, "SKILL.md"),
    baseDir,
    source: { scope: "cli", mode: "pi", root: baseDir },
    disableModelInvocation,
  };
}

beforeEach(() => {
  tmp = makeTempDir();
  // Characters XML would escape, to show that expansion leaves them alone.
  dir = join(tmp.dir, `R&D "x" <y>`);
  writeTree(dir, {
    "SKILL.md": "\uFEFF---\r\nname: demo\r\ndescription: d\r\n---\r\n\r\n# Demo\r\n\r\nDo <this> & that.\r\n\r\n",
    "hidden/SKILL.md": "---\nname: secret\ndescription: d\ndisable-model-invocation: true\n---\nHidden body.",
  });
  skills = [skillAt("demo", dir), skillAt("secret", join(dir, "hidden"), true)];
});
afterEach(() => tmp.cleanup());

describe("expandSkillCommand", () => {
  it("wraps the body and appends the arguments after a blank line", () => {
    expect(expandSkillCommand("/skill:demo   fix the bug  ", skills)).toBe(
      `<skill name="demo" location="${dir}/SKILL.md">\n` +
        `References are relative to ${dir}.\n` +
        "\n" +
        "# Demo\n\nDo <this> & that.\n" +
        "</skill>\n" +
        "\n" +
        "fix the bug",
    );
  });

  it("adds nothing after the block when there are no arguments", () => {
    const expected = `<skill name="demo" location="${dir}/SKILL.md">\nReferences are relative to ${dir}.\n\n# Demo\n\nDo <this> & that.\n</skill>`;
    expect(expandSkillCommand("/skill:demo", skills)).toBe(expected);
    expect(expandSkillCommand("/skill:demo    ", skills)).toBe(expected);
  });

  it("expands a skill hidden from the prompt block", () => {
    expect(expandSkillCommand("/skill:secret go", skills)).toBe(
      `<skill name="secret" location="${dir}/hidden/SKILL.md">\nReferences are relative to ${dir}/hidden.\n\nHidden body.\n</skill>\n\ngo`,
    );
  });

  it("leaves other text unchanged", () => {
    for (const text of [
      "/skill:unknown args",
      "please /skill:demo",
      " /skill:demo",
      "/skill:demo\nmore",
      "/skills:demo",
      "/skill:",
    ]) {
      expect(expandSkillCommand(text, skills)).toBe(text);
    }
  });

  it("reads the body at expansion time", () => {
    writeTree(dir, { "SKILL.md": "---\nname: demo\ndescription: d\n---\nEdited." });
    expect(expandSkillCommand("/skill:demo", skills)).toContain("\n\nEdited.\n</skill>");
  });

  it("names the file when the skill file is gone", () => {
    const gone = skillAt("gone", join(tmp.dir, "missing"));
    expect(() => expandSkillCommand("/skill:gone", [gone])).toThrow(UserError);
    expect(() => expandSkillCommand("/skill:gone", [gone])).toThrow(join(tmp.dir, "missing/SKILL.md"));
  });
});
