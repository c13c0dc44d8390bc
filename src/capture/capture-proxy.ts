import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { request as upstreamRequest } from "undici";
import { trustExtraCasFor } from "../extra-ca-certs.js";
import { USAGE_ESTIMATE_HEADER } from "../providers/http-transport.js";
import type { FinishedExchange } from "./capture.js";
import { CaptureThread, type CaptureThreadOptions } from "./capture-thread.js";
import { DiagnosticsChain, relayChained } from "./diagnostics-chain.js";
import { endToEnd, headerText } from "./forward-headers.js";
import type { HandedResponse } from "./handed-exchange.js";
import { declaredLength, readBody, sendJson, serveHttp } from "./http.js";
import {
  type ProxyRoute,
  type ResolvedRoute,
  resolveRoutes,
  routeFor,
  targetOf,
  unroutedMessage,
} from "./proxy-routes.js";
import { credentialQueryName, redactUrl } from "./redact.js";
import { tunnelExchange, tunnelUpgrade } from "./websocket-tunnel.js";
import { apiForPath } from "./wire-request.js";

export type { ProxyRoute } from "./proxy-routes.js";

/** Where requests go: one upstream for every path, or routes by path prefix (exactly one of the two). */
export interface CaptureProxyOptions {
  /** The provider's base URL; a request for `/v1/chat/completions` goes to `<upstream>/v1/chat/completions`. */
  upstream?: string;
  /** Several upstreams on one port: `/anthropic/v1/messages` goes to the `/anthropic` route's upstream as `/v1/messages`. */
  routes?: ProxyRoute[];
  /** Told of a request under no route (answered 404, not forwarded, not captured). */
  onUnrouted?: (method: string, path: string) => void;
  runsDir: string;
  /** Names the run folder `<runsDir>/<name>/` (default `proxy`). */
  name?: string;
  port?: number;
  host?: string;
  database?: boolean;
  /** Query parameter names stored as `[redacted]` besides the built-in list (`--redact`). */
  redactQuery?: string[];
  /** Patterns replaced by `[redacted]` in every stored body (`--redact-body`). */
  redactBody?: RegExp[];
  /** Store the secrets found in bodies as sent instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /** Ask the provider for its cache diagnostics on Messages and Responses requests (`--cache-diagnostics`, diagnostics-chain.ts). */
  cacheDiagnostics?: boolean;
  /** Told once each exchange is written (the CLI's live line). */
  onFinished?: (exchange: FinishedExchange) => void;
  /** The capture queue's bounds, the shutdown's drain time and where capture notices go (capture-thread.ts). */
  capture?: Pick<CaptureThreadOptions, "queueLimit" | "drainMs" | "notice">;
}

export interface CaptureProxy {
  /**
   * The proxy's base URL: with one upstream, its origin with the upstream's path (`--upstream
   * http://h/v1` → `http://127.0.0.1:N/v1`); with routes, its origin (each route's base is `origin + prefix`).
   */
  url: string;
  /** `http://host:port`. */
  origin: string;
  /** The upstream as it may be shown (userinfo and credential query values redacted); with routes, `prefix → upstream` for each. */
  upstream: string;
  /** Each route's prefix and upstream as it may be shown. */
  routes: { prefix: string; upstream: string }[];
  runId: string;
  /** The run folder once the proxy has closed; `liveDir` while it serves (see CaptureRun). */
  dir: string;
  liveDir: string;
  /** Stops serving, waits for open replies, then finishes the run; later calls return the same promise. */
  close(): Promise<void>;
}

/**
 * How much of the response may wait in memory for a slow client before the relay pauses. Waiting for
 * `drain` at Node's 16 KiB default stalls the relay on every chunk while the client is scheduled.
 */
const CLIENT_BUFFER_LIMIT = 8 * 1024 * 1024;

/** Writes a chunk, and waits while more than CLIENT_BUFFER_LIMIT is queued for the client, so a slow client never piles the stream up in memory. */
function writeToClient(response: ServerResponse, chunk: Uint8Array): Promise<void> {
  response.write(chunk);
  if (response.writableLength < CLIENT_BUFFER_LIMIT || response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}

/** An abort signal that fires when the client's connection closes before its response has finished. */
function whenClientLeaves(response: ServerResponse): { signal: AbortSignal; stop(): void } {
  const left = new AbortController();
  const onClose = () => {
    if (!response.writableFinished) left.abort();
  };
  response.on("close", onClose);
  return { signal: left.signal, stop: () => response.off("close", onClose) };
}

/**
 * Sends one request upstream and relays the response to the client chunk by chunk, ending the
 * client's response the moment the upstream's ends. A client that leaves aborts the upstream call.
 */
async function relay(
  target: URL,
  authorization: string | undefined,
  request: IncomingMessage,
  bytes: Buffer,
  response: ServerResponse,
): Promise<HandedResponse> {
  const started = performance.now();
  const clientLeft = whenClientLeaves(response);
  let status: number | null = null;
  let firstByteMs: number | null = null;
  let usageEstimated = false;
  let contentEncoding: string | undefined;
  let eventStream = false;
  // Raw bytes, decoded by the capture: decoding as they pass costs the relay CPU time.
  const chunks: Buffer[] = [];
  const outcome = (ending: HandedResponse["ending"], error?: string): HandedResponse => ({
    bytes: Buffer.concat(chunks),
    contentEncoding,
    eventStream,
    status,
    firstByteMs,
    ending,
    ...(error !== undefined && { error }),
    ...(usageEstimated && { usageEstimated }),
  });
  try {
    const reply = await upstreamRequest(target, {
      method: request.method as "POST",
      headers: { ...(authorization && { authorization }), ...endToEnd(request.headers) },
      body: bytes.length > 0 ? bytes : undefined,
      signal: clientLeft.signal,
    });
    status = reply.statusCode;
    usageEstimated = reply.headers[USAGE_ESTIMATE_HEADER] === "estimate";
    contentEncoding = headerText(reply.headers["content-encoding"]);
    eventStream = String(reply.headers["content-type"] ?? "").includes("text/event-stream");
    response.writeHead(reply.statusCode, endToEnd(reply.headers));
    response.flushHeaders();
    for await (const chunk of reply.body) {
      firstByteMs ??= performance.now() - started;
      chunks.push(chunk as Buffer);
      await writeToClient(response, chunk as Buffer);
    }
    response.end();
    return outcome("complete");
  } catch (error) {
    if (clientLeft.signal.aborted)
      return outcome("cancelled", "the client disconnected; the upstream call was aborted");
    const message = `upstream ${target.origin} failed: ${(error as Error).message}`;
    if (status === null) {
      sendJson(response, 502, { error: { message: `proxy: ${message}` } });
      return outcome("failed", message);
    }
    // The upstream broke off mid-response: the client's connection is cut the same way, so it cannot take a part for the whole.
    response.destroy();
    return outcome("truncated", message);
  } finally {
    clientLeft.stop();
  }
}

/** The routes an options object names: its routes, or its one upstream as the route of every path. */
function routesOf(options: CaptureProxyOptions): ProxyRoute[] {
  if ((options.upstream === undefined) === (options.routes === undefined))
    throw new Error("startCaptureProxy takes either upstream or routes");
  return options.routes ?? [{ prefix: "", upstream: options.upstream! }];
}

/** Where the proxy listens and forwards to, as CaptureProxy tells it. */
function addresses(origin: string, routes: ResolvedRoute[], byPrefix: boolean) {
  const shown = routes.map((route) => ({ prefix: route.prefix, upstream: route.shown }));
  return {
    url: byPrefix ? origin : origin + routes[0]!.basePath,
    origin,
    upstream: byPrefix ? shown.map((r) => `${r.prefix} → ${r.upstream}`).join(", ") : shown[0]!.upstream,
    routes: shown,
  };
}

/** A request under no route: a 404 naming the prefixes there are; its body is left unread. */
function refuseUnrouted(routes: ResolvedRoute[], request: IncomingMessage, response: ServerResponse): void {
  const path = new URL(request.url ?? "/", "http://proxy").pathname;
  sendJson(response, 404, { error: { message: unroutedMessage(routes, request.method ?? "GET", path) } });
}

/**
 * A pass-through in front of real providers: each request goes to its route's upstream with its
 * method, path (less the route's prefix), query, body bytes and end-to-end headers unchanged, the
 * response comes back chunk by chunk as it arrives, and both are captured once the client has the
 * whole response. Headers are never stored, userinfo and credential query values are redacted from
 * stored URLs. A request under no route is answered 404 and neither forwarded nor captured.
 */
export async function startCaptureProxy(options: CaptureProxyOptions): Promise<CaptureProxy> {
  const isCredential = credentialQueryName(options.redactQuery);
  const routes = resolveRoutes(routesOf(options), isCredential);
  for (const route of routes) await trustExtraCasFor(route.origin);
  let thread: Promise<CaptureThread> | undefined;
  const diagnostics = options.cacheDiagnostics ? new DiagnosticsChain() : null;

  /** The route and target of a request, or undefined when no route serves its path (told to onUnrouted). */
  function routed(request: IncomingMessage): { route: ResolvedRoute; incoming: URL; target: URL } | undefined {
    const incoming = new URL(request.url ?? "/", "http://proxy");
    const route = routeFor(routes, incoming.pathname);
    if (route) return { route, incoming, target: targetOf(route, incoming) };
    options.onUnrouted?.(request.method ?? "GET", incoming.pathname);
    return undefined;
  }
  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const capture = await thread!;
    const to = routed(request);
    if (!to) return refuseUnrouted(routes, request, response);
    // Back-pressure: while the capture queue is full, the body stays unread (in the client and TCP).
    await capture.room(declaredLength(request));
    const ts = new Date().toISOString();
    const started = performance.now();
    const bytes = await readBody(request);
    const api = apiForPath(to.incoming.pathname);
    const contentEncoding = headerText(request.headers["content-encoding"]);
    const send = (sent: Buffer) => relay(to.target, to.route.authorization, request, sent, response);
    const { relayed, added } = await relayChained(diagnostics, { api, bytes, contentEncoding, request }, send);
    const handed = { api, url: redactUrl(to.target, isCredential), bytes, contentEncoding, ...added };
    capture.handLater(handed, relayed, ts, performance.now() - started);
  }

  async function tunnel(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const capture = await thread!;
    const to = routed(request);
    if (!to) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const ts = new Date().toISOString();
    const started = performance.now();
    const summary = await tunnelUpgrade(request, socket, head, to.target, to.route.authorization);
    const { request: handed, response } = tunnelExchange(redactUrl(to.target, isCredential), summary);
    capture.handLater(handed, response, ts, performance.now() - started);
  }

  const host = options.host ?? "127.0.0.1";
  const failure = (error: Error) => ({ status: 502, message: `proxy: ${error.message}` });
  // Listening comes first: a port in use must fail before the run folder of a proxy already on it is replaced.
  const service = await serveHttp(forward, failure, options.port ?? 0, host, tunnel);
  // A request that reaches `forward` before the capture worker has opened the run (and loaded the
  // tokenizer) waits for it: the proxy is announced only after that.
  thread = CaptureThread.start({
    name: options.name ?? "proxy",
    runsDir: options.runsDir,
    database: options.database,
    redactBody: options.redactBody,
    keepSecrets: options.keepSecrets,
    onFinished: options.onFinished,
    ...options.capture,
  });
  let capture: CaptureThread;
  try {
    capture = await thread;
  } catch (error) {
    await service.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    ...addresses(`http://${host}:${service.port}`, routes, options.routes !== undefined),
    runId: capture.id,
    dir: capture.dir,
    liveDir: capture.liveDir,
    close() {
      closing ??= capture.close(service.close());
      return closing;
    },
  };
}
