/** Registration order, activation and everything else the adapter registers, on real stub servers. */

import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildCacheEntry, computeConfigHash, writeCacheEntry } from "../../src/mcp/cache.js";
import { cleanupAdapters, ROOT, startAdapter, stubServer, tempDir } from "./adapter-harness.js";

afterEach(cleanupAdapters);

const probeStub = (extra: Record<string, unknown> = {}) => ({
  command: "node",
  args: ["dist/stub-mcp/probe-stub.js"],
  ...extra,
});

/** A first run fills the cache; the adapter under test then starts from it. */
async function fromCache(
  servers: Record<string, unknown>,
  settings: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
) {
  const first = await startAdapter({ servers });
  await first.shutdown();
  return startAdapter({ servers, settings, dir: first.dir, cache: "keep", env });
}

describe("registration order", () => {
  it("from a cache: mcpScript, direct tools, mcp", async () => {
    const adapter = await fromCache({ "probe-stub": probeStub({ directTools: true }) });
    expect(adapter.registry.registeredNames()).toEqual([
      "mcpScript",
      "probe-stub_stub_echo",
      "probe-stub_stub_time",
      "mcp",
    ]);
    expect(adapter.registry.get("probe-stub_stub_echo")!.parameters).toEqual({
      type: "object",
      properties: { value: { type: "string", description: "Value to echo" } },
      required: ["value"],
    });
  });

  it("on a fresh start the direct tools hot-load after mcp", async () => {
    const adapter = await startAdapter({
      servers: { "probe-stub": probeStub({ directTools: true }) },
      cache: "empty-file",
    });
    expect(adapter.registry.activeNames()).toEqual([
      "mcpScript",
      "mcp",
      "probe-stub_stub_echo",
      "probe-stub_stub_time",
    ]);
  });

  it("proxy servers with a valid cache get namespace tools after mcp, in config order; scriptMode false drops mcpScript", async () => {
    const adapter = await fromCache(
      { b: stubServer("b", {}, ["--name", "b"]), a: stubServer("a", {}, ["--name", "a"]) },
      { scriptMode: false },
    );
    expect(adapter.registry.activeNames()).toEqual(["mcp", "mcp__b", "mcp__a"]);
  });

  it("servers that normalize to the same namespace both go without one", async () => {
    const adapter = await fromCache({
      "x-y": stubServer("a", {}, ["--name", "x-y"]),
      x_y: stubServer("b", {}, ["--name", "x_y"]),
      a: stubServer("a", {}, ["--name", "a"]),
    });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp", "mcp__a"]);
  });

  it("a directTools list, toolPrefix none, and includeTools select and name the direct tools", async () => {
    const adapter = await fromCache({
      a: stubServer("a", { directTools: ["tool2"], toolPrefix: "none" }, ["--name", "a"]),
      b: stubServer("b", { directTools: true, includeTools: ["tool1"] }, ["--name", "b"]),
    });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "tool2", "b_tool1", "mcp"]);
  });

  it("MCP_DIRECT_TOOLS overrides the config per server and per tool", async () => {
    const adapter = await fromCache(
      { a: stubServer("a", {}, ["--name", "a"]), b: stubServer("b", { directTools: true }, ["--name", "b"]) },
      {},
      { MCP_DIRECT_TOOLS: "a/tool1" },
    );
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "a_tool1", "mcp", "mcp__b"]);
  });

  it("disableProxyTool drops mcp only when every direct server is cached and none is in search mode", async () => {
    const cached = await fromCache(
      { a: stubServer("a", { directTools: true }, ["--name", "a"]) },
      { disableProxyTool: true },
    );
    expect(cached.registry.activeNames()).toEqual(["mcpScript", "a_tool1", "a_tool2"]);
    const search = await fromCache(
      { a: stubServer("a", { directTools: "search" }, ["--name", "a"]) },
      { disableProxyTool: true },
    );
    expect(search.registry.activeNames()).toEqual(["mcpScript", "mcp"]);
  });
});

describe("search mode", () => {
  it("holds lazy tools inactive and activates what a search finds, once, with the prefix", async () => {
    const adapter = await fromCache({ a: stubServer("a", { directTools: "search" }, ["--name", "a"]) });
    expect(adapter.registry.registeredNames()).toEqual(["mcpScript", "a_tool1", "a_tool2", "mcp"]);
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp"]);
    const found = await adapter.call("mcp", { search: "tool2" });
    expect(found.content).toBe(
      'Activated as direct tools: a_tool2.\n\nFound 1 tool matching "tool2":\n\na_tool2\n  Call server a tool2\n\n  Shape:\n    { id: number; }',
    );
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp", "a_tool2"]);
    expect((await adapter.call("mcp", { search: "tool2" })).content.startsWith("Found 1 tool")).toBe(true);
    // A connect re-syncs the surface; the activated tool stays, the other stays held.
    await adapter.call("a_tool2", { id: 3 });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp", "a_tool2"]);
  });
});

describe("what else a server offers", () => {
  it("resources as read tools, instructions, prompts as commands", async () => {
    const adapter = await fromCache({ rich: stubServer("rich", { directTools: true }) });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "rich_rich_note", "rich_read_notes", "mcp"]);
    expect((await adapter.call("rich_read_notes", {})).content).toBe("RICH-RESOURCE-TEXT: three notes, all fixed.");
    expect((await adapter.call("mcp", { instructions: "rich" })).content).toBe(
      "rich instructions:\n\nRICH-INSTRUCTIONS: call rich_note before answering questions about the stub notes.",
    );
    const command = adapter.commands.get("mcp__rich__summarize")!;
    expect(await command.run("caching")).toBe("RICH-PROMPT: summarize caching in one line.");
    expect(await command.run("topic=tokens")).toBe("RICH-PROMPT: summarize tokens in one line.");
  });

  it("namespace tool without tool names what it needs; with tool it calls the server", async () => {
    const adapter = await fromCache({ "probe-stub": probeStub() });
    expect((await adapter.call("mcp__probe_stub", {})).content).toBe(
      "mcp__probe-stub requires a `tool` parameter naming the underlying MCP tool.",
    );
    expect(
      (await adapter.call("mcp__probe_stub", { tool: "probe-stub_stub_echo", args: { value: "N" } })).content,
    ).toBe("STUB_ECHO:N");
  });

  it("mcpScript calls tools by prefixed name, emits in order, and stops at its timeout", async () => {
    const adapter = await fromCache({ "probe-stub": probeStub() });
    const code =
      'const a = await tools["probe-stub_stub_echo"]({ value: "S1" });\nemit(a);\nemit({ n: 2 });\nemit(await tools.call("probe-stub_stub_echo", { value: "S2" }));';
    expect((await adapter.call("mcpScript", { code })).content).toBe('STUB_ECHO:S1\n{\n  "n": 2\n}\nSTUB_ECHO:S2');
    expect((await adapter.call("mcpScript", { code: "return 40 + 2;" })).content).toBe("42");
    expect(await adapter.call("mcpScript", { code: "await new Promise(() => {});", timeoutMs: 50 })).toEqual({
      content: "Script stopped: it was still running after 50 ms.",
      isError: true,
    });
    expect(await adapter.call("mcpScript", { code: "while (true) {}", timeoutMs: 50 })).toEqual({
      content: "Script stopped: it was still running after 50 ms.",
      isError: true,
    });
    expect(await adapter.call("mcpScript", { code: "await tools.nope_tool({});" })).toMatchObject({
      content: expect.stringMatching(/^Script failed: Tool "nope_tool" not found\./),
      isError: true,
    });
  });
});

describe("lifecycle", () => {
  it("eager servers connect at start; lazy ones on first use and close when idle", async () => {
    const adapter = await startAdapter({
      servers: {
        e: stubServer("a", { lifecycle: "eager" }, ["--name", "e"]),
        l: stubServer("b", { idleTimeout: 0.005 }, ["--name", "l"]),
      },
      cache: "empty-file",
    });
    const connects = () => adapter.events.filter((e) => e.type === "mcp_connect").map((e) => e.data.server);
    expect(connects()).toEqual(["e"]);
    expect((await adapter.call("mcp", { tool: "l_tool2", args: { count: 1 } })).content).toBe("B_TOOL2:1");
    expect(connects()).toEqual(["e", "l"]);
    const disconnects = () => adapter.events.filter((e) => e.type === "mcp_disconnect").map((e) => e.data);
    await adapter.until(() => disconnects().length > 0);
    expect(disconnects()).toEqual([{ server: "l", reason: "idle" }]);
  });
});

describe("cache entries the adapter will not use", () => {
  const server = stubServer("a", {}, ["--name", "a"]);
  const tools = [{ name: "tool1", inputSchema: { type: "object", properties: {} } }];
  const cases: [string, Partial<Parameters<typeof buildCacheEntry>[0]>][] = [
    ["a hash mismatch", { configHash: "0".repeat(64) }],
    ["an entry older than 7 days", { cachedAt: Date.now() - 8 * 24 * 3600 * 1000 }],
    ["ttlMs 0", { ttlMs: 0 }],
  ];
  for (const [label, change] of cases) {
    it(`${label} counts as no cache: no namespace tool, nothing to search, nothing connects`, async () => {
      const dir = tempDir();
      const entry = {
        configHash: computeConfigHash(server, process.env, ROOT),
        tools,
        resources: [],
        cachedAt: Date.now(),
        ...change,
      };
      writeCacheEntry(join(dir, "mcp-cache.json"), "a", buildCacheEntry(entry));
      const adapter = await startAdapter({ servers: { a: server }, dir, cache: "keep" });
      expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp"]);
      expect((await adapter.call("mcp", { search: "tool1" })).content).toBe('No tools matching "tool1"');
      expect(adapter.events.filter((e) => e.type === "mcp_connect")).toEqual([]);
    });
  }
});
