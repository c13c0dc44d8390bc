/**
 * Codex signed in with ChatGPT asks the backend where its workspace's model requests go before the
 * first one: `GET <chatgpt_base_url>/wham/accounts/check` answers, per account, a
 * `workspace_backend_origin` (an HTTPS origin, or `NO_CONSTRAINT`) and an `account_routing_override`.
 * Codex then sends its model requests to `<origin>/backend-api/codex/responses`, and with
 * `NO_CONSTRAINT` to the origin of its `chatgpt_base_url` (codex-rs app-server
 * `workspace_routing.rs` `resolve_routing`, rust-v0.169.0 as seen). Told the backend's own origin,
 * Codex would pass the proxy by; told `NO_CONSTRAINT`, it stays on the proxy, which forwards to that
 * same origin. An account routed anywhere else (a workspace kept in another region) is left as it is:
 * the proxy has no route there.
 */
import { isObject, parseObject } from "./chat-request.js";

const DISCOVERY_PATH = "/wham/accounts/check";

/** Whether a request path (no query) is the routing discovery. */
export function isRoutingDiscovery(path: string): boolean {
  return path.endsWith(DISCOVERY_PATH);
}

/** The account entries of a reply: a list, or a map of `{account: entry}`. */
function entriesOf(accounts: unknown): Record<string, unknown>[] {
  const listed = Array.isArray(accounts) ? accounts : isObject(accounts) ? Object.values(accounts) : [];
  return listed.flatMap((item) => {
    const entry = isObject(item) && isObject(item.account) ? item.account : item;
    return isObject(entry) ? [entry] : [];
  });
}

function sameOrigin(value: unknown, origin: string): boolean {
  if (typeof value !== "string") return false;
  try {
    return new URL(value).origin === origin;
  } catch {
    return false;
  }
}

/**
 * The discovery's reply with every account routed to `upstreamOrigin` (the route's upstream) told
 * `NO_CONSTRAINT` instead, so that Codex keeps sending to the proxy; the bytes as they were when
 * nothing is changed or the reply is not a JSON object.
 */
export function keepRoutingHere(body: Buffer, upstreamOrigin: string): Buffer {
  const reply = parseObject(body.toString("utf8"));
  if (reply === null) return body;
  let changed = false;
  for (const entry of entriesOf(reply.accounts)) {
    if (!sameOrigin(entry.workspace_backend_origin, upstreamOrigin)) continue;
    entry.workspace_backend_origin = "NO_CONSTRAINT";
    changed = true;
  }
  return changed ? Buffer.from(JSON.stringify(reply)) : body;
}
