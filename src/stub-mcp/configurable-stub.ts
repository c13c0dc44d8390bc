/**
 * The configurable stub: tools, resources, prompts, instructions and deliberate faults come from a
 * fixture file (see types.ts, `StubFixture`); served over stdio, or Streamable HTTP with `--http`.
 *
 *   node dist/stub-mcp/configurable-stub.js --fixture fixtures/stub-servers/a.json [--name a]
 *     [--fault garbage-on-start] [--http <port> [--http-fail <status>] | --sse <port>]
 *
 * With --http or --sse the first stdout line is `LISTENING <port>`.
 */
// First, so the SDK's schemas are made after zod is told not to compile (zod reads it per schema).
import "../zod-jitless.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { inputError } from "../errors.js";
import { loadFixture } from "./fixture.js";
import { createFixtureServer } from "./fixture-server.js";
import { WireLoggedTransport } from "./logged-transport.js";
import { parseStubArgs, runStub } from "./stub-cli.js";
import { GARBAGE_LINE } from "./tool-results.js";
import { openWireLog } from "./wire-log.js";

runStub(async () => {
  const args = parseStubArgs(process.argv.slice(2), ["fixture", "name", "fault", "http", "http-fail", "sse"]);
  if (args.fixture === undefined)
    throw inputError("command line", "--fixture", "expected --fixture <path to a fixture JSON file>");
  const fixture = loadFixture(args.fixture);
  const name = args.name ?? fixture.name;
  const log = openWireLog(name);

  const createMcpServer = () => createFixtureServer(fixture, name);
  if (args.httpPort !== undefined || args.ssePort !== undefined) {
    // Loaded only here: the SDK's HTTP transports bring Hono, whose first lines reach for fetch's
    // globals (Node then loads its own undici) and node:crypto, about a fifth of a stdio stub's start.
    const { serveSse, serveStreamableHttp } = await import("./http-serve.js");
    const port =
      args.ssePort !== undefined
        ? await serveSse({ port: args.ssePort, createMcpServer, log })
        : await serveStreamableHttp({ port: args.httpPort!, createMcpServer, log, failStatus: args.httpFailStatus });
    process.stdout.write(`LISTENING ${port}\n`);
    return;
  }
  if (args.garbageOnStart) process.stdout.write(GARBAGE_LINE);
  await createMcpServer().connect(new WireLoggedTransport(new StdioServerTransport(), log));
});
