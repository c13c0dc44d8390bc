import { afterEach, describe, expect, it } from "vitest";
import { readWireLog, WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";
import { PROBE_STUB_TOOLS_LISTED as EXPECTED_TOOLS } from "../fixtures/probe-stub-tools.js";
import { cleanupStubs, connectStdio, methodsOf, spawnRaw, tempWireLog } from "./harness.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
};

afterEach(cleanupStubs);

describe("probe-stub", () => {
  it("lists exactly the two documented tools through the SDK client", async () => {
    const { client } = await connectStdio("probe-stub", [], tempWireLog());
    expect(client.getServerVersion()).toEqual({ name: "probe-stub", version: "1.0.0" });
    expect((await client.listTools()).tools).toEqual(EXPECTED_TOOLS);
  });

  it("sends the schemas byte-exact on the wire: key order kept, no $schema or additionalProperties", async () => {
    const stub = spawnRaw("probe-stub", []);
    stub.send(INITIALIZE);
    await stub.nextLine();
    stub.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    stub.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const reply = JSON.parse(await stub.nextLine()) as { id: number; result: { tools: unknown } };
    expect(reply.id).toBe(1);
    expect(JSON.stringify(reply.result.tools)).toBe(JSON.stringify(EXPECTED_TOOLS));
  });

  it("echoes the value and reports the fixed timestamp", async () => {
    const { client } = await connectStdio("probe-stub", [], tempWireLog());
    expect(await client.callTool({ name: "stub_echo", arguments: { value: "PROBE-77" } })).toEqual({
      content: [{ type: "text", text: "STUB_ECHO:PROBE-77" }],
      isError: false,
    });
    expect(await client.callTool({ name: "stub_time", arguments: {} })).toEqual({
      content: [{ type: "text", text: "STUB_TIME:2026-01-01T00:00:00.000Z" }],
      isError: false,
    });
  });

  it("rejects a call to a tool it does not have", async () => {
    const { client } = await connectStdio("probe-stub", [], tempWireLog());
    await expect(client.callTool({ name: "probe-stub_stub_echo", arguments: {} })).rejects.toThrow(
      "Unknown tool: probe-stub_stub_echo",
    );
  });

  it("logs initialize, initialized, tools/list and tools/call in the order received", async () => {
    const wireLog = tempWireLog();
    const { client } = await connectStdio("probe-stub", [], wireLog);
    await client.listTools();
    await client.callTool({ name: "stub_echo", arguments: { value: "PROBE-77" } });
    const lines = readWireLog(wireLog);
    expect(methodsOf(lines)).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    expect(lines.every((line) => line.server === "probe-stub")).toBe(true);
    expect(lines.every((line) => new Date(line.ts).toISOString() === line.ts)).toBe(true);
    expect(lines[0]?.message).toMatchObject({ id: 0, params: { clientInfo: { name: "stub-mcp-test" } } });
    expect(lines[3]?.message).toEqual({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "stub_echo", arguments: { value: "PROBE-77" } },
    });
  });

  it("names itself after --name in the log and in serverInfo", async () => {
    const wireLog = tempWireLog();
    const { client } = await connectStdio("probe-stub", ["--name", "other"], wireLog);
    expect(client.getServerVersion()?.name).toBe("other");
    expect(new Set(readWireLog(wireLog).map((line) => line.server))).toEqual(new Set(["other"]));
  });

  it("appends to an existing log, so several servers can share one file", async () => {
    const wireLog = tempWireLog();
    const first = await connectStdio("probe-stub", ["--name", "first"], wireLog);
    await first.client.listTools();
    await first.client.close();
    await (await connectStdio("probe-stub", ["--name", "second"], wireLog)).client.listTools();
    expect(readWireLog(wireLog).map((line) => line.server)).toEqual([
      "first",
      "first",
      "first",
      "second",
      "second",
      "second",
    ]);
  });

  it("serves without a log when the variable is empty (nothing to append to)", async () => {
    const stub = spawnRaw("probe-stub", [], { [WIRE_LOG_ENV]: "" });
    stub.send(INITIALIZE);
    expect(JSON.parse(await stub.nextLine())).toMatchObject({ id: 0, result: { serverInfo: { name: "probe-stub" } } });
  });
});
