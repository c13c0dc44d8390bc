/**
 * Where the context goes: each request's tokens by source, counted at capture. Checked on the shipped
 * probes p2-direct and p2-proxy (the same MCP server sent two ways), on bodies real agents sent, and on
 * an Anthropic body whose turns mix thinking, calls and results of two tools.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contextSources, toolSource } from "../../src/capture/context-sources.js";
import { loadTokenCounter } from "../../src/capture/tokens.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
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

async function measured(api: WireApi, body: string, url?: string) {
  const counter = await loadTokenCounter();
  const d = codecFor(api).dissect(body, url);
  const counts = counter.countRequestTokens(d);
  return { counts, ...contextSources(d, counts, counter) };
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
