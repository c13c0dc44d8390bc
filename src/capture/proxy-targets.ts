/**
 * Where a proxied request goes, worked out once per distinct request URL: an agent asks for a handful
 * of URLs over and over, and parsing each one again (its route, its target, the redacted URL the
 * capture stores, the API its path names) is work on the thread that relays.
 */
import type { WireApi } from "../providers/types.js";
import { type ResolvedRoute, routeFor, targetOf } from "./proxy-routes.js";
import { redactUrl } from "./redact.js";
import { apiForPath } from "./wire-request.js";

/** A request URL resolved: its route and target, the URL as stored, the API of its path. */
export interface ProxyTarget {
  route: ResolvedRoute;
  target: URL;
  /** `target`'s path and query, as sent upstream. */
  targetPath: string;
  /** The target with userinfo and credential query values redacted. */
  shown: string;
  api: WireApi | null;
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
    const incoming = new URL(url, "http://proxy");
    const route = routeFor(routes, incoming.pathname);
    if (!route) return { unrouted: incoming.pathname };
    const target = targetOf(route, incoming);
    const resolved = {
      route,
      target,
      targetPath: target.pathname + target.search,
      shown: redactUrl(target, isCredential),
      api: apiForPath(incoming.pathname),
    };
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(url, resolved);
    return resolved;
  };
}
