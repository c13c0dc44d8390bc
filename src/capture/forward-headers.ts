import type { IncomingHttpHeaders } from "node:http";

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1); each side sets its own.
 * `expect` joins them: the proxy answers `100 Continue` itself (node:http does, before the body is
 * read) and sends the whole body upstream at once, so the upstream has nothing to wait for.
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "expect",
]);

/** A header of the connection, not the message: a tunnel's upgrade request leaves it out too. */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name.toLowerCase());
}

/** The headers a proxy passes on: all but the hop-by-hop ones. */
export function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>) {
  const kept: Record<string, string | string[]> = {};
  // for…in rather than Object.entries: no array per header on the thread that relays.
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !isHopByHop(name)) kept[name] = value;
  }
  return kept;
}

/**
 * Userinfo in the upstream URL becomes HTTP Basic credentials (RFC 7617), as curl sends them; a
 * client's own Authorization header wins. undici would otherwise drop it silently.
 */
export function upstreamAuthorization(upstream: URL): string | undefined {
  if (upstream.username === "" && upstream.password === "") return undefined;
  const pair = `${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`;
  return `Basic ${Buffer.from(pair, "utf8").toString("base64")}`;
}

/** A header's value as one line: repeated fields are one comma-separated list (RFC 9110 §5.3). */
export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
