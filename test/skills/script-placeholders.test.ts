import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { substituteSkillPaths } from "../../src/probes/script-placeholders.js";

const paths = new Map([["probe-marker", '/ws/staged/a "quoted"/SKILL.md']]);

describe("substituteSkillPaths", () => {
  it("replaces {{skill:name}} in nested argument values and leaves text turns alone", () => {
    const out = substituteSkillPaths(
      [
        { call: "read", args: { path: "{{skill:probe-marker}}", list: ["x {{skill:probe-marker}}"], n: 3 } },
        { calls: [{ call: "write", args: { path: "{{skill:probe-marker}}", content: "c" } }] },
        { text: "{{skill:probe-marker}}" },
      ],
      paths,
      "p.yaml",
    );
    expect(out).toEqual([
      {
        call: "read",
        args: { path: '/ws/staged/a "quoted"/SKILL.md', list: ['x /ws/staged/a "quoted"/SKILL.md'], n: 3 },
      },
      { calls: [{ call: "write", args: { path: '/ws/staged/a "quoted"/SKILL.md', content: "c" } }] },
      { text: "{{skill:probe-marker}}" },
    ]);
  });

  it("escapes the path for a JSON string when the arguments are raw JSON text", () => {
    const [step] = substituteSkillPaths([{ call: "read", args: '{"path":"{{skill:probe-marker}}"}' }], paths, "p.yaml");
    expect(JSON.parse((step as { args: string }).args)).toEqual({ path: '/ws/staged/a "quoted"/SKILL.md' });
  });

  it("names the probe file and the field when no skill of that name was loaded", () => {
    const run = () =>
      substituteSkillPaths([{ text: "x" }, { call: "read", args: { path: "{{skill:nope}}" } }], paths, "p.yaml");
    expect(run).toThrow(UserError);
    expect(run).toThrow(
      'p.yaml: field "model.script[1].args.path": {{skill:nope}} to name a loaded skill, but no skill "nope" was loaded',
    );
  });
});
