import { afterEach, describe, expect, it } from "vitest";
import { readWireLog, WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";
import { PROBE_STUB_TOOLS_LISTED } from "../fixtures/probe-stub-tools.js";
import { cleanupStubs, connectStdio, methodsOf, spawnRaw, tempWireLog } from "./harness.js";

afterEach(cleanupStubs);

function initialize(protocolVersion: string) {
  return {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
  };
}

describe("minimal-stub", () => {
  it("serves the SDK client: handshake, the two tools with exact schemas, calls and ping", async () => {
    const { client } = await connectStdio("minimal-stub", [], tempWireLog());
    expect(client.getServerVersion()).toEqual({ name: "minimal-stub", version: "1.0.0" });
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    expect((await client.listTools()).tools).toEqual(PROBE_STUB_TOOLS_LISTED);
    expect(await client.callTool({ name: "stub_echo", arguments: { value: "PROBE-77" } })).toEqual({
      content: [{ type: "text", text: "STUB_ECHO:PROBE-77" }],
      isError: false,
    });
    await expect(client.ping()).resolves.toEqual({});
  });

  it("echoes the client's protocol version in its initialize result", async () => {
    const stub = spawnRaw("minimal-stub", []);
    stub.send(initialize("2024-11-05"));
    expect(JSON.parse(await stub.nextLine())).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2024-11-05",
        capabilities: { tools: {} },
        serverInfo: { name: "minimal-stub", version: "1.0.0" },
      },
    });
  });

  it("answers -32601 to methods it does not know, and nothing to notifications", async () => {
    const stub = spawnRaw("minimal-stub", []);
    stub.send(initialize("2025-11-25"));
    await stub.nextLine();
    stub.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    stub.send({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    stub.send({ jsonrpc: "2.0", id: 2, method: "prompts/list" });
    // Had the notification been answered, that answer would be the next line instead.
    expect(JSON.parse(await stub.nextLine())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found" },
    });
    expect(JSON.parse(await stub.nextLine())).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it("answers a parse error to a line that is not JSON and keeps serving", async () => {
    const stub = spawnRaw("minimal-stub", []);
    stub.child.stdin.write("not json\n");
    expect(JSON.parse(await stub.nextLine())).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    stub.send({ jsonrpc: "2.0", id: 7, method: "ping" });
    expect(JSON.parse(await stub.nextLine())).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
  });

  it("logs every received message, notifications and unknown methods included", async () => {
    const wireLog = tempWireLog();
    const stub = spawnRaw("minimal-stub", ["--name", "mini"], { [WIRE_LOG_ENV]: wireLog });
    stub.send(initialize("2025-11-25"));
    stub.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    stub.send({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    stub.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "stub_echo", arguments: { value: "x" } },
    });
    await stub.nextLine();
    await stub.nextLine();
    const reply = JSON.parse(await stub.nextLine()) as { id: number; result: unknown };
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "STUB_ECHO:x" }], isError: false },
    });
    const lines = readWireLog(wireLog);
    expect(methodsOf(lines)).toEqual(["initialize", "notifications/initialized", "resources/list", "tools/call"]);
    expect(lines.every((line) => line.server === "mini")).toBe(true);
  });
});
