import { afterEach, describe, expect, it } from "vitest";
import { lineDelta } from "../../src/probes/expect.js";
import type { Profile, PromptSections } from "../../src/runtime/profile.js";
import { buildSystemPrompt } from "../../src/runtime/system-prompt.js";
import { createBuiltinTools } from "../../src/runtime/tools/builtin.js";
import type { RuntimeTool } from "../../src/runtime/types.js";
import { extensionTool, profile, removeTempDirs, scriptedAgent, systemText } from "./harness.js";

afterEach(removeTempDirs);

// The default profile has pi's sections, not a template.
const sp = profile.systemPrompt as PromptSections;
const builtins = createBuiltinTools(profile);
const tools = (...names: string[]) => names.map((name) => builtins.find((t) => t.name === name)!);
const snippet = (name: string) => profile.tools[name]!.snippet!;
const guidelinesOf = (prompt: string) => prompt.split("Guidelines:\n")[1]!.split("\n\n")[0]!.split("\n");
const toolLinesOf = (prompt: string) => prompt.split("Available tools:\n")[1]!.split("\n\n")[0]!.split("\n");
const input = { cwd: "/work/proj", packageDir: "/opt/pkg" };

describe("system prompt layout (pi-runtime.md §3.1)", () => {
  it("has pi's section order: intro, tools, custom-tools sentence, guidelines, docs, then the cwd without a trailing newline", () => {
    const prompt = buildSystemPrompt(profile, tools("read", "bash", "edit", "write"), {
      cwd: "C:\\work\\proj",
      packageDir: "/opt/pkg",
    });
    const guidelines = [
      sp.fileOpsGuideline.bash,
      ...profile.tools.read!.guidelines!,
      ...profile.tools.bash!.guidelines!,
      ...profile.tools.edit!.guidelines!,
      ...profile.tools.write!.guidelines!,
      ...sp.closingGuidelines,
    ];
    const docs = [sp.docsHeader, ...sp.docsBullets.map((b) => `- ${b.replaceAll("{PKG}", "/opt/pkg")}`)].join("\n");
    expect(prompt).toBe(
      `${sp.intro}\n\n` +
        `Available tools:\n- read: ${snippet("read")}\n- bash: ${snippet("bash")}\n- edit: ${snippet("edit")}\n- write: ${snippet("write")}\n\n` +
        `${sp.customTools}\n\n` +
        `Guidelines:\n${guidelines.map((g) => `- ${g}`).join("\n")}\n\n` +
        docs +
        `\nCurrent working directory: C:/work/proj`,
    );
  });

  it("the docs section is a header and 7 bullets with {PKG} replaced by the package folder", () => {
    const prompt = buildSystemPrompt(profile, tools("read"), input);
    const docs = prompt
      .slice(prompt.indexOf(sp.docsHeader), prompt.indexOf("\nCurrent working directory:"))
      .split("\n");
    expect(docs[0]).toBe(sp.docsHeader);
    expect(docs.slice(1)).toHaveLength(7);
    expect(docs.slice(1).every((line) => line.startsWith("- "))).toBe(true);
    expect(docs[1]).toBe("- Main documentation: /opt/pkg/README.md");
    expect(prompt).not.toContain("{PKG}");
  });

  it("lists each active tool with a snippet as `- name: snippet`, whitespace runs collapsed, in active order", () => {
    const spaced = extensionTool("spaced", { promptSnippet: "  Does\n   several\tthings  " });
    const silent = extensionTool("silent", { promptSnippet: undefined });
    const blank = extensionTool("blank", { promptSnippet: " \n " });
    const prompt = buildSystemPrompt(profile, [...tools("write", "read"), silent, spaced, blank], input);
    expect(toolLinesOf(prompt)).toEqual([
      `- write: ${snippet("write")}`,
      `- read: ${snippet("read")}`,
      "- spaced: Does several things",
    ]);
  });

  it("no listed tool gives the single line (none)", () => {
    expect(toolLinesOf(buildSystemPrompt(profile, [], input))).toEqual(["(none)"]);
    expect(
      toolLinesOf(buildSystemPrompt(profile, [extensionTool("quiet", { promptSnippet: undefined })], input)),
    ).toEqual(["(none)"]);
  });
});

describe("guidelines (pi-runtime.md §3.1)", () => {
  const closing = sp.closingGuidelines.map((g) => `- ${g}`);

  it("the file-operations line appears only when a shell is active and none of grep, find, ls is", () => {
    const first = (...names: string[]) => guidelinesOf(buildSystemPrompt(profile, tools(...names), input))[0];
    expect(first("bash")).toBe(`- ${sp.fileOpsGuideline.bash}`);
    expect(first("powershell")).toBe(`- ${sp.fileOpsGuideline.powershell}`);
    expect(first("bash", "powershell")).toBe(`- ${sp.fileOpsGuideline.both}`);
    for (const search of ["grep", "find", "ls"])
      expect(guidelinesOf(buildSystemPrompt(profile, tools("bash", search), input))).not.toContain(
        `- ${sp.fileOpsGuideline.bash}`,
      );
    expect(guidelinesOf(buildSystemPrompt(profile, tools("read"), input))).toEqual([
      `- ${profile.tools.read!.guidelines![0]}`,
      ...closing,
    ]);
  });

  it("each active tool's guidelines follow in tool order, trimmed, duplicates kept once at their first place, closing lines last", () => {
    const a = extensionTool("a", { promptGuidelines: ["  Shared line.  ", "Only a."] });
    const b = extensionTool("b", { promptGuidelines: ["Shared line.", "", "Only b."] });
    expect(guidelinesOf(buildSystemPrompt(profile, [a, b], input))).toEqual([
      "- Shared line.",
      "- Only a.",
      "- Only b.",
      ...closing,
    ]);
    // bash and powershell carry the same line; it is kept once.
    const shells = guidelinesOf(buildSystemPrompt(profile, tools("bash", "powershell"), input));
    expect(shells).toEqual([`- ${sp.fileOpsGuideline.both}`, `- ${profile.tools.bash!.guidelines![0]}`, ...closing]);
  });
});

describe("append, context and skills tails (pi-runtime.md §3.1, §3.2)", () => {
  const context = [
    { path: "/agent/AGENTS.md", content: "global rules" },
    { path: "/work/proj/AGENTS.md", content: "project rules\n" },
  ];
  const contextBlock =
    "\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n" +
    '<project_instructions path="/agent/AGENTS.md">\nglobal rules\n</project_instructions>\n\n' +
    '<project_instructions path="/work/proj/AGENTS.md">\nproject rules\n\n</project_instructions>\n\n' +
    "</project_context>\n";
  const skillsBlock = "\n\nSKILLS BLOCK";

  it("append texts, project context and the skills block follow the docs in that order, before the cwd line", () => {
    const prompt = buildSystemPrompt(profile, tools("read"), {
      ...input,
      append: ["First.", "Second."],
      contextFiles: context,
      skillsBlock,
    });
    const tail = prompt.slice(prompt.indexOf(sp.docsBullets.at(-1)!) + sp.docsBullets.at(-1)!.length);
    expect(tail).toBe(`\n\nFirst.\n\nSecond.${contextBlock}${skillsBlock}\nCurrent working directory: /work/proj`);
  });

  it("no append texts and no context files add nothing", () => {
    const prompt = buildSystemPrompt(profile, tools("read"), { ...input, append: [], contextFiles: [] });
    expect(prompt.endsWith(`${sp.docsBullets.at(-1)!}\nCurrent working directory: /work/proj`)).toBe(true);
  });

  it("a custom prompt replaces everything before the append texts and ends with a newline", () => {
    const prompt = buildSystemPrompt(profile, tools("read"), {
      ...input,
      custom: "You are terse.",
      append: ["More."],
      contextFiles: context,
      skillsBlock,
    });
    expect(prompt).toBe(
      `You are terse.\n\nMore.${contextBlock}${skillsBlock}\nCurrent working directory: /work/proj\n`,
    );
  });
});

describe("the system prompt follows the active set (pi-runtime.md §6)", () => {
  it("setActiveTools rebuilds the prompt in the same step: the next request's system message loses exactly the tool's line", async () => {
    let seenInSameStep = "";
    const stamp: RuntimeTool = extensionTool("stamp", { promptSnippet: "Stamp   things" });
    const { agent, bodies } = await scriptedAgent([{ call: "hide_stamp" }, { text: "done" }], {
      extensions: [
        (api) => {
          api.registerTool(stamp);
          api.registerTool(
            extensionTool("hide_stamp", {
              promptSnippet: undefined,
              execute: async () => {
                api.setActiveTools(api.getActiveTools().filter((name) => name !== "stamp"));
                seenInSameStep = api.getSystemPrompt();
                return { content: "hidden" };
              },
            }),
          );
        },
      ],
    });
    const before = agent.currentSystemPrompt();
    await agent.prompt("go");
    expect(systemText(bodies[0]!)).toBe(before);
    expect(lineDelta(systemText(bodies[0]!), systemText(bodies[1]!))).toEqual({
      added: [],
      removed: ["- stamp: Stamp things"],
    });
    expect(seenInSameStep).toBe(systemText(bodies[1]!));
    expect(bodies[1]!.tools!.map((t) => t.function.name)).not.toContain("stamp");
  });
});

describe("a template system prompt (what profile import writes)", () => {
  const templated = (template: string[], guidelines: Partial<Profile["systemPrompt"]> = {}): Profile => ({
    ...profile,
    systemPrompt: { template, fileOpsGuideline: sp.fileOpsGuideline, closingGuidelines: ["Be brief."], ...guidelines },
  });

  it("fills every placeholder: tool lines, guidelines, package folder, tail parts, cwd and date", () => {
    const prompt = buildSystemPrompt(
      templated([
        "Tools:",
        "{TOOLS}",
        "Rules:",
        "{GUIDELINES}",
        "Docs in {PKG}/docs.{APPEND}{CONTEXT}{SKILLS}",
        "cwd={CWD} on {DATE}",
      ]),
      tools("read"),
      { ...input, append: ["More."], skillsBlock: "\n\nSKILLS", date: "2030-01-02" },
    );
    expect(prompt).toBe(
      `Tools:\n- read: ${snippet("read")}\nRules:\n- ${profile.tools.read!.guidelines![0]}\n- Be brief.\n` +
        "Docs in /opt/pkg/docs.\n\nMore.\n\nSKILLS\ncwd=/work/proj on 2030-01-02",
    );
  });

  it("a filled-in text is not read again: a cwd that reads {PKG} stays as it is", () => {
    expect(buildSystemPrompt(templated(["{CWD}|{PKG}"]), [], { cwd: "/a/{PKG}", packageDir: "/p" })).toBe(
      "/a/{PKG}|/p",
    );
  });

  it("an empty guideline text adds no line (a variant the import never saw)", () => {
    const empty = { bash: "", powershell: "", both: "" };
    const prompt = buildSystemPrompt(templated(["{GUIDELINES}"], { fileOpsGuideline: empty }), tools("bash"), input);
    expect(prompt).toBe(`- ${profile.tools.bash!.guidelines![0]}\n- Be brief.`);
  });
});
