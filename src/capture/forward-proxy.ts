/**
 * The capture proxy as the command's HTTPS proxy (`record --forward`): a client that reads
 * HTTPS_PROXY asks it to `CONNECT host:443`. For a model API's host the proxy answers the TLS
 * handshake itself, with a certificate for that host signed by the user's authority (user-ca.ts), and
 * serves the requests that come over it like any other: relayed to the real host byte for byte and
 * captured. Nothing signed is changed (an AWS SigV4 signature covers the host and the body), so signed
 * requests stay valid. Every other host is tunnelled as bytes, unread and unrecorded.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createSecureContext, TLSSocket } from "node:tls";
import { endToEnd } from "./forward-headers.js";
import { resolveRoutes } from "./proxy-routes.js";
import { type ProxyTarget, proxyTargets, type Routed } from "./proxy-targets.js";
import type { UserAuthority } from "./user-ca.js";

/**
 * The hosts whose TLS the proxy ends: the model APIs an agent may reach. Anything else (package
 * registries, sign-in, telemetry) passes through untouched.
 */
const MODEL_API_HOSTS: RegExp[] = [
  /^api\.anthropic\.com$/,
  /^api\.openai\.com$/,
  /^chatgpt\.com$/,
  /^generativelanguage\.googleapis\.com$/,
  /^cloudcode-pa\.googleapis\.com$/,
  // Vertex AI: the global endpoint and each region's (`us-east5-aiplatform.googleapis.com`).
  /^([a-z0-9-]+-)?aiplatform\.googleapis\.com$/,
  // Amazon Bedrock's runtime in each region, FIPS endpoints too.
  /^bedrock-runtime(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/,
  // Bedrock's Mantle, its OpenAI-compatible endpoint in each region (Codex's `amazon-bedrock` provider).
  /^bedrock-mantle\.[a-z0-9-]+\.api\.aws$/,
  /^api\.mistral\.ai$/,
  /^api\.deepseek\.com$/,
  /^api\.x\.ai$/,
  /^api\.groq\.com$/,
  /^openrouter\.ai$/,
];

const isModelApiHost = (host: string) => MODEL_API_HOSTS.some((pattern) => pattern.test(host.toLowerCase()));

/** What the proxy needs to stand in for the model APIs' hosts. */
export interface ForwardOptions {
  authority: UserAuthority;
  /** A host's requests sent to another origin than the host itself (`api.anthropic.com` → a local mock); such a host is intercepted too. */
  forwardTo?: ReadonlyMap<string, string>;
  /** Told, once per host and reason, of a client refused for speaking only HTTP/2 (`<host>: <why>`). */
  onRefused?: (line: string) => void;
}

/** A request the proxy relays on for a client that asked it as a plain HTTP proxy, unrecorded. */
export type Intercepted = Routed | "pass";

const ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";

const HTTP_1_1 = "http/1.1";
const HTTP_1_ONLY = "the forward proxy records HTTP/1.1 only";

/**
 * What an HTTP/2 client that spoke first gets (RFC 9113): the server's preface, an empty SETTINGS
 * frame, then GOAWAY with no stream processed and the error HTTP_1_1_REQUIRED (0xd), its debug data
 * saying why. The client reports that error rather than a garbled reply.
 */
function http11Required(): Buffer {
  const debug = Buffer.from(`payload-probe: ${HTTP_1_ONLY}`);
  const settings = Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
  const goaway = Buffer.alloc(9 + 8);
  goaway.writeUIntBE(8 + debug.length, 0, 3);
  goaway[3] = 0x7;
  goaway.writeUInt32BE(0xd, 13);
  return Buffer.concat([settings, goaway, debug]);
}

/** `host:port` of a CONNECT request (`[::1]:443` too), or null when it is not one. */
function connectAuthority(target: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65535) return null;
  return { host: (match[1] ?? match[2])!.toLowerCase(), port };
}

export class ForwardInterception {
  /** Where each intercepted TLS socket's requests go, and the Host they were sent for. */
  private readonly upstreamOf = new WeakMap<object, { upstream: string; host: string }>();
  private readonly resolvers = new Map<string, (url: string) => Routed>();
  private readonly open = new Set<Duplex>();
  /** `<host>: <why>` lines already told. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly options: ForwardOptions,
    private readonly isCredential: (name: string) => boolean,
  ) {}

  private intercepts(host: string): boolean {
    return this.options.forwardTo?.has(host) === true || isModelApiHost(host);
  }

  /** Where a host's requests go: its mapping, else the host itself over `scheme`. */
  private upstreamFor(host: string, port: number, scheme: "https" | "http"): string {
    const standard = scheme === "https" ? 443 : 80;
    return (
      this.options.forwardTo?.get(host) ??
      `${scheme}://${host.includes(":") ? `[${host}]` : host}${port === standard ? "" : `:${port}`}`
    );
  }

  /**
   * Serves CONNECT on `server`. Intercepted connections go to a server of their own whose requests
   * and upgrades `server` handles as its own: its parse errors (an HTTP/2 client speaking first) are
   * the interception's to answer, while `server`'s other clients keep node:http's answers.
   */
  attach(server: Server): void {
    const intercepted = createServer();
    intercepted.on("request", (request, response) => server.emit("request", request, response));
    if (server.listenerCount("upgrade") > 0)
      intercepted.on("upgrade", (request, socket, head) => server.emit("upgrade", request, socket, head));
    intercepted.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => this.clientError(error, socket));
    server.on("connect", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.track(socket);
      socket.on("error", () => socket.destroy());
      const authority = connectAuthority(request.url ?? "");
      if (!authority) {
        socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      if (this.intercepts(authority.host)) void this.terminate(intercepted, socket, head, authority);
      else this.tunnel(socket, head, authority);
    });
  }

  private track(socket: Duplex): void {
    this.open.add(socket);
    socket.once("close", () => this.open.delete(socket));
  }

  /** Ends the client's TLS here with a certificate for the host, and serves what comes over it. */
  private async terminate(server: Server, socket: Duplex, head: Buffer, to: { host: string; port: number }) {
    socket.pause();
    let context: ReturnType<typeof createSecureContext>;
    try {
      context = createSecureContext(await this.options.authority.certificateFor(to.host));
    } catch {
      socket.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    if (head.length > 0) socket.unshift(head);
    socket.write(ESTABLISHED);
    const host = to.port === 443 ? to.host : `${to.host}:${to.port}`;
    // The relay speaks HTTP/1.1: agreed when offered beside h2; a client offering no HTTP/1.1 gets
    // TLS's no_application_protocol alert at once rather than a connection that cannot be served.
    const ALPNCallback = ({ protocols }: { protocols: string[] }) => {
      if (protocols.includes(HTTP_1_1)) return HTTP_1_1;
      this.refuse(host, `the client offered only ${protocols.join(", ")} (ALPN) and ${HTTP_1_ONLY}: TLS refused`);
      return undefined;
    };
    const secure = new TLSSocket(socket as Socket, { isServer: true, secureContext: context, ALPNCallback });
    secure.on("error", () => secure.destroy());
    this.track(secure);
    this.upstreamOf.set(secure, { upstream: this.upstreamFor(to.host, to.port, "https"), host });
    server.emit("connection", secure);
    socket.resume();
  }

  /** Says `<host>: <why>` once (a client may retry), through the options' `onRefused`. */
  private refuse(host: string, why: string): void {
    const line = `${host}: ${why}`;
    if (this.refused.has(line)) return;
    this.refused.add(line);
    this.options.onRefused?.(line);
  }

  /**
   * A request on an intercepted connection that node:http cannot parse. HTTP/2 spoken without being
   * agreed (prior knowledge: its preface parses as `PRI * HTTP/2.0`) is answered in HTTP/2 with
   * HTTP_1_1_REQUIRED and said; anything else as node:http answers it when no one listens (a 400
   * when the connection can still take it), as Node's documentation of `clientError` shows.
   */
  private clientError(error: NodeJS.ErrnoException, socket: Duplex): void {
    const to = this.upstreamOf.get(socket);
    if (error.code === "HPE_PAUSED_H2_UPGRADE" && to && socket.writable) {
      this.refuse(to.host, `the client spoke HTTP/2 unasked (prior knowledge) and ${HTTP_1_ONLY}: HTTP_1_1_REQUIRED`);
      socket.end(http11Required());
      return;
    }
    if (error.code !== "ECONNRESET" && socket.writable)
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  }

  /** Joins the client to the host as bytes, neither read nor recorded. */
  private tunnel(socket: Duplex, head: Buffer, to: { host: string; port: number }): void {
    const upstream = connect(to.port, to.host);
    this.track(upstream);
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      socket.write(ESTABLISHED);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => {
      if (connected) socket.destroy();
      else socket.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    });
    socket.once("close", () => upstream.destroy());
    upstream.once("close", () => socket.destroy());
  }

  /**
   * A request's target at `upstream`, sent with the Host the client asked for (a mapped host's
   * request reaches its stand-in as signed for the real one).
   */
  private resolve(to: { upstream: string; host: string }, url: string): Routed {
    const key = `${to.upstream} ${to.host}`;
    let resolver = this.resolvers.get(key);
    if (!resolver) {
      const route = { prefix: "", upstream: to.upstream, hostHeader: to.host };
      resolver = proxyTargets(resolveRoutes([route], this.isCredential), this.isCredential);
      this.resolvers.set(key, resolver);
    }
    return resolver(url);
  }

  /**
   * Where an intercepted request goes (it came over a terminated connection, or asked for a model
   * API's host in absolute form); "pass" for another host asked in absolute form (a plain HTTP
   * proxy's request); undefined for a request to the proxy's own routes.
   */
  target(request: IncomingMessage): Intercepted | undefined {
    const url = request.url ?? "/";
    const intercepted = this.upstreamOf.get(request.socket);
    if (intercepted !== undefined) return this.resolve(intercepted, url);
    if (!/^http:\/\//i.test(url)) return undefined;
    const asked = new URL(url);
    const host = asked.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    if (!this.intercepts(host)) return "pass";
    return this.resolve({ upstream: this.upstreamFor(host, Number(asked.port || 80), "http"), host: asked.host }, url);
  }

  /** A plain HTTP proxy's request for another host: sent on as it came, its reply relayed, nothing recorded. */
  passThrough(request: IncomingMessage, response: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const onward = httpRequest(
        request.url!,
        { method: request.method, headers: endToEnd(request.headers) },
        (reply) => {
          response.writeHead(reply.statusCode ?? 502, endToEnd(reply.headers));
          reply.pipe(response);
          reply.once("end", resolve);
          reply.once("error", () => resolve(void response.destroy()));
        },
      );
      onward.once("error", (error) => {
        if (!response.headersSent) response.writeHead(502).end(`proxy: ${error.message}`);
        else response.destroy();
        resolve();
      });
      request.pipe(onward);
    });
  }

  /** Ends the tunnels and intercepted connections still open (the command has ended). */
  close(): void {
    for (const socket of this.open) socket.destroy();
  }
}

export type { ProxyTarget };
