/** The load_skill model (seed 002): parsing, catalog layers, dependency drops, activation, skill tools. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { extensionTexts, loadProfile } from "../../src/runtime/load-profile.js";
import type { RuntimeTool } from "../../src/runtime/types.js";
import { ActiveSkills } from "../../src/skills/disclosure/active.js";
import { dropUnsatisfiable, loadCatalog } from "../../src/skills/disclosure/catalog.js";
import { createLoadSkillTool } from "../../src/skills/disclosure/load-skill-tool.js";
import { escapesRoot, parseSkillPackage, parseSkillText, parseToolsFile } from "../../src/skills/disclosure/package.js";
import { renderEnvironment, renderInvocation } from "../../src/skills/disclosure/render.js";
import { createSkillTool } from "../../src/skills/disclosure/skill-tool.js";
import { disclosureTextsSchema } from "../../src/skills/disclosure/texts-schema.js";
import { makeTempDir, writeTree } from "./tree.js";

const texts = extensionTexts(loadProfile(), "loadSkill", disclosureTextsSchema);
const md = (name: string, description: string, body = "Body.", extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`;
const toolSpec = (command: string[]) => [{ name: "t", description: "d", inputSchema: { type: "object" }, command }];

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

describe("skill package parsing", () => {
  it("reads name, description, tools, mode, history and model, and the trimmed body", () => {
    const { meta, body } = parseSkillText(
      md("x", "X does things", "\n# SOP\n\nstep\n", "tools: [read]\nmode: inline\nhistory: keep\nmodel: m1\n"),
    );
    expect(meta).toEqual({
      name: "x",
      description: "X does things",
      tools: ["read"],
      mode: "inline",
      history: "keep",
      model: "m1",
    });
    expect(body).toBe("# SOP\n\nstep");
  });

  it("rejects an empty name, description or body", () => {
    expect(() => parseSkillText(md("''", "d"))).toThrow("name is required");
    expect(() => parseSkillText(md("x", "' '"))).toThrow("description is required");
    expect(() => parseSkillText(md("x", "d", "   "))).toThrow("body is empty");
  });

  it("validates tools.json: object schema, non-empty command, no escape through ..", () => {
    const root = join(tmp.dir, "skill");
    expect(parseToolsFile(JSON.stringify(toolSpec(["node", "run.mjs"])), root)[0]).toMatchObject({
      name: "t",
      command: ["node", "run.mjs"],
      root,
    });
    expect(parseToolsFile(JSON.stringify(toolSpec(["./bin/../run.sh"])), root)).toHaveLength(1);
    expect(() => parseToolsFile(JSON.stringify(toolSpec([])), root)).toThrow(
      "tools.json[0].command must be a non-empty list of strings",
    );
    expect(() => parseToolsFile(JSON.stringify(toolSpec(["../outside.sh"])), root)).toThrow(
      'tools.json[0].command[0] leaves the skill folder through ".."',
    );
    const badSchema = [{ name: "t", description: "d", inputSchema: { type: "string" }, command: ["x"] }];
    expect(() => parseToolsFile(JSON.stringify(badSchema), root)).toThrow(
      'inputSchema must be a JSON Schema of type "object"',
    );
    expect(escapesRoot(`${root}/../x`, root)).toBe(true);
    expect(escapesRoot("/usr/bin/env", root)).toBe(false);
  });
});

describe("catalog", () => {
  it("scans builtin, user, project in order: later layers override by name; a bad skill only warns", () => {
    writeTree(tmp.dir, {
      "builtin/a/SKILL.md": md("a", "builtin a"),
      "builtin/b/SKILL.md": md("b", "builtin b"),
      "user/a/SKILL.md": md("a", "user a"),
      "user/broken/SKILL.md": md("broken", "no body", ""),
      "project/a/SKILL.md": md("a", "project a"),
      "project/c.md": md("c", "loose file c"),
    });
    const { skills, diagnostics } = loadCatalog({
      builtin: join(tmp.dir, "builtin"),
      user: join(tmp.dir, "user"),
      project: join(tmp.dir, "project"),
    });
    expect(skills.map((s) => [s.meta.name, s.meta.description, s.layer])).toEqual([
      ["a", "project a", "project"],
      ["b", "builtin b", "builtin"],
      ["c", "loose file c", "project"],
    ]);
    expect(diagnostics).toEqual([
      { type: "warning", message: "body is empty", path: join(tmp.dir, "user/broken/SKILL.md") },
    ]);
  });

  it("drops a skill whose tool dependency exists nowhere; its own tools.json tools count", () => {
    writeTree(tmp.dir, {
      "p/needs/SKILL.md": md("needs", "d", "B", "tools: [ghost]\n"),
      "p/own/SKILL.md": md("own", "d", "B", "tools: [t, read]\n"),
      "p/own/tools.json": JSON.stringify(toolSpec(["node", "x.mjs"])),
    });
    const { skills } = loadCatalog({ project: join(tmp.dir, "p") });
    const { kept, diagnostics } = dropUnsatisfiable(skills, new Set(["read"]), (s, t) => `${s.meta.name} needs ${t}`);
    expect(kept.map((s) => s.meta.name)).toEqual(["own"]);
    expect(diagnostics).toEqual([
      { type: "warning", message: "needs needs ghost", path: join(tmp.dir, "p/needs/SKILL.md") },
    ]);
  });
});

describe("activation", () => {
  it("keeps the order of first load and replaces, never duplicates, a reloaded skill", () => {
    const active = new ActiveSkills();
    active.activate("a", "A1");
    active.activate("b", "B1");
    active.activate("a", "A2");
    expect(active.entries()).toEqual([
      { name: "a", rendered: "A2" },
      { name: "b", rendered: "B1" },
    ]);
  });

  it("fills $ARGUMENTS and {{arguments}} and lists the allowed tools", () => {
    writeTree(tmp.dir, {
      "s/SKILL.md": md("s", "d", "Go to $ARGUMENTS; repeat {{arguments}}.", "tools: [read, bash]\n"),
    });
    const skill = parseSkillPackage(join(tmp.dir, "s/SKILL.md"), "project");
    expect(renderInvocation(skill, skill.body, "prod", texts)).toBe(
      "Go to prod; repeat prod.\n\nAllowed tools: read, bash",
    );
    expect(renderEnvironment([], { cwd: "/w", model: "m" }, texts)).toBe(
      "Environment:\n- Working directory: /w\n- Model: m",
    );
  });

  it("load_skill: unknown_skill for a missing name; re-reads the body, falling back to the start-up copy", async () => {
    const path = join(tmp.dir, "s/SKILL.md");
    writeTree(tmp.dir, { "s/SKILL.md": md("s", "d", "first") });
    const skill = parseSkillPackage(path, "user");
    const active = new ActiveSkills();
    const tool = createLoadSkillTool({
      lookup: (n) => (n === "s" ? skill : undefined),
      active,
      texts,
      registerTool: () => true,
    });
    const unknown = await tool.execute({ name: "nope" }, { cwd: tmp.dir, env: process.env });
    expect(unknown).toEqual({
      isError: true,
      content: '{"ok":false,"tool":"load_skill","code":"unknown_skill","message":"unknown skill \\"nope\\""}',
    });

    writeFileSync(path, md("s", "d", "edited"));
    await tool.execute({ name: "s" }, { cwd: tmp.dir, env: process.env });
    expect(active.entries()).toEqual([{ name: "s", rendered: "edited" }]);

    writeFileSync(path, "---\nname: s\n---\n"); // unusable now: the start-up copy is used
    await tool.execute({ name: "s" }, { cwd: tmp.dir, env: process.env });
    expect(active.entries()).toEqual([{ name: "s", rendered: "first" }]);
  });
});

describe("skill command tools", () => {
  function tool(script: string, limits?: Parameters<typeof createSkillTool>[1]): RuntimeTool {
    writeTree(tmp.dir, { "skill/run.mjs": script });
    return createSkillTool(
      {
        name: "t",
        description: "d",
        inputSchema: { type: "object" },
        command: [process.execPath, "run.mjs"],
        root: join(tmp.dir, "skill"),
      },
      limits,
    );
  }

  it("runs in the skill root with the arguments as JSON on stdin; stdout is the result", async () => {
    const t = tool('let s="";for await (const c of process.stdin) s+=c;console.log(process.cwd()+" "+s);');
    expect(await t.execute({ a: 1 }, { cwd: "/", env: process.env })).toEqual({
      content: `${join(tmp.dir, "skill")} {"a":1}`,
    });
  });

  it("stops a command at its timeout and cuts output at the limit", async () => {
    await expect(
      tool("setTimeout(() => {}, 10000);", { timeoutMs: 200, maxOutputBytes: 100 }).execute(
        {},
        { cwd: "/", env: process.env },
      ),
    ).rejects.toThrow("t timed out after 200 ms");
    const long = await tool('console.log("x".repeat(50)); console.log("y".repeat(50)); console.log("z");', {
      timeoutMs: 5000,
      maxOutputBytes: 60,
    }).execute({}, { cwd: "/", env: process.env });
    expect(long.content).toBe(`${"x".repeat(50)}\n\n[output cut at 60 bytes]`);
  });

  it("a non-zero exit is a failed tool result carrying stderr", async () => {
    await expect(
      tool('console.error("bad input"); process.exit(3);').execute({}, { cwd: "/", env: process.env }),
    ).rejects.toThrow("bad input\n\nt exited with code 3");
  });
});

describe("two system parts on the wire", () => {
  it("openai-completions sends the environment as a second system message, measured apart", () => {
    const model = {
      api: "openai-completions" as const,
      ref: "p/m",
      id: "m",
      baseUrl: "http://x",
      maxTokens: 10,
      reasoning: false,
    };
    const wire = openaiCompletions.buildRequest(
      model,
      { systemPrompt: "STABLE", environment: "ENV", messages: [{ role: "user", content: "hi" }], tools: [] },
      "loop",
    );
    const d = openaiCompletions.dissect(wire.body);
    expect(d.roles).toEqual(["system", "system", "user"]);
    expect(d.systemParts).toEqual(["STABLE", "ENV"]);
    const without = openaiCompletions.buildRequest(
      model,
      { systemPrompt: "STABLE", messages: [{ role: "user", content: "hi" }], tools: [] },
      "loop",
    );
    expect(openaiCompletions.dissect(without.body).roles).toEqual(["system", "user"]);
  });
});
