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

/** Who reads a tunnel's messages, each direction's whole text messages in order (responses-socket.ts). */
export interface TunnelReader {
  fromClient: MessageListener;
  fromServer: MessageListener;
}

/**
 * Tunnels one upgrade request (a WebSocket) to the upstream: the request head rewritten for the
 * upstream, then every byte both ways as it comes, the upstream's answer included. Resolves once
 * both sides have closed, with what the capture records of it. With a `reader`, once the upstream
 * has switched protocols each direction's messages are also decoded from a copy of its bytes and
 * handed to it; what is relayed is never touched.
 */
export function tunnelUpgrade(
  request: IncomingMessage,
  client: Duplex,
  head: Buffer,
  target: URL,
  path: string,
  authorization: string | undefined,
  reader?: TunnelReader,
): Promise<TunnelSummary> {
  const secure = target.protocol === "https:";
  const port = Number(target.port) || (secure ? 443 : 80);
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  // The certificates run.sh held back from start-up are trusted here as on the relay's HTTP pool.
  const ca = secure ? trustedCas() : undefined;
  const upstream = secure
    ? connectTls({ host: hostname, port, servername: hostname, ALPNProtocols: ["http/1.1"], ...(ca && { ca }) })
    : connectTcp({ host: hostname, port });
  const frames = { client: new FrameCounter(), upstream: new FrameCounter() };
  let status: number | null = null;
  let answer = Buffer.alloc(0);
  let error: string | undefined;

  // Written before anything is piped: the socket queues it until it connects.
  upstream.write(upgradeHead(request, target, path, authorization));
  upstream.write(head);
  frames.client.push(head);
  client.on("data", (chunk: Buffer) => frames.client.push(chunk));
  // Only a 101 is followed by frames; any other answer is an HTTP body, relayed but not counted.
  upstream.on("data", (chunk: Buffer) => {
    if (status !== null) {
      if (status === 101) frames.upstream.push(chunk);
      return;
    }
    answer = Buffer.concat([answer, chunk]);
    const read = responseHead(answer);
    if (read === null) return;
    status = read.status;
    if (status !== 101) return;
    if (reader) {
      frames.client.decode(reader.fromClient, read.deflate);
      frames.upstream.decode(reader.fromServer, read.deflate);
    }
    frames.upstream.push(answer.subarray(read.end));
  });
  client.pipe(upstream);
  upstream.pipe(client);
  return new Promise((resolve) => {
    let open = 2;
    const closed = () => {
      if (--open > 0) return;
      const ending: ResponseEnding = status === null ? "failed" : error === undefined ? "complete" : "truncated";
      const seen = { client: frames.client.seen, upstream: frames.upstream.seen };
      const decodeFailure = frames.client.failure ?? frames.upstream.failure;
      resolve({
        status,
        ending,
        ...(error !== undefined && { error }),
        frames: seen,
        ...(decodeFailure && { decodeFailure }),
      });
    };
    upstream.once("error", (failure) => {
      error = `upstream ${target.origin} failed: ${failure.message}`;
      if (status === null && client.writable) client.end(badGateway(error));
      else client.destroy();
    });
    client.once("error", () => upstream.destroy());
    upstream.once("close", () => {
      client.end();
      closed();
    });
    client.once("close", () => {
      upstream.end();
      closed();
    });
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
