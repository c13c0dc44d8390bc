/** Each fault runs a real stub process (or a real HTTP server) and checks the exact text the model reads. */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { afterEach, describe, expect, it } from "vitest";
import { buildCacheEntry, computeConfigHash, writeCacheEntry } from "../../src/mcp/cache.js";
import { KEEP_ALIVE_TIMINGS } from "../../src/mcp/keep-alive.js";
import { readWireLog, WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";
import { cleanupAdapters, httpStub, ROOT, startAdapter, stubServer, tempDir } from "./adapter-harness.js";

afterEach(cleanupAdapters);

const NO_PARAMETERS = "\n\nExpected parameters:\n  (no parameters)";

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await run();
  return { value, ms: Date.now() - start };
}

describe("faults reach the model as the adapter's texts", () => {
  it("a server that crashes mid-call: Connection closed, then the next call respawns it", async () => {
    const adapter = await startAdapter({ servers: { faults: stubServer("faults") } });
    const crash = await adapter.call("mcp", { tool: "faults_crash", args: {} });
    expect(crash).toMatchObject({ content: `Failed to call tool: Connection closed${NO_PARAMETERS}`, isError: true });
    expect((await adapter.call("mcp", { tool: "faults_ok", args: {} })).content).toBe("FAULTS_OK");
    expect(adapter.events.filter((e) => e.type === "mcp_connect")).toHaveLength(2);
  });

  it("a server that hangs: Request timed out after requestTimeoutMs, and the server stays usable", async () => {
    const adapter = await startAdapter({ servers: { faults: stubServer("faults", { requestTimeoutMs: 300 }) } });
    const { value, ms } = await timed(() => adapter.call("mcp", { tool: "faults_hang", args: {} }));
    expect(value).toMatchObject({ content: `Failed to call tool: Request timed out${NO_PARAMETERS}`, isError: true });
    // requestTimeoutMs took effect, not the SDK's default: a bound a busy machine cannot reach by slowness alone.
    expect(ms).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC);
    expect((await adapter.call("mcp", { tool: "faults_ok", args: {} })).content).toBe("FAULTS_OK");
  });

  it("garbage on stdout, before initialize and during a call, is skipped", async () => {
    const adapter = await startAdapter({
      servers: { faults: stubServer("faults", {}, ["--fault", "garbage-on-start"]) },
    });
    expect((await adapter.call("mcp", { tool: "faults_garbage", args: {} })).content).toBe("FAULTS_AFTER_GARBAGE");
  });

  it("a server's own tool error keeps its text and gains the expected parameters", async () => {
    const adapter = await startAdapter({ servers: { faults: stubServer("faults") } });
    expect(await adapter.call("mcp", { tool: "faults_error", args: {} })).toMatchObject({
      content: `Error: FAULTS_TOOL_ERROR${NO_PARAMETERS}`,
      isError: true,
    });
  });

  it("a command that does not exist fails to connect, then sits in backoff; other servers keep working", async () => {
    const adapter = await startAdapter({
      servers: { ghost: { command: "no-such-command-payload-probe" }, a: stubServer("a", {}, ["--name", "a"]) },
      cache: "empty-file",
    });
    expect((await adapter.call("mcp", { tool: "ghost_x", args: {} })).content).toBe(
      'Failed to connect to "ghost": spawn no-such-command-payload-probe ENOENT',
    );
    expect((await adapter.call("mcp", { tool: "ghost_x", args: {} })).content).toMatch(
      /^Server "ghost" not available \(last failed \d+s ago\)$/,
    );
    expect((await adapter.call("mcp", { connect: "ghost" })).content).toBe(
      'Failed to connect to "ghost": spawn no-such-command-payload-probe ENOENT',
    );
    expect((await adapter.call("mcp", { tool: "a_tool1", args: { value: "v" } })).content).toBe("A_TOOL1:v");
    expect((await adapter.call("mcp", {})).content).toMatch(
      /^MCP: 1\/2 servers, 2 tools\n\n✗ ghost \(failed \d+s ago\)\n✓ a \(2 tools, legacy notification path\)\n\nmcp\(\{ server: "name" \}\) to list tools, mcp\(\{ search: "\.\.\." \}\) to search$/,
    );
  });

  it("a failed first-run bootstrap leaves the server in backoff without holding up start-up", async () => {
    const { value: adapter, ms } = await timed(() =>
      startAdapter({ servers: { ghost: { command: "no-such-command-payload-probe" } } }),
    );
    // Not held until the first reconnect: start-up took less than the backoff's first delay.
    expect(ms).toBeLessThan(KEEP_ALIVE_TIMINGS.reconnectMinMs);
    expect((await adapter.call("mcp", { search: "x", server: "ghost" })).content).toMatch(
      /^Server "ghost" not available \(last failed \d+s ago\)$/,
    );
  });

  it("an HTTP server answering 500 fails to connect with the server's text", async () => {
    const url = await httpStub("a", ["--http-fail", "500"]);
    const adapter = await startAdapter({ servers: { web: { url } }, cache: "empty-file" });
    expect((await adapter.call("mcp", { connect: "web" })).content).toBe(
      'Failed to connect to "web": Streamable HTTP error: Error POSTing to endpoint: stub-mcp: failing every request with 500',
    );
    expect((await adapter.call("mcp", { tool: "web_tool1", args: {} })).content).toMatch(
      /^Server "web" not available \(last failed \d+s ago\)$/,
    );
  });

  it("a direct tool whose server cannot start: the connect failure, then the direct tool's backoff text", async () => {
    const dir = tempDir();
    const ghost = { command: "no-such-command-payload-probe", directTools: true };
    const tools = [
      { name: "x", description: "A tool of a server that is gone.", inputSchema: { type: "object", properties: {} } },
    ];
    writeCacheEntry(
      join(dir, "mcp-cache.json"),
      "ghost",
      buildCacheEntry({
        configHash: computeConfigHash(ghost, process.env, ROOT),
        tools,
        resources: [],
        cachedAt: Date.now(),
      }),
    );
    const adapter = await startAdapter({ servers: { ghost }, dir, cache: "keep" });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "ghost_x", "mcp"]);
    expect((await adapter.call("ghost_x", {})).content).toBe(
      'Failed to connect to "ghost": spawn no-such-command-payload-probe ENOENT',
    );
    expect((await adapter.call("ghost_x", {})).content).toMatch(
      /^MCP server "ghost" not available \(failed \d+s ago\)$/,
    );
  });
});

describe("transports", () => {
  it("Streamable HTTP: connects, lists, calls and caches like stdio", async () => {
    const url = await httpStub("a");
    const adapter = await startAdapter({ servers: { web: { url } } });
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp", "mcp__web"]);
    expect((await adapter.call("mcp__web", { tool: "tool1", args: { value: "h" } })).content).toBe("A_TOOL1:h");
  });

  it("a URL that answers the first POST with 405 is spoken to over the legacy SSE transport", async () => {
    const url = await httpStub("a", [], "--sse");
    const adapter = await startAdapter({ servers: { web: { url } } });
    expect(adapter.events.filter((e) => e.type === "mcp_sse_fallback").map((e) => e.data)).toEqual([
      { server: "web", status: 405 },
    ]);
    expect(adapter.registry.activeNames()).toEqual(["mcpScript", "mcp", "mcp__web"]);
    expect((await adapter.call("mcp__web", { tool: "tool1", args: { value: "s" } })).content).toBe("A_TOOL1:s");
  });

  it("a server that answers 405 and does not speak SSE either fails with the SSE attempt's error", async () => {
    const url = await httpStub("a", ["--http-fail", "405"]);
    const adapter = await startAdapter({ servers: { web: { url } }, cache: "empty-file" });
    expect((await adapter.call("mcp", { connect: "web" })).content).toBe(
      'Failed to connect to "web": SSE error: Non-200 status code (405)',
    );
    expect(adapter.events.filter((e) => e.type === "mcp_sse_fallback").map((e) => e.data)).toEqual([
      { server: "web", status: 405 },
    ]);
  });

  it("a 500 is not a reason to try SSE", async () => {
    const url = await httpStub("a", ["--http-fail", "500"]);
    const adapter = await startAdapter({ servers: { web: { url } }, cache: "empty-file" });
    await adapter.call("mcp", { connect: "web" });
    expect(adapter.events.filter((e) => e.type === "mcp_sse_fallback")).toEqual([]);
  });
});

describe("sampling requests the adapter refuses", () => {
  const refusals: [string, Record<string, unknown>, string][] = [
    ["tools", { tools: [{ name: "x", inputSchema: { type: "object" } }] }, "tools"],
    ["toolChoice", { toolChoice: { mode: "auto" } }, "toolChoice"],
    ["stopSequences", { stopSequences: ["END"] }, "stopSequences"],
    ["includeContext", { includeContext: "thisServer" }, 'includeContext "thisServer"'],
  ];
  it("each reaches the server as an invalid-params error naming what was refused; includeContext none is answered", async () => {
    const dir = tempDir();
    const wireLog = join(dir, "wire.jsonl");
    const fixtureFile = join(dir, "refusals.json");
    const tool = (name: string, request: Record<string, unknown>) => ({
      name,
      inputSchema: { type: "object", properties: {} },
      sampling: { prompt: "Q", request },
    });
    const tools = [...refusals.map(([name, request]) => tool(name, request)), tool("none", { includeContext: "none" })];
    writeFileSync(fixtureFile, JSON.stringify({ name: "refusals", tools }));
    const adapter = await startAdapter({
      servers: { s: { command: "node", args: ["dist/stub-mcp/configurable-stub.js", "--fixture", fixtureFile] } },
      settings: { sampling: true },
      env: { [WIRE_LOG_ENV]: wireLog },
    });
    for (const [name, , fields] of refusals) {
      const message = `sampling/createMessage: ${fields} not supported (text-only completions without tools)`;
      expect((await adapter.call("mcp", { tool: `s_${name}`, args: {} })).content).toBe(
        `Error: SAMPLING_FAILED:MCP error -32602: ${message}${NO_PARAMETERS}`,
      );
      const errors = readWireLog(wireLog)
        .map((line) => line.message as { error?: unknown })
        .filter((m) => m.error);
      expect(errors.at(-1)!.error).toEqual({ code: -32602, message });
    }
    expect((await adapter.call("mcp", { tool: "s_none", args: {} })).content).toBe("SAMPLED:SAMPLED-BY-TEST(1)");
  });
});
