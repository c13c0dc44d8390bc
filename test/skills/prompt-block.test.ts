import { describe, expect, it } from "vitest";
import { renderSkillsBlock, type SkillsBlockLines } from "../../src/skills/prompt-block.js";
import type { Skill } from "../../src/skills/types.js";

const lines: SkillsBlockLines = {
  intro: "TEST-INTRO skills listed here.",
  useRead: "TEST-READ open one with read.",
  useBash: "TEST-BASH open one with bash.",
  paths: "TEST-PATHS relative to the skill folder.",
};

function skill(name: string, description: string, filePath: string, disableModelInvocation = false): Skill {
  return {
    name,
    description,
    filePath,
    baseDir: filePath.slice(0, filePath.lastIndexOf("/")),
    source: { scope: "user", mode: "pi", root: "/skills" },
    disableModelInvocation,
  };
}

const first = skill("alpha", "Plain text.", "/skills/alpha/SKILL.md");
const tricky = skill("b&<>\"'", `Use for <tags> & "quotes" or 'apostrophes'.`, "/skills/R&D's <x>/SKILL.md");
const hidden = skill("hidden", "Never listed.", "/skills/hidden/SKILL.md", true);

describe("renderSkillsBlock", () => {
  it("renders visible skills in load order, escaped, with the read wording", () => {
    expect(renderSkillsBlock([first, hidden, tricky], ["read", "bash"], lines)).toBe(
      "\n\nTEST-INTRO skills listed here.\n" +
        "TEST-READ open one with read.\n" +
        "TEST-PATHS relative to the skill folder.\n" +
        "\n" +
        "<available_skills>\n" +
        "  <skill>\n" +
        "    <name>alpha</name>\n" +
        "    <description>Plain text.</description>\n" +
        "    <location>/skills/alpha/SKILL.md</location>\n" +
        "  </skill>\n" +
        "  <skill>\n" +
        "    <name>b&amp;&lt;&gt;&quot;&apos;</name>\n" +
        "    <description>Use for &lt;tags&gt; &amp; &quot;quotes&quot; or &apos;apostrophes&apos;.</description>\n" +
        "    <location>/skills/R&amp;D&apos;s &lt;x&gt;/SKILL.md</location>\n" +
        "  </skill>\n" +
        "</available_skills>",
    );
  });

  it("names bash only when read is inactive and bash is active", () => {
    const withBash = renderSkillsBlock([first], ["bash", "edit"], lines);
    expect(withBash.split("\n").slice(2, 5)).toEqual([
      "TEST-INTRO skills listed here.",
      "TEST-BASH open one with bash.",
      "TEST-PATHS relative to the skill folder.",
    ]);
    expect(renderSkillsBlock([first], ["read"], lines)).toContain("\nTEST-READ open one with read.\n");
  });

  it("is empty when neither read nor bash is active", () => {
    expect(renderSkillsBlock([first], ["edit", "write", "grep"], lines)).toBe("");
    expect(renderSkillsBlock([first], [], lines)).toBe("");
  });

  it("is empty when no skill is visible", () => {
    expect(renderSkillsBlock([], ["read"], lines)).toBe("");
    expect(renderSkillsBlock([hidden], ["read", "bash"], lines)).toBe("");
  });
});
