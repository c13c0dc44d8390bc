/**
 * The probe stub: `stub_echo` and `stub_time` over stdio, on the SDK's low-level Server so tools/list
 * carries the hand-written schemas unchanged (the zod-based McpServer would rewrite them).
 *
 *   node dist/stub-mcp/probe-stub.js [--name <server name>]
 */
// First, so the SDK's schemas are made after zod is told not to compile (zod reads it per schema).
import "../zod-jitless.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { WireLoggedTransport } from "./logged-transport.js";
import { callProbeTool, PROBE_TOOLS } from "./probe-tools.js";
import { parseStubArgs, runStub } from "./stub-cli.js";
import { unknownToolMessage } from "./tool-results.js";
import { openWireLog } from "./wire-log.js";

runStub(async () => {
  const name = parseStubArgs(process.argv.slice(2), ["name"]).name ?? "probe-stub";
  const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: PROBE_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const result = callProbeTool(request.params.name, request.params.arguments ?? {});
    if (!result) throw new McpError(ErrorCode.InvalidParams, unknownToolMessage(request.params.name));
    return result;
  });
  await server.connect(new WireLoggedTransport(new StdioServerTransport(), openWireLog(name)));
});
