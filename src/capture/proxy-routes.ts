/**
 * Which upstream a proxied request goes to. One proxy serves several upstreams on one port, each
 * under a path prefix of its own (`/anthropic`, `/openai`); the prefix is taken off and the rest of
 * the path goes to that route's upstream. `proxy --upstream URL` is the one route with the empty
 * prefix, which serves every path.
 */
import { upstreamAuthorization } from "./forward-headers.js";
import { redactUrl } from "./redact.js";

/** A path prefix and the upstream it forwards to. */
export interface ProxyRoute {
  /** `""` (every path) or `/` and a name without further slashes: `/anthropic`. */
  prefix: string;
  /** The upstream's base URL (http or https); its userinfo becomes Basic credentials. */
  upstream: string;
  /** The Host header sent upstream instead of the upstream's own: an intercepted host's, which a signature covers. */
  hostHeader?: string;
}

/** A route ready to forward: its upstream without userinfo, and the credentials that came in it. */
export interface ResolvedRoute {
  prefix: string;
  /** The upstream's origin and its path without a trailing slash (`https://host`, `/v1`). */
  origin: string;
  basePath: string;
  /** `Basic …` from the upstream URL's userinfo, sent when the client sends no Authorization. */
  authorization: string | undefined;
  /** The upstream as it may be shown: userinfo and credential query values redacted. */
  shown: string;
  hostHeader?: string;
}

const PREFIX = /^(\/[A-Za-z0-9._~-]+)?$/;

/** The routes as the proxy uses them; a prefix that is not one path segment, or given twice, is a bug of the caller. */
export function resolveRoutes(routes: ProxyRoute[], isCredential: (name: string) => boolean): ResolvedRoute[] {
  if (routes.length === 0) throw new Error("a proxy needs at least one route");
  const seen = new Set<string>();
  return routes.map(({ prefix, upstream, hostHeader }) => {
    if (!PREFIX.test(prefix) || seen.has(prefix)) throw new Error(`bad or repeated route prefix "${prefix}"`);
    seen.add(prefix);
    const url = new URL(upstream);
    const authorization = upstreamAuthorization(url);
    return {
      prefix,
      origin: url.origin,
      basePath: url.pathname.replace(/\/$/, ""),
      authorization,
      shown: redactUrl(new URL(upstream), isCredential),
      ...(hostHeader !== undefined && { hostHeader }),
    };
  });
}

/** The route serving a request path (the longest prefix that is the path or a folder of it), or undefined. */
export function routeFor(routes: ResolvedRoute[], path: string): ResolvedRoute | undefined {
  let best: ResolvedRoute | undefined;
  for (const route of routes) {
    const under = route.prefix === "" || path === route.prefix || path.startsWith(`${route.prefix}/`);
    if (under && (best === undefined || route.prefix.length > best.prefix.length)) best = route;
  }
  return best;
}

/** An API version as a path segment: OpenAI's and Anthropic's `v1`, Google's `v1beta` and `v1alpha`. */
const VERSION_SEGMENT = /^\/v\d+(?:alpha|beta)?\d*$/;

/**
 * The path a request goes to upstream: its path without the route's prefix, under the upstream's
 * path, as the client wrote it (no dot segment or percent-encoding resolved). A path that already
 * starts with the upstream's path (a client given the proxy's address with it, as `proxy` prints)
 * keeps it rather than repeat it: `--upstream http://h/v1` takes `/v1/chat/completions` to
 * `http://h/v1/chat/completions`, and `/chat/completions` there too. A path that starts with another
 * API version than the one the upstream's path ends in keeps its own: a Gemini client sends
 * `/v1beta/models/…` (Google's API versions page: v1 and v1beta), which `--upstream http://h/v1`
 * (what `mock` prints) takes to `http://h/v1beta/models/…`, not `/v1/v1beta/…`.
 */
export function targetPathOf(route: ResolvedRoute, path: string): string {
  const rest = path.slice(route.prefix.length);
  if (rest.startsWith(`${route.basePath}/`)) return rest;
  const lastSegment = route.basePath.slice(route.basePath.lastIndexOf("/"));
  const firstSegment = rest.slice(0, rest.indexOf("/", 1) < 0 ? rest.length : rest.indexOf("/", 1));
  if (VERSION_SEGMENT.test(lastSegment) && VERSION_SEGMENT.test(firstSegment) && rest.length > firstSegment.length)
    return route.basePath.slice(0, -lastSegment.length) + rest;
  return route.basePath + rest;
}

/** The 404 a request under no route gets: what it asked for, and the prefixes there are. */
export function unroutedMessage(routes: ResolvedRoute[], method: string, path: string): string {
  const prefixes = routes.map((route) => route.prefix).join(", ");
  return `proxy: no route for ${method} ${path}; paths start with one of ${prefixes}`;
}
