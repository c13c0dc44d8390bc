/**
 * Where the context goes: each request's tokens by source, counted at capture. Checked on the shipped
 * probes p2-direct and p2-proxy (the same MCP server sent two ways), on bodies real agents sent (Claude
 * Code's with its tool search on among them), and on an Anthropic body whose turns mix thinking, calls
 * and results of two tools. Images and documents: context-media.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contextSources, toolSource } from "../../src/capture/context-sources.js";
import { type InstructionFile, readInstructionFiles } from "../../src/capture/instruction-files.js";
import { type KnownText, knownTexts } from "../../src/capture/known-texts.js";
import { loadTokenCounter } from "../../src/capture/tokens.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
import { readAgentSkills } from "../../src/skills/agent-skills.js";
import { sharedRun } from "../fixtures/shared-runs.js";
import { jsonl } from "./http-harness.js";

const sum = (sources: Record<string, number>) => Object.values(sources).reduce((a, b) => a + b, 0);

async function records(probe: string): Promise<RequestRecord[]> {
  const run = await sharedRun(probe);
  return jsonl<RequestRecord>(join(run.dir, "requests.jsonl"));
}

/** The tokens a record's tool definitions of these names cost. */
const toolCost = (record: RequestRecord, names: string[]) =>
  record.tools.reduce((total, name, i) => total + (names.includes(name) ? record.toolTokens![i]! : 0), 0);

describe("p2-direct vs p2-proxy: the probe-stub server's cost per request", () => {
  it("every record's sources add up to its total", async () => {
    for (const record of [...(await records("p2-direct")), ...(await records("p2-proxy"))]) {
      expect(sum(record.sources!)).toBe(record.tokens!.total);
      expect(record.toolTokens).toHaveLength(record.tools.length);
      expect(sum(Object.fromEntries(record.toolTokens!.entries()))).toBe(record.tokens!.tools);
    }
  });

  it("direct: its two tools; proxy: its namespace tool; the same server, a different cost", async () => {
    const [direct, proxy] = [(await records("p2-direct"))[0]!, (await records("p2-proxy"))[0]!];
    const directCost = toolCost(direct, ["probe-stub_stub_echo", "probe-stub_stub_time"]);
    const proxyCost = toolCost(proxy, ["mcp__probe_stub"]);
    expect(direct.sources!["mcp:probe-stub"]).toBe(directCost);
    expect(proxy.sources!["mcp:probe-stub"]).toBe(proxyCost);
    expect(directCost).toBeGreaterThan(0);
    expect(proxyCost).not.toBe(directCost);
    // The adapter's gateway tools are sent alike in both, apart from any server.
    expect(direct.sources!["mcp-adapter"]).toBe(toolCost(direct, ["mcp", "mcpScript"]));
    expect(direct.sources!["mcp-adapter"]).toBe(proxy.sources!["mcp-adapter"]);
  });

  it("the results of the gateway's calls are the mcp tool's, growing turn by turn", async () => {
    const results = (await records("p2-direct")).map((r) => r.sources!["result:mcp"] ?? 0);
    expect(results[0]).toBe(0);
    for (let i = 1; i < results.length; i++) expect(results[i]!).toBeGreaterThan(results[i - 1]!);
  });
});

interface RealFixture {
  agent: string;
  requests: { path: string; body: string }[];
}

const realFixture = (name: string) =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, "test/fixtures/real-agents", name), "utf8")) as RealFixture;

async function measured(api: WireApi, body: string, url?: string, known: KnownText[] = []) {
  const counter = await loadTokenCounter();
  const d = codecFor(api).dissect(body, url);
  const counts = counter.countRequestTokens(d);
  return { counts, ...contextSources(d, counts, counter, known) };
}

describe("bodies real agents sent", () => {
  it("Codex 0.169: namespaces as sources, the call's output by the tool it answers", async () => {
    const fixture = realFixture("codex-0.169.0-default-model.json");
    const second = await measured("openai-responses", fixture.requests[1]!.body);
    expect(sum(second.sources)).toBe(second.counts.total);
    const toolSources = Object.keys(second.sources).filter((s) => s.startsWith("tools:"));
    expect(toolSources.sort()).toEqual(["tools:clock", "tools:collaboration", "tools:functions"]);
    expect(toolSources.reduce((t, s) => t + second.sources[s]!, 0)).toBe(second.counts.tools);
    expect(second.sources["result:list_agents"]).toBeGreaterThan(0);
    expect(second.sources["system[0]"]).toBe(second.counts.perSystemPart[0]);
  });

  it("Gemini CLI 0.61: sums equal totals, the side call without tools", async () => {
    const fixture = realFixture("gemini-cli-0.61.0.json");
    for (const request of fixture.requests) {
      const m = await measured("google-generative-ai", request.body, request.path);
      expect(sum(m.sources)).toBe(m.counts.total);
      expect(m.sources.history).toBe(m.counts.messages);
    }
    const main = await measured("google-generative-ai", fixture.requests[1]!.body, fixture.requests[1]!.path);
    expect(main.sources["tools:builtin"]).toBe(main.counts.tools);
  });

  it("Claude Code 2.1.328 with tool search: deferred tools cost nothing until loaded, names and loads are the server's", async () => {
    const fixture = realFixture("claude-code-2.1.328-tool-search.json");
    const counter = await loadTokenCounter();
    const [listed, loaded, called] = await Promise.all(
      fixture.requests.map((request) => measured("anthropic-messages", request.body)),
    );
    const toolsOf = (i: number) => codecFor("anthropic-messages").dissect(fixture.requests[i]!.body).tools;
    const definition = (i: number, name: string) => {
      const tool = toolsOf(i).find((t) => t.name === name)!;
      return counter.segmentTokens({ kind: "tools", text: tool.json });
    };
    for (const m of [listed!, loaded!, called!]) expect(sum(m.sources)).toBe(m.counts.total);

    // Request 1: the server's tools are only named in a message, one a line, for the search to find.
    const placeholder = toolsOf(0).findIndex((t) => t.name === "DeferredToolPlaceholder");
    expect(toolsOf(0)[placeholder]!.deferred).toBe(true);
    expect(listed!.toolTokens[placeholder]).toBe(0);
    expect(listed!.counts.tools).toBe(
      sum(Object.fromEntries(toolsOf(0).map((t, i) => [i, i === placeholder ? 0 : definition(0, t.name)]))),
    );
    const names = counter.countText("\nmcp__probe-stub__stub_echo") + counter.countText("\nmcp__probe-stub__stub_time");
    expect(listed!.sources["mcp:probe-stub"]).toBeGreaterThanOrEqual(names - 2);
    expect(listed!.sources["mcp:probe-stub"]).toBeLessThanOrEqual(names + 2);

    // Requests 2 and 3: ToolSearch's result loads stub_echo by a tool_reference; its definition, sent
    // deferred, is now in context and counts, and so does the reference; the placeholder still does not.
    const echo = toolsOf(1).findIndex((t) => t.name === "mcp__probe-stub__stub_echo");
    expect(toolsOf(1)[echo]!.deferred).toBe(true);
    expect(loaded!.toolTokens[echo]).toBe(definition(1, "mcp__probe-stub__stub_echo"));
    expect(loaded!.sources["mcp:probe-stub"]).toBeGreaterThan(
      listed!.sources["mcp:probe-stub"]! + loaded!.toolTokens[echo]!,
    );
    expect(loaded!.sources["result:ToolSearch"]).toBeGreaterThan(0);
    expect(called!.sources["result:mcp__probe-stub__stub_echo"]).toBeGreaterThan(0);
    expect(called!.sources["mcp:probe-stub"]).toBe(loaded!.sources["mcp:probe-stub"]);
  });
});

describe("a turn of several sources is shared out by each part's own count", () => {
  const body = JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    system: [{ type: "text", text: "You help." }],
    tools: [
      { name: "Read", description: "Read a file.", input_schema: { type: "object" } },
      { name: "mcp__github__get_issue", description: "An issue.", input_schema: { type: "object" } },
    ],
    messages: [
      { role: "user", content: "Look at issue 7 and README.md." },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should read both. ".repeat(40), signature: "sig" },
          { type: "tool_use", id: "toolu_1", name: "Read", input: { path: "README.md" } },
          { type: "tool_use", id: "toolu_2", name: "mcp__github__get_issue", input: { n: 7 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "# Readme\n".repeat(5) },
          { type: "tool_result", tool_use_id: "toolu_2", content: "Issue 7: the build is slow. ".repeat(30) },
        ],
      },
    ],
  });

  it("results by the tool whose call they answer, thinking as reasoning, the sum exact", async () => {
    const m = await measured("anthropic-messages", body);
    expect(sum(m.sources)).toBe(m.counts.total);
    expect(m.sources["tools:builtin"]).toBe(m.toolTokens[0]);
    expect(m.sources["mcp:github"]).toBe(m.toolTokens[1]);
    expect(m.sources["result:mcp__github__get_issue"]).toBeGreaterThan(m.sources["result:Read"]!);
    expect(m.sources["result:Read"]).toBeGreaterThan(0);
    expect(m.sources.reasoning).toBeGreaterThan(0);
    expect(m.sources.history! + m.sources.reasoning!).toBe(m.counts.perMessage[0]! + m.counts.perMessage[1]!);
    expect(m.sources["result:Read"]! + m.sources["result:mcp__github__get_issue"]!).toBe(m.counts.perMessage[2]);
  });
});

describe("instruction files the agent inlined", () => {
  const claudeMd = "# Project rules\n\nRun the tests with `npm test`. Never edit generated files.\n".repeat(6).trim();
  const agentsMd = "Keep functions short; name things for what they are. ".repeat(8).trim();
  const files: InstructionFile[] = [
    { name: "CLAUDE.md", text: claudeMd },
    { name: "../AGENTS.md", text: agentsMd },
  ];
  // Claude Code puts CLAUDE.md in a reminder block of the first user turn; here AGENTS.md rides in the system prompt.
  const body = JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    system: [
      { type: "text", text: "You are a coding agent." },
      { type: "text", text: `Follow these.\n\n${agentsMd}\n\nBe brief.` },
    ],
    messages: [
      {
        role: "user",
        content: [
          {
            type: "text",
            text: `<system-reminder>\nContents of /w/CLAUDE.md (project instructions):\n\n${claudeMd}\n</system-reminder>`,
          },
          { type: "text", text: "Fix the failing test." },
        ],
      },
    ],
  });

  it("each file is a source of its own, taken out of the system part and the turn that held it", async () => {
    const plain = await measured("anthropic-messages", body);
    const m = await measured("anthropic-messages", body, undefined, knownTexts(files, []));
    expect(sum(m.sources)).toBe(m.counts.total);
    expect(m.sources["instructions:CLAUDE.md"]).toBeGreaterThan(100);
    expect(m.sources["instructions:../AGENTS.md"]).toBeGreaterThan(50);
    // What the files took came out of the part and the turn that held them, nothing else.
    expect(m.sources["instructions:../AGENTS.md"]! + m.sources["system[1]"]!).toBe(plain.sources["system[1]"]);
    expect(m.sources["instructions:CLAUDE.md"]! + m.sources.history!).toBe(plain.sources.history);
    expect(m.sources["system[0]"]).toBe(plain.sources["system[0]"]);
    expect(m.sources["instructions:CLAUDE.md"]).toBeGreaterThan(m.sources.history!);
  });

  it("a file the request does not hold is no source", async () => {
    const m = await measured("anthropic-messages", body, undefined, [
      { source: "instructions:GEMINI.md", text: "Not in this body at all, anywhere." },
    ]);
    expect(Object.keys(m.sources).some((s) => s.startsWith("instructions:"))).toBe(false);
  });

  it("read from the working folder and its parents, nearest first, named from the working folder", () => {
    const root = mkdtempSync(join(tmpdir(), "pp-instructions-"));
    try {
      const work = join(root, "repo", "pkg");
      mkdirSync(join(work, ".claude"), { recursive: true });
      writeFileSync(join(work, "CLAUDE.md"), `\n${claudeMd}\n\n`);
      writeFileSync(join(work, ".claude", "CLAUDE.md"), agentsMd);
      writeFileSync(join(root, "repo", "AGENTS.md"), agentsMd);
      writeFileSync(join(root, "repo", "GEMINI.md"), "short");
      mkdirSync(join(root, "repo", "CLAUDE.local.md"));
      const found = readInstructionFiles(work).filter((f) => !f.name.startsWith("../../.."));
      expect(found).toEqual([
        { name: "CLAUDE.md", text: claudeMd },
        { name: join(".claude", "CLAUDE.md"), text: agentsMd },
        { name: join("..", "AGENTS.md"), text: agentsMd },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("skills: their index entries and their loaded bodies", () => {
  const skill = {
    name: "release-notes",
    description: "Write release notes from the merged pull requests of a tag.",
    body: "# Release notes\n\nList every merged pull request since the last tag, grouped by label.\n".repeat(8).trim(),
  };
  const other = {
    name: "unused-skill",
    description: "A skill this session never loads at all.",
    body: "x".repeat(400),
  };
  // As Claude Code sends them: the index in a reminder of the first turn, the body in the Skill tool's turn.
  const body = JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    tools: [{ name: "Skill", description: "Load a skill.", input_schema: { type: "object" } }],
    messages: [
      {
        role: "user",
        content: [
          {
            type: "text",
            text: `<system-reminder>Skills:\n- ${skill.name}: ${skill.description}\n- ${other.name}: ${other.description}\n</system-reminder>`,
          },
          { type: "text", text: "Write the notes for v2." },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "Skill", input: { skill: skill.name } }],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: `Launching skill: ${skill.name}` },
          { type: "text", text: `Base directory for this skill: /w/.claude/skills/release-notes\n\n${skill.body}` },
        ],
      },
    ],
  });

  it("each skill's index entry and its loaded body are sources of their own, the sum exact", async () => {
    const plain = await measured("anthropic-messages", body);
    const m = await measured("anthropic-messages", body, undefined, knownTexts([], [skill, other]));
    expect(sum(m.sources)).toBe(m.counts.total);
    expect(m.sources[`skill:${skill.name}`]).toBeGreaterThan(100);
    expect(m.sources[`skill-index:${skill.name}`]).toBeGreaterThan(5);
    expect(m.sources[`skill-index:${other.name}`]).toBeGreaterThan(5);
    expect(m.sources[`skill:${other.name}`]).toBeUndefined();
    // Taken from the turns that held them: history and the Skill tool's result, nothing else.
    const taken = ["skill:", "skill-index:"].flatMap((p) => Object.keys(m.sources).filter((s) => s.startsWith(p)));
    const moved = taken.reduce((t, s) => t + m.sources[s]!, 0);
    expect(m.sources.history! + m.sources["result:Skill"]! + moved).toBe(
      plain.sources.history! + plain.sources["result:Skill"]!,
    );
  });

  it("read from .claude/skills (and the other agents' folders) of the working folder, its parents and home", () => {
    const root = mkdtempSync(join(tmpdir(), "pp-skills-"));
    try {
      const work = join(root, "repo");
      const home = join(root, "home");
      const write = (dir: string, name: string, description: string) => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(
          join(dir, "SKILL.md"),
          `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nDo it well.\n`,
        );
      };
      write(join(work, ".claude", "skills", "one"), "one", "The first skill, in the project.");
      write(join(root, ".agents", "skills", "two"), "two", "The second skill, a folder above.");
      write(join(home, ".claude", "skills", "one"), "one", "The user's skill of the same name loses.");
      write(join(home, ".gemini", "skills", "three"), "three", "The third skill, the user's.");
      const found = readAgentSkills(work, home).filter((s) => ["one", "two", "three"].includes(s.name));
      expect(found).toEqual([
        { name: "one", description: "The first skill, in the project.", body: "# one\n\nDo it well." },
        { name: "two", description: "The second skill, a folder above.", body: "# two\n\nDo it well." },
        { name: "three", description: "The third skill, the user's.", body: "# three\n\nDo it well." },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("a message sent again is worked out once, its results resolved in each request", () => {
  const results = {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_9", content: "line\n".repeat(40) },
      { type: "text", text: "Go on." },
    ],
  };
  const call = (name: string) => ({
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_9", name, input: {} }],
  });
  const bodyCalling = (name: string) =>
    JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi." }, call(name), results],
    });

  it("the same result message is the tool's its request called, as when it was first seen", async () => {
    const [read, bash, readAgain] = [
      await measured("anthropic-messages", bodyCalling("Read")),
      await measured("anthropic-messages", bodyCalling("Bash")),
      await measured("anthropic-messages", bodyCalling("Read")),
    ];
    expect(read.sources["result:Read"]).toBeGreaterThan(0);
    expect(bash.sources["result:Bash"]).toBe(read.sources["result:Read"]);
    expect(bash.sources["result:Read"]).toBeUndefined();
    expect(readAgain.sources).toEqual(read.sources);
    expect(sum(bash.sources)).toBe(bash.counts.total);
  });
});

describe("toolSource", () => {
  it.each([
    ["mcp__github__get_issue", [], "mcp:github"],
    ["mcp__probe_stub", ["probe-stub"], "mcp:probe-stub"],
    ["probe-stub_stub_echo", ["probe-stub"], "mcp:probe-stub"],
    ["read_file", ["probe-stub"], "tools:builtin"],
    ["mcp", [], "mcp-adapter"],
    ["functions.exec", [], "tools:functions"],
    ["mcp:remote", [], "mcp:remote"],
  ] as const)("%s with servers %j → %s", (name, servers, source) => {
    expect(toolSource(name, servers)).toBe(source);
  });
});
