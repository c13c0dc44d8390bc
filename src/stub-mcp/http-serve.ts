import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { WireLoggedTransport } from "./logged-transport.js";
import type { WireLog } from "./wire-log.js";

export interface HttpServeOptions {
  port: number;
  /** Builds a fresh MCP server for each client session. */
  createMcpServer: () => Server;
  log: WireLog;
  /** When set, every request is answered with this status and nothing else happens. */
  failStatus?: number;
}

/**
 * Serves Streamable HTTP on 127.0.0.1 (any path). Each initialize opens a session with its own MCP
 * server, so a client that reconnects is served like a new one. Resolves with the bound port.
 */
export async function serveStreamableHttp(options: HttpServeOptions): Promise<number> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const openSession = async (): Promise<StreamableHTTPServerTransport> => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await options.createMcpServer().connect(new WireLoggedTransport(transport, options.log));
    return transport;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.failStatus !== undefined) {
      logFailedRequestBody(await readBody(req), options.log);
      res
        .writeHead(options.failStatus, { "content-type": "text/plain" })
        .end(`stub-mcp: failing every request with ${options.failStatus}\n`);
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (typeof sessionId === "string" && !known) {
      res.writeHead(404, { "content-type": "text/plain" }).end("stub-mcp: unknown session\n");
      return;
    }
    // Without a session id only an initialize is valid; the new transport itself rejects anything else.
    await (known ?? (await openSession())).handleRequest(req, res);
  };

  return listen(options.port, handle);
}

/**
 * Serves the legacy HTTP+SSE transport only: a GET opens the event stream (its `endpoint` event names
 * where to POST), a POST carrying that `sessionId` delivers a message. A POST without one — the first
 * thing a Streamable HTTP client sends — gets 405, which is what makes a client fall back to SSE.
 */
export async function serveSse(options: Omit<HttpServeOptions, "failStatus">): Promise<number> {
  const sessions = new Map<string, SSEServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET") {
      const transport = new SSEServerTransport(url.pathname, res);
      sessions.set(transport.sessionId, transport);
      transport.onclose = () => void sessions.delete(transport.sessionId);
      await options.createMcpServer().connect(new WireLoggedTransport(transport, options.log));
      return;
    }
    const known = sessions.get(url.searchParams.get("sessionId") ?? "");
    if (req.method !== "POST" || !known) {
      logFailedRequestBody(await readBody(req), options.log);
      res.writeHead(405, { "content-type": "text/plain" }).end("stub-mcp: this server speaks the SSE transport only\n");
      return;
    }
    await known.handlePostMessage(req, res);
  };
  return listen(options.port, handle);
}

/** Listens on 127.0.0.1; a handler that throws answers 500 with its message. Resolves with the bound port. */
async function listen(
  port: number,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<number> {
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`stub-mcp: ${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", resolve);
  });
  return (http.address() as AddressInfo).port;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** A failing server still received what the client sent; the wire log shows the attempt. */
function logFailedRequestBody(body: string, log: WireLog): void {
  if (body === "") return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) log(message);
}
