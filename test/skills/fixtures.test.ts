import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { discoverSkills } from "../../src/skills/discover.js";
import { expandSkillCommand } from "../../src/skills/expand.js";
import { renderSkillsBlock } from "../../src/skills/prompt-block.js";

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), "../../fixtures/skills");
const lines = { intro: "I", useRead: "R", useBash: "B", paths: "P" };
const description = "Deterministic marker skill for the payload probe. Use only when the prompt contains PROBE-SKILL.";

/** Loads a fixture the way probe p3/p4 does: --no-skills plus one --skill file. */
function loadFixture(folder: string) {
  return discoverSkills({
    cwd: fixtures,
    agentDir: join(fixtures, "no-agent-dir"),
    home: join(fixtures, "no-home"),
    noSkills: true,
    skillPaths: [join(folder, "SKILL.md")],
  });
}

describe("probe-marker fixtures", () => {
  it("probe-marker loads cleanly and is listed in the prompt block", () => {
    const { skills, diagnostics } = loadFixture("probe-marker");
    expect(diagnostics).toEqual([]);
    expect(
      skills.map(({ name, description, disableModelInvocation }) => ({ name, description, disableModelInvocation })),
    ).toEqual([{ name: "probe-marker", description, disableModelInvocation: false }]);
    expect(renderSkillsBlock(skills, ["read"], lines)).toContain(
      `<location>${join(fixtures, "probe-marker/SKILL.md")}</location>`,
    );
  });

  it("probe-marker expands to its heading, marker line and instruction", () => {
    const { skills } = loadFixture("probe-marker");
    const expanded = expandSkillCommand("/skill:probe-marker PROBE-SKILL", skills);
    expect(expanded).toMatch(
      /^<skill name="probe-marker" location="[^"]+\/probe-marker\/SKILL\.md">\nReferences are relative to [^\n]+\/probe-marker\.\n\n# Probe Marker Skill\n\nMARKER-BODY-7731\n\n[^\n]*DONE[^\n]*\n<\/skill>\n\nPROBE-SKILL$/,
    );
  });

  it("probe-marker-hidden is loaded, hidden from the block, and still expands", () => {
    const { skills, diagnostics } = loadFixture("probe-marker-hidden");
    expect(diagnostics).toEqual([]);
    expect(skills.map((skill) => [skill.name, skill.disableModelInvocation])).toEqual([["probe-marker", true]]);
    expect(renderSkillsBlock(skills, ["read", "bash"], lines)).toBe("");
    expect(expandSkillCommand("/skill:probe-marker PROBE-SKILL", skills)).toContain("\n\nMARKER-BODY-7731\n\n");
  });
});
