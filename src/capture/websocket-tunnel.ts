import type { IncomingMessage } from "node:http";
import { connect as connectTcp } from "node:net";
import type { Duplex } from "node:stream";
import { connect as connectTls } from "node:tls";
import { trustedCas } from "../processes/extra-ca-certs.js";
import { isHopByHop } from "./forward-headers.js";
import type { HandedRequest, HandedResponse } from "./handed-exchange.js";
import type { ResponseEnding } from "./types.js";
import { FrameCounter, type FrameSizes, type MessageListener } from "./websocket-frames.js";

/** What a finished tunnel is recorded as: no payloads, only the upgrade's answer and each direction's frame sizes. */
export interface TunnelSummary {
  /** The upstream's status line code (101 when it switched protocols), null when it never answered. */
  status: number | null;
  ending: ResponseEnding;
  error?: string;
  frames: { client: FrameSizes; upstream: FrameSizes };
  /** Why the reader stopped being told messages part-way (absent: it was told all of them). */
  decodeFailure?: string;
}

/**
 * The upgrade request as the upstream gets it: the client's header lines in their order and case,
 * less the connection's own, with `Host` the upstream's and `Connection: Upgrade` (RFC 9110 §7.8).
 */
function upgradeHead(request: IncomingMessage, target: URL, path: string, authorization: string | undefined): string {
  const lines = [`${request.method} ${path} HTTP/1.1`, `Host: ${target.host}`];
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (!isHopByHop(raw[i]!)) lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  if (authorization && request.headers.authorization === undefined) lines.push(`Authorization: ${authorization}`);
  lines.push("Connection: Upgrade", `Upgrade: ${request.headers.upgrade}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * The HTTP response head at the start of the upstream's bytes: its status, where the frames begin, and
 * whether the handshake agreed on permessage-deflate (RFC 7692 §5: the server's extension header names it).
 */
function responseHead(bytes: Buffer): { status: number; end: number; deflate: boolean } | null {
  const end = bytes.indexOf("\r\n\r\n");
  if (end === -1) return null;
  const head = bytes.subarray(0, end).toString("latin1");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  const deflate = /^sec-websocket-extensions:[^\r]*\bpermessage-deflate\b/im.test(head);
  return { status: status ? Number(status[1]) : 0, end: end + 4, deflate };
}

export interface TunnelTimeouts {
  answerMs: number;
  lingerMs: number;
}

/**
 * A tunnel's bounds (lifecycle.ts). `answerMs`: from the upgrade request to the upstream's answer (its
 * connection and status line): an upstream that accepts and never answers is cut, and the client told
 * 502. `lingerMs`: once one side has closed, how long the other gets to close too before it is cut, so
 * a peer that never closes cannot keep the tunnel, and the server's close, waiting. A switched socket
 * that is merely quiet is left open: an agent's socket idles while its user thinks.
 */
const TUNNEL_TIMEOUTS: TunnelTimeouts = { answerMs: 30_000, lingerMs: 2_000 };

/** Who reads a tunnel's messages, each direction's whole text messages in order (responses-socket.ts). */
export interface TunnelReader {
  fromClient: MessageListener;
  fromServer: MessageListener;
}

/** The upstream's connection: TLS for https (trusting the certificates run.sh held back from start-up, as the relay's HTTP pool does). */
function connectUpstream(target: URL): Duplex {
  const secure = target.protocol === "https:";
  const port = Number(target.port) || (secure ? 443 : 80);
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const ca = secure ? trustedCas() : undefined;
  return secure
    ? connectTls({ host: hostname, port, servername: hostname, ALPNProtocols: ["http/1.1"], ...(ca && { ca }) })
    : connectTcp({ host: hostname, port });
}

/** What a tunnel learns as bytes pass: the upstream's status, each direction's frames, the first failure. */
class TunnelWatch {
  readonly frames = { client: new FrameCounter(), upstream: new FrameCounter() };
  status: number | null = null;
  error: string | undefined;
  private answer = Buffer.alloc(0);

  constructor(private readonly reader: TunnelReader | undefined) {}

  /** The upstream's bytes: its answer's head until it is whole; after a 101, frames (any other answer is an HTTP body, relayed but not counted). */
  fromUpstream(chunk: Buffer): void {
    if (this.status !== null) {
      if (this.status === 101) this.frames.upstream.push(chunk);
      return;
    }
    this.answer = Buffer.concat([this.answer, chunk]);
    const read = responseHead(this.answer);
    if (read === null) return;
    this.status = read.status;
    if (this.status !== 101) return;
    if (this.reader) {
      this.frames.client.decode(this.reader.fromClient, read.deflate);
      this.frames.upstream.decode(this.reader.fromServer, read.deflate);
    }
    this.frames.upstream.push(this.answer.subarray(read.end));
  }

  summary(): TunnelSummary {
    const { status, error, frames } = this;
    const ending: ResponseEnding = status === null ? "failed" : error === undefined ? "complete" : "truncated";
    const decodeFailure = frames.client.failure ?? frames.upstream.failure;
    return {
      status,
      ending,
      ...(error !== undefined && { error }),
      frames: { client: frames.client.seen, upstream: frames.upstream.seen },
      ...(decodeFailure && { decodeFailure }),
    };
  }
}

/**
 * Tunnels one upgrade request (a WebSocket) to the upstream: the request head rewritten for the
 * upstream, then every byte both ways as it comes, the upstream's answer included. Resolves once
 * both sides have closed, with what the capture records of it; within the bounds of an upstream
 * that does not answer, or of one side closing (TUNNEL_TIMEOUTS, each replaced where `bounds` names
 * it). With a `reader`, once the upstream has switched protocols each direction's messages are also
 * decoded from a copy of its bytes and handed to it; what is relayed is never touched.
 */
export function tunnelUpgrade(
  request: IncomingMessage,
  client: Duplex,
  head: Buffer,
  to: { target: URL; path: string; authorization: string | undefined },
  reader?: TunnelReader,
  bounds: Partial<TunnelTimeouts> = {},
): Promise<TunnelSummary> {
  const timeouts = { ...TUNNEL_TIMEOUTS, ...bounds };
  const upstream = connectUpstream(to.target);
  const watch = new TunnelWatch(reader);
  // Written before anything is piped: the socket queues it until it connects.
  upstream.write(upgradeHead(request, to.target, to.path, to.authorization));
  upstream.write(head);
  watch.frames.client.push(head);
  client.on("data", (chunk: Buffer) => watch.frames.client.push(chunk));
  upstream.on("data", (chunk: Buffer) => watch.fromUpstream(chunk));
  client.pipe(upstream);
  upstream.pipe(client);
  upstream.once("error", (failure) => {
    watch.error = `upstream ${to.target.origin} failed: ${failure.message}`;
    if (watch.status === null && client.writable) client.end(badGateway(watch.error));
    else client.destroy();
  });
  client.once("error", () => upstream.destroy());
  const unanswered = setTimeout(() => {
    if (watch.status === null) upstream.destroy(new Error(`no answer to the upgrade within ${timeouts.answerMs} ms`));
  }, timeouts.answerMs);
  let linger: NodeJS.Timeout | undefined;
  /** One side has ended or closed: the other gets `lingerMs` to close before it is cut. */
  const follow = (other: Duplex) => {
    linger ??= setTimeout(() => other.destroy(), timeouts.lingerMs);
  };
  // A side that ends its sending while the other never does would leave both half-open for good.
  client.once("end", () => follow(upstream));
  upstream.once("end", () => follow(client));
  return new Promise((resolve) => {
    let open = 2;
    const closed = (other: Duplex) => {
      other.end();
      follow(other);
      if (--open > 0) return;
      clearTimeout(unanswered);
      clearTimeout(linger);
      resolve(watch.summary());
    };
    upstream.once("close", () => closed(client));
    client.once("close", () => closed(upstream));
  });
}

/** The answer a client gets when the upstream cannot be reached, as the proxy's JSON error for other requests. */
function badGateway(message: string): string {
  const body = JSON.stringify({ error: { message: `proxy: ${message}` } });
  return `HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * A finished tunnel as the capture logs it: a side payload whose body is the frame sizes of each
 * direction (JSON), and a response with the upgrade's status and how the tunnel ended.
 */
export function tunnelExchange(
  url: string,
  summary: TunnelSummary,
): { request: HandedRequest; response: HandedResponse } {
  const { status, ending, error, frames } = summary;
  return {
    request: { api: null, url, bytes: Buffer.from(JSON.stringify({ websocket: frames })) },
    response: { bytes: new Uint8Array(0), status, firstByteMs: null, ending, ...(error !== undefined && { error }) },
  };
}
