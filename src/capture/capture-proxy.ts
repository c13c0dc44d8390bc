import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { request as upstreamRequest } from "undici";
import { trustExtraCasFor } from "../extra-ca-certs.js";
import { USAGE_ESTIMATE_HEADER } from "../providers/http-transport.js";
import type { FinishedExchange } from "./capture.js";
import { CaptureThread, type CaptureThreadOptions } from "./capture-thread.js";
import { endToEnd, headerText, upstreamAuthorization } from "./forward-headers.js";
import type { HandedResponse } from "./handed-exchange.js";
import { declaredLength, readBody, sendJson, serveHttp } from "./http.js";
import { credentialQueryName, redactUrl } from "./redact.js";
import { tunnelExchange, tunnelUpgrade } from "./websocket-tunnel.js";
import { apiForPath } from "./wire-request.js";

export interface CaptureProxyOptions {
  /** The provider's base URL; a request for `/v1/chat/completions` goes to `<upstream>/v1/chat/completions`. */
  upstream: string;
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
  /** Told once each exchange is written (the CLI's live line). */
  onFinished?: (exchange: FinishedExchange) => void;
  /** The capture queue's bounds, the shutdown's drain time and where capture notices go (capture-thread.ts). */
  capture?: Pick<CaptureThreadOptions, "queueLimit" | "drainMs" | "notice">;
}

export interface CaptureProxy {
  /** The proxy's base URL: its origin with the upstream's path (`--upstream http://h/v1` → `http://127.0.0.1:N/v1`). */
  url: string;
  /** The upstream as it may be shown: userinfo and credential query values redacted. */
  upstream: string;
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

/**
 * A pass-through in front of a real provider: each request goes upstream with its method, path,
 * query, body bytes and end-to-end headers unchanged, the response comes back chunk by chunk as it
 * arrives, and both are captured once the client has the whole response. Headers are never stored,
 * userinfo and credential query values are redacted from stored URLs.
 */
export async function startCaptureProxy(options: CaptureProxyOptions): Promise<CaptureProxy> {
  const upstream = new URL(options.upstream);
  await trustExtraCasFor(upstream.href);
  const authorization = upstreamAuthorization(upstream);
  upstream.username = "";
  upstream.password = "";
  const isCredential = credentialQueryName(options.redactQuery);
  let thread: Promise<CaptureThread> | undefined;

  const basePath = upstream.pathname.replace(/\/$/, "");
  function targetOf(incoming: URL): URL {
    // The proxy's base URL carries the upstream's path; a path outside it is taken as relative to the upstream.
    const path = incoming.pathname.startsWith(`${basePath}/`) ? incoming.pathname : basePath + incoming.pathname;
    return new URL(upstream.origin + path + incoming.search);
  }
  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const capture = await thread!;
    const incoming = new URL(request.url ?? "/", "http://proxy");
    const target = targetOf(incoming);
    // Back-pressure: while the capture queue is full, the body stays unread (in the client and TCP).
    await capture.room(declaredLength(request));
    const ts = new Date().toISOString();
    const started = performance.now();
    const bytes = await readBody(request);
    const api = apiForPath(incoming.pathname);
    const contentEncoding = headerText(request.headers["content-encoding"]);
    const relayed = await relay(target, authorization, request, bytes, response);
    const handed = { api, url: redactUrl(target, isCredential), bytes, contentEncoding };
    capture.handLater(handed, relayed, ts, performance.now() - started);
  }

  async function tunnel(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const capture = await thread!;
    const ts = new Date().toISOString();
    const started = performance.now();
    const target = targetOf(new URL(request.url ?? "/", "http://proxy"));
    const summary = await tunnelUpgrade(request, socket, head, target, authorization);
    const { request: handed, response } = tunnelExchange(redactUrl(target, isCredential), summary);
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
    url: `http://${host}:${service.port}${basePath}`,
    upstream: redactUrl(new URL(options.upstream), isCredential),
    runId: capture.id,
    dir: capture.dir,
    liveDir: capture.liveDir,
    close() {
      closing ??= capture.close(service.close());
      return closing;
    },
  };
}
