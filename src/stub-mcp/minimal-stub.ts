/**
 * The deliberately minimal stub: newline-delimited JSON-RPC over stdio written by hand, no SDK. It
 * knows initialize, tools/list, tools/call and ping; every other request gets -32601, so it shows
 * exactly which optional methods a client tries.
 *
 *   node dist/stub-mcp/minimal-stub.js [--name <server name>]
 */
import { createInterface } from "node:readline";
import { callProbeTool, PROBE_TOOLS } from "./probe-tools.js";
import { parseStubArgs, runStub } from "./stub-cli.js";
import { unknownToolMessage } from "./tool-results.js";
import { openWireLog } from "./wire-log.js";

/** Answered when a client's initialize names no protocol version. */
const FALLBACK_PROTOCOL_VERSION = "2025-11-25";

type JsonRpcId = string | number | null;

interface IncomingMessage {
  id?: JsonRpcId;
  method?: unknown;
  params?: Record<string, unknown>;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function send(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function answer(serverName: string, method: string, params: Record<string, unknown>): unknown {
  switch (method) {
    case "initialize":
      return {
        protocolVersion:
          typeof params.protocolVersion === "string" ? params.protocolVersion : FALLBACK_PROTOCOL_VERSION,
        capabilities: { tools: {} },
        serverInfo: { name: serverName, version: "1.0.0" },
      };
    case "ping":
      return {};
    case "tools/list":
      return { tools: PROBE_TOOLS };
    case "tools/call": {
      const name = String(params.name);
      const result = callProbeTool(name, (params.arguments as Record<string, unknown> | undefined) ?? {});
      if (!result) throw new RpcError(-32602, unknownToolMessage(name));
      return result;
    }
    default:
      throw new RpcError(-32601, "Method not found");
  }
}

function handleLine(serverName: string, log: (message: unknown) => void, line: string): void {
  if (line.trim() === "") return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    send({ id: null, error: { code: -32700, message: "Parse error" } });
    return;
  }
  log(parsed);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    send({ id: null, error: { code: -32600, message: "Invalid Request" } });
    return;
  }
  const message = parsed as IncomingMessage;
  // Notifications (no id) and the client's responses (no method) are never answered.
  if (typeof message.method !== "string" || message.id === undefined) return;
  try {
    send({ id: message.id, result: answer(serverName, message.method, message.params ?? {}) });
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    send({ id: message.id, error: { code: error.code, message: error.message } });
  }
}

runStub(async () => {
  const name = parseStubArgs(process.argv.slice(2), ["name"]).name ?? "minimal-stub";
  const log = openWireLog(name);
  createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => handleLine(name, log, line));
});
