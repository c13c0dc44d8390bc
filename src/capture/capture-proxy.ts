import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Agent, Dispatcher } from "undici";
import { trustedCas } from "../processes/extra-ca-certs.js";
import { USAGE_ESTIMATE_HEADER } from "../providers/http-transport.js";
import { AWS_EVENT_STREAM } from "./aws-event-stream.js";
import type { FinishedExchange } from "./capture.js";
import type { CaptureThread, CaptureThreadOptions } from "./capture-thread.js";
import { agentOf } from "./client-agent.js";
import { DiagnosticsChain, relayChained } from "./diagnostics-chain.js";
import { endToEnd, headerText } from "./forward-headers.js";
import { ForwardInterception, type ForwardOptions } from "./forward-proxy.js";
import { type HandedResponse, sessionHeaderOf } from "./handed-exchange.js";
import { declaredLength, type HttpService, joinedBytes, readBody, sendJson, serveHttp } from "./http.js";
import type { KnownText } from "./known-texts.js";
import { type ProxyRoute, type ResolvedRoute, resolveRoutes, unroutedMessage } from "./proxy-routes.js";
import { type ProxyTarget, proxyTargets, type Routed } from "./proxy-targets.js";
import { credentialQueryName } from "./redact.js";
import { ResponseChain, SocketTurns, turnExchange } from "./responses-socket.js";
import { serveCapture } from "./served-capture.js";
import { type TunnelReader, type TunnelTimeouts, tunnelExchange, tunnelUpgrade } from "./websocket-tunnel.js";

export type { ProxyRoute } from "./proxy-routes.js";

/** Where requests go: one upstream for every path, or routes by path prefix (exactly one of the two). */
/** Where a proxy listens: `http://host:port`, and `https://host:port` when an HTTPS listener was asked for. */
export interface ProxyOrigins {
  origin: string;
  secureOrigin?: string;
}

export interface CaptureProxyOptions {
  /** The provider's base URL; a request for `/v1/chat/completions` goes to `<upstream>/v1/chat/completions`. */
  upstream?: string;
  /** Several upstreams on one port: `/anthropic/v1/messages` goes to the `/anthropic` route's upstream as `/v1/messages`. */
  routes?: ProxyRoute[];
  /**
   * Told the proxy's origins once it listens, before its run is opened: what it throws stops the start
   * with nothing of the run touched (record builds its command's environment here).
   */
  onListening?: (origins: ProxyOrigins) => void;
  /** Told of a request under no route (answered 404, not forwarded, not captured). */
  onUnrouted?: (method: string, path: string) => void;
  runsDir: string;
  /** Names the run folder `<runsDir>/<name>/` (default `proxy`). */
  name?: string;
  port?: number;
  host?: string;
  /**
   * A second listener, HTTPS with this key and certificate, serving the same routes: for a client that
   * refuses a plain-HTTP base URL (Codex and its ChatGPT backend). Its port is always ephemeral.
   */
  secure?: { key: string; cert: string };
  /** Serve as an HTTPS proxy too (CONNECT), standing in for the model APIs' hosts (forward-proxy.ts). */
  forward?: ForwardOptions;
  database?: boolean;
  /** Query parameter names stored as `[redacted]` besides the built-in list (`--redact`). */
  redactQuery?: string[];
  /** Patterns replaced by `[redacted]` in every stored body (`--redact-body`). */
  redactBody?: RegExp[];
  /** Store the secrets found in bodies as sent instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /** Texts of the user's to attribute in each record's sources: instruction files, skills (known-texts.ts). */
  knownTexts?: KnownText[];
  /** Ask the provider for its cache diagnostics on Messages and Responses requests (`--cache-diagnostics`, diagnostics-chain.ts). */
  cacheDiagnostics?: boolean;
  /** Told once each exchange is written (the CLI's live line). */
  onFinished?: (exchange: FinishedExchange) => void;
  /** The capture queue's bounds, the shutdown's drain time and where capture notices go (capture-thread.ts). */
  capture?: Pick<CaptureThreadOptions, "queueLimit" | "drainMs" | "notice">;
  /** A WebSocket tunnel's bounds in place of the defaults (websocket-tunnel.ts): tests that must see one hold shorten it. */
  tunnel?: Partial<TunnelTimeouts>;
}

export interface CaptureProxy {
  /**
   * The proxy's base URL: with one upstream, its origin with the upstream's path (`--upstream
   * http://h/v1` → `http://127.0.0.1:N/v1`); with routes, its origin (each route's base is `origin + prefix`).
   */
  url: string;
  /** `http://host:port`. */
  origin: string;
  /** `https://host:port` of the HTTPS listener, when the options asked for one. */
  secureOrigin?: string;
  /** The upstream as it may be shown (userinfo and credential query values redacted); with routes, `prefix → upstream` for each. */
  upstream: string;
  /** Each route's prefix and upstream as it may be shown. */
  routes: { prefix: string; upstream: string }[];
  runId: string;
  /** The run folder once the proxy has closed; `liveDir` while it serves (see CaptureRun). */
  dir: string;
  liveDir: string;
  /** Settles once the capture worker has stopped, however it stopped (lifecycle.ts). */
  ended: Promise<void>;
  /**
   * Stops serving, waits for open replies, then finishes the run, within the capture's drain time
   * (`capture.drainMs`); later calls return the same promise.
   */
  close(): Promise<void>;
  /** Drop the run at close if no exchange reached it (served-capture.ts): the previous run of its name stays. */
  dropIfEmpty(): void;
}

/**
 * How much of the response may wait in memory for a slow client before the relay pauses. Waiting for
 * `drain` at Node's 16 KiB default stalls the relay on every chunk while the client is scheduled.
 */
const CLIENT_BUFFER_LIMIT = 8 * 1024 * 1024;

/**
 * One response relayed to the client chunk by chunk as undici's parser reads it (a dispatch handler:
 * `request`'s body stream and its async iterator cost the relay about a third more CPU per request,
 * scripts/bench-proxy.mjs), the client's response ending the moment the upstream's does. A client
 * that leaves aborts the upstream call.
 */
class ClientRelay implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly handed: Omit<HandedResponse, "bytes" | "ending"> = {
    status: null,
    firstByteMs: null,
    eventStream: false,
  };
  // Raw bytes, decoded by the capture: decoding as they pass costs the relay CPU time.
  private readonly chunks: Buffer[] = [];
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private readonly onClose = () => {
    if (this.response.writableFinished) return;
    // Settled first: the abort calls onResponseError at once, which must not take it for the upstream's failure.
    this.settle("cancelled", "the client disconnected; the upstream call was aborted");
    this.controller?.abort(new Error("the client disconnected"));
  };
  private readonly onDrain = () => this.controller?.paused && this.controller.resume();
  private headers: IncomingHttpHeaders = {};

  constructor(
    private readonly origin: string,
    private readonly response: ServerResponse,
    private readonly done: (handed: HandedResponse) => void,
    /** Changes the whole reply before the client gets it (held back until the upstream's end); the capture keeps it as sent. */
    private readonly rewrite?: (body: Buffer) => Buffer,
  ) {
    response.on("close", this.onClose);
    response.on("drain", this.onDrain);
  }

  private settle(ending: HandedResponse["ending"], error?: string): void {
    if (this.settled) return;
    this.settled = true;
    this.response.off("close", this.onClose);
    this.response.off("drain", this.onDrain);
    const bytes = joinedBytes(this.chunks);
    this.done({ ...this.handed, bytes, ending, ...(error !== undefined && { error }) });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // The client left while the request waited for a connection.
    if (this.settled) controller.abort(new Error("the client disconnected"));
  }

  onResponseStart(_: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.handed.status = status;
    if (headers[USAGE_ESTIMATE_HEADER] === "estimate") this.handed.usageEstimated = true;
    this.handed.contentEncoding = headerText(headers["content-encoding"]);
    const contentType = String(headers["content-type"] ?? "");
    this.handed.eventStream = contentType.includes("text/event-stream");
    if (contentType.includes(AWS_EVENT_STREAM)) this.handed.awsEventStream = true;
    this.headers = headers;
    if (this.rewrite) return;
    this.response.writeHead(status, endToEnd(headers));
    // The headers go out with the first chunk when it came in the same read, and alone when it did not.
    setImmediate(() => this.chunks.length === 0 && !this.settled && this.response.flushHeaders());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handed.firstByteMs ??= performance.now() - this.started;
    this.chunks.push(chunk);
    if (this.rewrite) return;
    // Written as it comes, never corked: on Node 22 a corked response sets no need for 'drain' (a paused
    // upstream would never resume) and, ended while corked, sends none of what it holds.
    this.response.write(chunk);
    // A slow client: the upstream waits (in TCP) rather than the stream piling up here.
    if (this.response.writableLength >= CLIENT_BUFFER_LIMIT && !this.response.destroyed) controller.pause();
  }

  onResponseEnd(): void {
    if (this.rewrite) this.sendRewritten(this.rewrite);
    else this.response.end();
    this.settle("complete");
  }

  /** The held-back reply, changed unless it came encoded (the relay asked for it plain). */
  private sendRewritten(rewrite: (body: Buffer) => Buffer): void {
    const body = joinedBytes(this.chunks);
    const sent = this.handed.contentEncoding === undefined ? rewrite(body) : body;
    const { "content-length": _, "transfer-encoding": __, ...headers } = endToEnd(this.headers);
    this.response.writeHead(this.handed.status!, { ...headers, "content-length": String(sent.length) });
    this.response.end(sent);
  }

  onResponseError(_: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    const message = `upstream ${this.origin} failed: ${error.message}`;
    if (this.handed.status === null) {
      sendJson(this.response, 502, { error: { message: `proxy: ${message}` } });
      this.settle("failed", message);
    } else {
      // The upstream broke off mid-response: the client's connection is cut the same way, so it cannot take a part for the whole.
      this.response.destroy();
      this.settle("truncated", message);
    }
  }
}

/**
 * The relay's own pool of kept-alive upstream connections, trusting the certificates run.sh held back
 * from start-up. Not undici's global dispatcher: that slot is shared with Node's built-in fetch, and
 * when fetch ran first in the process it holds Node's bundled undici, whose dispatch takes another
 * handler interface than ClientRelay's ("invalid onError method"). undici is loaded by the first
 * request to relay, not at start-up: loading it costs about 80 ms of CPU, which a proxy that is
 * stopped before any request (or a command that refuses to start) never needs.
 */
let upstreamPool: Promise<Agent> | undefined;
function upstreamDispatcher(): Promise<Agent> {
  upstreamPool ??= import("undici").then(({ Agent }) => {
    const ca = trustedCas();
    return new Agent(ca ? { connect: { ca } } : {});
  });
  return upstreamPool;
}

/** Sends one request upstream on the relay's pool (its connections kept alive) and relays the response. */
async function relay(
  to: ProxyTarget,
  request: IncomingMessage,
  bytes: Buffer,
  response: ServerResponse,
): Promise<HandedResponse> {
  const { origin } = to.route;
  const authorization = to.route.authorization;
  const headers = endToEnd(request.headers);
  // A reply to be changed is asked for without a content coding.
  if (to.rewriteReply) delete headers["accept-encoding"];
  // The length of the bytes sent: the client's, unless --cache-diagnostics added a field (diagnostics-chain.ts).
  if (headers["content-length"] !== undefined) headers["content-length"] = String(bytes.length);
  if (to.route.hostHeader !== undefined) headers.host = to.route.hostHeader;
  const pool = await upstreamDispatcher();
  return new Promise((resolve) => {
    const options: Dispatcher.DispatchOptions = {
      origin,
      path: to.targetPath,
      method: request.method as Dispatcher.HttpMethod,
      // The upstream URL's credentials lead, as they always did; a client's own Authorization replaces them.
      headers: authorization ? { authorization, ...headers } : headers,
      body: bytes.length > 0 ? bytes : undefined,
    };
    pool.dispatch(options, new ClientRelay(origin, response, resolve, to.rewriteReply));
  });
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

/** The target of a request, or the path no route serves (told to `onUnrouted`). */
function routedRequest(
  targetOfUrl: (url: string) => Routed,
  request: IncomingMessage,
  onUnrouted: CaptureProxyOptions["onUnrouted"],
): Routed {
  const to = targetOfUrl(request.url ?? "/");
  if ("unrouted" in to) onUnrouted?.(request.method ?? "GET", to.unrouted);
  return to;
}

/**
 * A Responses socket's reader: each turn handed to the capture as a full record (responses-socket.ts).
 * Any other socket is recorded by its frame sizes alone.
 */
function socketTurns(chain: ResponseChain, capture: CaptureThread, url: string, agent: { agent?: string }) {
  const turns = new SocketTurns(chain, (turn) => {
    const exchange = turnExchange(url, turn);
    capture.handLater({ ...exchange.request, ...agent }, exchange.response, turn.ts, turn.durationMs);
  });
  const reader: TunnelReader = {
    fromClient: (text) => void turns.fromClient(text),
    fromServer: (text) => turns.fromServer(text),
  };
  return { reader, close: (error: string | undefined) => turns.close(error) };
}

/** A request under no route: a 404 naming the prefixes there are; its body is left unread. */
function refuseUnrouted(routes: ResolvedRoute[], method: string, path: string, response: ServerResponse): void {
  sendJson(response, 404, { error: { message: unroutedMessage(routes, method, path) } });
}

/**
 * One HTTP exchange relayed to its upstream and handed to the capture once the client has the whole
 * response; with diagnostics on, the request may be sent with the provider's diagnostics asked for.
 */
async function relayRequest(
  to: ProxyTarget,
  request: IncomingMessage,
  response: ServerResponse,
  capture: CaptureThread,
  diagnostics: DiagnosticsChain | null,
): Promise<void> {
  // Back-pressure: while the capture queue is full, the body stays unread (in the client and TCP).
  await capture.room(declaredLength(request));
  const ts = new Date().toISOString();
  const started = performance.now();
  const bytes = await readBody(request);
  const contentEncoding = headerText(request.headers["content-encoding"]);
  const send = (sent: Buffer) => relay(to, request, sent, response);
  const chained = { api: to.api, bytes, contentEncoding };
  const { relayed, added } = await relayChained(diagnostics, chained, send);
  const headers = request.headers;
  const handed = {
    api: to.api,
    url: to.shown,
    bytes,
    contentEncoding,
    ...added,
    ...sessionHeaderOf(headers),
    ...agentOf(headers),
  };
  capture.handLater(handed, relayed, ts, performance.now() - started);
}

/**
 * One upgraded connection tunnelled to its upstream, handed to the capture as one exchange when it
 * ends; a Responses socket's turns are handed as they complete (socketTurns).
 */
async function relaySocket(
  to: ProxyTarget,
  upgrade: { request: IncomingMessage; socket: Duplex; head: Buffer },
  capture: CaptureThread,
  chain: ResponseChain,
  timeouts?: Partial<TunnelTimeouts>,
): Promise<void> {
  const ts = new Date().toISOString();
  const started = performance.now();
  const { request, socket, head } = upgrade;
  const turns = to.api === "openai-responses" ? socketTurns(chain, capture, to.shown, agentOf(request.headers)) : null;
  const upstream = { target: to.target, path: to.targetPath, authorization: to.route.authorization };
  const summary = await tunnelUpgrade(request, socket, head, upstream, turns?.reader, timeouts);
  turns?.close(summary.decodeFailure ?? summary.error);
  const { request: handed, response } = tunnelExchange(to.shown, summary);
  capture.handLater(handed, response, ts, performance.now() - started);
}

/** The worker that opens the run and writes every exchange, as the options name it. */
function captureThreadOptions(options: CaptureProxyOptions): CaptureThreadOptions {
  return {
    name: options.name ?? "proxy",
    runsDir: options.runsDir,
    database: options.database,
    redactBody: options.redactBody,
    keepSecrets: options.keepSecrets,
    knownTexts: options.knownTexts,
    onFinished: options.onFinished,
    ...options.capture,
  };
}

/**
 * The proxy's two handlers (HTTP requests, upgraded connections) and what they share: the routes,
 * the capture once its worker has opened the run, the diagnostics chain and the Responses chain.
 */
class ProxyRequests {
  /** Once the worker has opened the run, requests take it from here rather than await the promise each time. */
  private capture: CaptureThread | undefined;
  private readonly diagnostics: DiagnosticsChain | null;
  private readonly responseChain = new ResponseChain();

  constructor(
    private readonly options: CaptureProxyOptions,
    private readonly routes: ResolvedRoute[],
    private readonly targetOfUrl: (url: string) => Routed,
    private readonly opened: Promise<CaptureThread>,
    /** `--forward`: the model APIs' hosts the proxy stands in for over CONNECT (forward-proxy.ts). */
    readonly interception: ForwardInterception | undefined,
  ) {
    this.diagnostics = options.cacheDiagnostics ? new DiagnosticsChain() : null;
    // A worker that cannot open the run fails the start; the requests waiting on it are told there.
    opened.then(
      (capture) => {
        this.capture = capture;
      },
      () => undefined,
    );
  }

  /** An intercepted host's request first (forward-proxy.ts), else the proxy's own routes. */
  private routed(request: IncomingMessage): Routed | "pass" {
    return this.interception?.target(request) ?? routedRequest(this.targetOfUrl, request, this.options.onUnrouted);
  }

  readonly forward = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const capture = this.capture ?? (await this.opened);
    const to = this.routed(request);
    if (to === "pass") return this.interception!.passThrough(request, response);
    if ("unrouted" in to) return refuseUnrouted(this.routes, request.method ?? "GET", to.unrouted, response);
    await relayRequest(to, request, response, capture, this.diagnostics);
  };

  readonly tunnel = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const capture = this.capture ?? (await this.opened);
    const to = this.routed(request);
    if (to === "pass" || "unrouted" in to) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    await relaySocket(to, { request, socket, head }, capture, this.responseChain, this.options.tunnel);
  };
}

/**
 * The proxy's listener, and its HTTPS twin when the options ask for one (the same routes, an
 * ephemeral port), as one service: both close together, and the first failing to start closes the other.
 */
async function listenOnBoth(
  requests: ProxyRequests,
  failure: (error: Error) => { status: number; message: string },
  host: string,
  options: CaptureProxyOptions,
): Promise<HttpService & { secureOrigin?: string }> {
  const plain = await serveHttp(requests.forward, failure, options.port ?? 0, host, requests.tunnel);
  // `--forward`: CONNECT reaches the plain listener, which stops intercepting before it closes.
  const { interception } = requests;
  interception?.attach(plain.server);
  const service: HttpService = interception
    ? {
        ...plain,
        close(withinMs) {
          interception.close();
          return plain.close(withinMs);
        },
      }
    : plain;
  if (!options.secure) return service;
  const secure = await serveHttp(requests.forward, failure, 0, host, requests.tunnel, options.secure).catch(
    async (error: Error) => {
      await service.close();
      throw error;
    },
  );
  return {
    port: service.port,
    server: service.server,
    secureOrigin: `https://${host}:${secure.port}`,
    close: (withinMs) => Promise.all([service.close(withinMs), secure.close(withinMs)]).then(() => undefined),
  };
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
  const host = options.host ?? "127.0.0.1";
  const failure = (error: Error) => ({ status: 502, message: `proxy: ${error.message}` });
  let secureOrigin: string | undefined;
  const served = await serveCapture(async (opened) => {
    const interception = options.forward && new ForwardInterception(options.forward, isCredential);
    const requests = new ProxyRequests(options, routes, proxyTargets(routes, isCredential), opened, interception);
    const service = await listenOnBoth(requests, failure, host, options);
    secureOrigin = service.secureOrigin;
    try {
      options.onListening?.({ origin: `http://${host}:${service.port}`, ...(secureOrigin && { secureOrigin }) });
    } catch (error) {
      await service.close();
      throw error;
    }
    return service;
  }, captureThreadOptions(options));
  const { capture } = served;
  return {
    ...addresses(`http://${host}:${served.port}`, routes, options.routes !== undefined),
    ...(secureOrigin && { secureOrigin }),
    runId: capture.id,
    dir: capture.dir,
    liveDir: capture.liveDir,
    ended: served.ended,
    close: () => served.close(),
    dropIfEmpty: () => served.dropIfEmpty(),
  };
}
