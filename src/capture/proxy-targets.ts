/**
 * Where a proxied request goes, worked out once per distinct request URL: an agent asks for a handful
 * of URLs over and over, and parsing each one again (its route, its target, the redacted URL the
 * capture stores, the API its path names) is work on the thread that relays.
 */
import type { WireApi } from "../providers/types.js";
import { isRoutingDiscovery, keepRoutingHere } from "./chatgpt-routing.js";
import { type ResolvedRoute, routeFor, targetPathOf } from "./proxy-routes.js";
import { redactQuery } from "./redact.js";
import { apiForPath } from "./wire-request.js";

/** A request URL resolved: its route and target, the URL as stored, the API of its path. */
export interface ProxyTarget {
  route: ResolvedRoute;
  /** The upstream's scheme, host and port (its path is `targetPath`: a URL would resolve dot segments). */
  target: URL;
  /** The path and query sent upstream, as the client wrote them. */
  targetPath: string;
  /** The target with userinfo and credential query values redacted. */
  shown: string;
  api: WireApi | null;
  /** What the reply becomes before the client gets it: Codex's workspace routing kept on the proxy (chatgpt-routing.ts). */
  rewriteReply?: (body: Buffer) => Buffer;
}

/** What a request URL came to: a target, or the path that no route serves. */
export type Routed = ProxyTarget | { unrouted: string };

/** More distinct URLs than this (a client making up new ones) start the memo afresh rather than grow it. */
const MEMO_LIMIT = 256;

/** Resolves request URLs (`request.url`, path and query) against `routes`, remembering the ones that route. */
export function proxyTargets(
  routes: ResolvedRoute[],
  isCredential: (name: string) => boolean,
): (url: string) => Routed {
  const memo = new Map<string, ProxyTarget>();
  return (url) => {
    const known = memo.get(url);
    if (known) return known;
    const { path, query } = requestTarget(url);
    const route = routeFor(routes, path);
    if (!route) return { unrouted: path };
    const targetPath = targetPathOf(route, path) + query;
    const target = new URL(route.origin);
    const resolved = {
      route,
      target,
      targetPath,
      // The URL as sent: the origin, the path as the client wrote it, credential query values redacted.
      shown: route.origin + targetPathOf(route, path) + (query && `?${redactQuery(query.slice(1), isCredential)}`),
      api: apiForPath(path),
      ...(isRoutingDiscovery(path) && { rewriteReply: (body: Buffer) => keepRoutingHere(body, route.origin) }),
    };
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(url, resolved);
    return resolved;
  };
}

/**
 * A request-target's path and query, unresolved: the proxy forwards the path as the client wrote it
 * (RFC 9112 §3.2). The absolute form (`POST http://elsewhere/x`) names the proxy's upstream all the
 * same: only its path and query are kept.
 */
function requestTarget(url: string): { path: string; query: string } {
  const originForm = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  const mark = originForm.indexOf("?");
  const path = mark < 0 ? originForm : originForm.slice(0, mark);
  return { path: path.startsWith("/") ? path : `/${path}`, query: mark < 0 ? "" : originForm.slice(mark) };
}
