import { describe, expect, it } from "vitest";
import { parseProxyDescription, renderProxyDescription } from "../../src/mcp/proxy-description.js";
import { splitGuidelines } from "../../src/profile-import/guidelines.js";
import { inferTemplate } from "../../src/profile-import/system-template.js";
import { parameterDescriptions, sentTool } from "../../src/profile-import/wire-tool.js";

describe("the gateway description read back into its texts", () => {
  const texts = {
    snippet: "s",
    intro: "Line one.\nLine two.",
    searchModeLine: "Some servers are searched.",
    disabledLine: "Off for now: {servers}",
    usage: ["a()   first", "b()   second"],
    precedence: "The first mode wins.",
    parameters: {},
    actionUnsupported: "",
  };

  it("with the search-mode and disabled lines, every text comes back", () => {
    const description = renderProxyDescription(texts, { enabled: ["x", "y"], searchMode: true, disabled: ["z-1"] });
    const { snippet, parameters, actionUnsupported, ...sent } = texts;
    expect(parseProxyDescription(description)).toEqual(sent);
  });

  it("without servers the intro is everything before Usage:, and a description without Usage: is not the gateway's", () => {
    const description = renderProxyDescription(texts, { enabled: [], searchMode: false, disabled: [] });
    expect(parseProxyDescription(description)).toEqual({
      intro: texts.intro,
      usage: texts.usage,
      precedence: texts.precedence,
    });
    expect(parseProxyDescription("Calls things.")).toBeUndefined();
  });
});

describe("guideline lines split between tools and closing lines", () => {
  it("a line goes to the tool it names, unnamed lines stay with the tool before, the tail is closing", () => {
    const split = splitGuidelines(
      [
        "Use the shell to look around.",
        "Prefer read to cat.",
        "Match text exactly.",
        "Use write for new files.",
        "Be brief.",
      ],
      ["read", "bash", "edit", "write"],
    );
    expect(split.fileOps).toEqual({ variant: "bash", line: "Use the shell to look around." });
    expect([...split.perTool]).toEqual([
      ["read", ["Prefer read to cat.", "Match text exactly."]],
      ["write", ["Use write for new files."]],
    ]);
    expect(split.closing).toEqual(["Be brief."]);
  });

  it("a line naming two tools goes to the earlier one in tool order; a search tool means no file-operations line", () => {
    const split = splitGuidelines(
      ["Use write, not read, for new files.", "Then read it."],
      ["read", "bash", "write", "ls"],
    );
    expect(split.fileOps).toBeUndefined();
    expect([...split.perTool]).toEqual([["read", ["Use write, not read, for new files.", "Then read it."]]]);
  });
});

describe("a system prompt made a template", () => {
  it("a prompt without a tool list keeps its text; cwd and date lines become placeholders", () => {
    const prompt = inferTemplate("Be helpful.\nToday's date: 2026-12-03\nThe working directory: /home/u/proj", [
      "Bash",
    ]);
    expect(prompt.template).toEqual([
      "Be helpful.",
      "Today's date: {DATE}{APPEND}{CONTEXT}{SKILLS}",
      "The working directory: {CWD}",
    ]);
    expect(prompt.notes).toContain(
      "no `- name: snippet` list of the request's tools: the tool list and guidelines stay as sent",
    );
  });

  it("a literal placeholder in the prompt is reported, since the runtime would fill it in", () => {
    expect(inferTemplate("Write {CWD} literally.", []).notes[0]).toBe(
      "the prompt holds a literal {CWD}, which the runtime fills in",
    );
  });
});

describe("tool definitions of the three wire APIs", () => {
  const parameters = {
    type: "object",
    properties: {
      edits: { type: "array", description: "E", items: { properties: { oldText: { description: "O" } } } },
    },
  };

  it("nested, flat, input_schema and Gemini's parametersJsonSchema forms give the same texts", () => {
    const forms = [
      { type: "function", function: { name: "edit", description: "D", parameters } },
      { type: "function", name: "edit", description: "D", parameters },
      { name: "edit", description: "D", input_schema: parameters, cache_control: { type: "ephemeral" } },
      { name: "edit", description: "D", parametersJsonSchema: parameters },
    ];
    for (const form of forms)
      expect(sentTool(JSON.stringify(form))).toEqual({ name: "edit", description: "D", parameters });
    expect(parameterDescriptions(parameters)).toEqual({ edits: "E", oldText: "O" });
  });
});
