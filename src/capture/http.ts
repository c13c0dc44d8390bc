import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createSecureServer } from "node:https";
import type { Duplex } from "node:stream";
import { UserError } from "../errors.js";
import { beforeDeadline, LATE } from "./lifecycle.js";

/**
 * Chunks joined in a buffer of its own: Buffer.concat puts a small result in Node's shared pool, and
 * handing that to the capture worker copies it again (a pool slice cannot be transferred).
 */
export function joinedBytes(chunks: Buffer[]): Buffer {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const joined = Buffer.allocUnsafeSlow(length);
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(joined, at);
  return joined;
}

/**
 * The request body's exact bytes, in a buffer of their own. Listeners, not `for await`: an async
 * iterator per request is CPU time on the thread that relays.
 */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => resolve(joinedBytes(chunks)));
    request.once("error", reject);
    // A client gone before the end would otherwise leave the promise pending (for await rejects then).
    request.once(
      "close",
      () => request.readableEnded || reject(new Error("the client closed before sending the whole body")),
    );
  });
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** How long a server's close waits for replies and tunnels still open before it cuts them. */
const SERVER_CLOSE_MS = 10_000;

export interface HttpService {
  port: number;
  /** The server itself, for a caller that serves more of HTTP on it (CONNECT: forward-proxy.ts). */
  server: Server;
  /**
   * Stops accepting, then waits for every handler still running (its capture included); past
   * `withinMs` (default SERVER_CLOSE_MS) every connection still open is cut, which ends the handlers
   * that wait on one (lifecycle.ts: a client or an upstream that never finishes cannot hold it).
   */
  close(withinMs?: number): Promise<void>;
}

/** Takes over the connection of an upgrade request (`Upgrade: websocket`); resolves once it has closed. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;

/**
 * An HTTP server for one async handler. A handler outlives its reply (the record is written once the
 * client has the last byte), so close waits for handlers, not only connections. An error becomes
 * the JSON error `failure` describes, or a cut connection once the reply has started. Without an
 * `upgrade` handler, node:http closes upgrade requests' connections; with one, close ends the
 * connections it holds and waits for it. With `tls` (a PEM key and certificate) it serves HTTPS.
 */
export async function serveHttp(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  failure: (error: Error) => { status: number; message: string },
  port: number,
  host: string,
  upgrade?: UpgradeHandler,
  tls?: { key: string; cert: string },
): Promise<HttpService> {
  const running = new Set<Promise<void>>();
  const upgraded = new Set<Duplex>();
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const handled = handle(request, response).catch((error: Error) => {
      if (response.headersSent) response.destroy();
      else {
        const { status, message } = failure(error);
        sendJson(response, status, { error: { message } });
      }
    });
    running.add(handled);
    void handled.finally(() => running.delete(handled));
  };
  const server: Server = tls ? createSecureServer(tls, serve) : createServer(serve);
  if (upgrade)
    server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      upgraded.add(socket);
      const tunnelled = upgrade(request, socket, head).catch(() => {
        socket.destroy();
      });
      running.add(tunnelled);
      void tunnelled.finally(() => {
        running.delete(tunnelled);
        upgraded.delete(socket);
      });
    });
  const bound = await listen(server, port, host);
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    server,
    close(withinMs = SERVER_CLOSE_MS) {
      closing ??= closeWithin(server, upgraded, running, withinMs);
      return closing;
    },
  };
}

/** serveHttp's close: politely first, then, past `withinMs`, every connection and tunnel cut. */
async function closeWithin(
  server: Server,
  upgraded: Set<Duplex>,
  running: Set<Promise<void>>,
  withinMs: number,
): Promise<void> {
  const closed = closeServer(server);
  for (const socket of upgraded) socket.end();
  const finished = closed.then(() => Promise.all(running));
  if ((await beforeDeadline(finished, withinMs)) !== LATE) return;
  server.closeAllConnections();
  for (const socket of upgraded) socket.destroy();
  await finished;
}

/** Listens on host:port (0 → an ephemeral port) and resolves with the port actually bound; a taken port is bad input. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(new UserError(`cannot listen on ${host}:${port}: ${error.message}`));
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      resolve((server.address() as { port: number }).port);
    });
  });
}

/** Stops accepting, ends idle keep-alive connections, and resolves once every open response has finished. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** The body size a request declares in its content-length, or undefined (chunked, absent or malformed). */
export function declaredLength(request: IncomingMessage): number | undefined {
  const header = request.headers["content-length"];
  const value = header === undefined || header === "" ? Number.NaN : Number(header);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
