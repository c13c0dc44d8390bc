import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { request as upstreamRequest } from "undici";
import type { ResponseStream, WireApi } from "../providers/types.js";
import { openCaptureRun } from "./capture-run.js";
import { readBody, serveHttp } from "./http.js";

export interface CaptureProxyOptions {
  /** The provider's base URL; a request for `/v1/chat/completions` goes to `<upstream>/v1/chat/completions`. */
  upstream: string;
  runsDir: string;
  /** Names the run folder `<runsDir>/<name>/` (default `proxy`). */
  name?: string;
  port?: number;
  host?: string;
  database?: boolean;
}

export interface CaptureProxy {
  url: string;
  runId: string;
  dir: string;
  /** Stops serving, waits for open replies, then finishes the run; later calls return the same promise. */
  close(): Promise<void>;
}

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); each side sets its own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
]);

/** Query parameters that carry credentials in some providers' URLs (`?key=`): kept by name only in the capture. */
const isCredentialName = (name: string) =>
  /^(key|api[-_]?key|auth|authorization|sig|signature)$|token|secret|password/i.test(name);

/** The wire APIs whose bodies a codec can take apart, by request path. */
function apiForPath(path: string): WireApi | null {
  return path.endsWith("/chat/completions") ? "openai-completions" : null;
}

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

/** The URL as recorded: credential-like query values replaced, so a key in the URL never reaches a file. */
function capturedUrl(url: URL): string {
  const safe = new URL(url);
  for (const name of [...safe.searchParams.keys()])
    if (isCredentialName(name)) safe.searchParams.set(name, "[redacted]");
  return safe.toString();
}

function isDissectable(api: WireApi | null, body: string): boolean {
  if (api === null) return false;
  try {
    return typeof JSON.parse(body) === "object";
  } catch {
    return false;
  }
}

/**
 * A pass-through in front of a real provider: each request goes upstream with its method, path,
 * query, body bytes and end-to-end headers unchanged, the response comes back chunk by chunk as it
 * arrives, and both are captured. Headers are never stored, so credentials cannot leak into a run.
 */
export async function startCaptureProxy(options: CaptureProxyOptions): Promise<CaptureProxy> {
  const upstream = new URL(options.upstream);
  const run = openCaptureRun({ name: options.name ?? "proxy", runsDir: options.runsDir, database: options.database });

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const incoming = new URL(request.url ?? "/", "http://proxy");
    const target = new URL(upstream.toString().replace(/\/$/, "") + incoming.pathname + incoming.search);
    const bytes = await readBody(request);
    const body = bytes.toString("utf8");
    const api = apiForPath(incoming.pathname);

    // Sends upstream and relays each chunk to the client the moment it arrives; the capture reads the text.
    const send = async (): Promise<ResponseStream> => {
      const reply = await upstreamRequest(target, {
        method: request.method as "POST",
        headers: forwardedHeaders(request.headers),
        body: bytes.length > 0 ? bytes : undefined,
      });
      const headers = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      response.writeHead(reply.statusCode, headers as Record<string, string | string[]>);
      response.flushHeaders();
      return (async function* () {
        const decoder = new TextDecoder();
        for await (const chunk of reply.body) {
          response.write(chunk);
          yield decoder.decode(chunk as Buffer, { stream: true });
        }
        yield decoder.decode();
      })();
    };
    const url = capturedUrl(target);
    const stream = isDissectable(api, body)
      ? await run.capture.wrap(() => send())({ api: api!, url, body, kind: "loop" })
      : await run.capture.passSide(url, body, send);
    for await (const _ of stream) {
      // The relay happens inside send's stream; draining it is what moves the bytes and fills the capture.
    }
    response.end();
  }

  const host = options.host ?? "127.0.0.1";
  const failure = (error: Error) => ({
    status: 502,
    message: `proxy: upstream ${upstream.origin} failed: ${error.message}`,
  });
  const service = await serveHttp(forward, failure, options.port ?? 0, host).catch((error: unknown) => {
    run.close();
    throw error;
  });
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${service.port}`,
    runId: run.id,
    dir: run.dir,
    close() {
      closing ??= service.close().then(() => run.close());
      return closing;
    },
  };
}
