/**
 * Codex's workspace routing discovery as the proxy hands it on: an account routed to the route's
 * upstream is told NO_CONSTRAINT (so Codex keeps to the proxy); anything else is left as it came.
 */
import { describe, expect, it } from "vitest";
import { isRoutingDiscovery, keepRoutingHere } from "../../src/capture/chatgpt-routing.js";

const UPSTREAM = "https://chatgpt.com";
const rewritten = (reply: unknown) =>
  JSON.parse(keepRoutingHere(Buffer.from(JSON.stringify(reply)), UPSTREAM).toString());

describe("ChatGPT workspace routing", () => {
  it("finds the discovery under any base path", () => {
    expect(isRoutingDiscovery("/backend-api/wham/accounts/check")).toBe(true);
    expect(isRoutingDiscovery("/api/codex/wham/accounts/check")).toBe(true);
    expect(isRoutingDiscovery("/backend-api/wham/usage")).toBe(false);
  });

  it("an account routed to the upstream's origin, in a list or a map of envelopes, is kept on the proxy", () => {
    const entry = {
      id: "a1",
      workspace_backend_origin: "https://chatgpt.com/",
      account_routing_override: "NO_CONSTRAINT",
    };
    expect(rewritten({ accounts: [entry], account_ordering: ["a1"] })).toEqual({
      accounts: [{ ...entry, workspace_backend_origin: "NO_CONSTRAINT" }],
      account_ordering: ["a1"],
    });
    expect(rewritten({ accounts: { a1: { account: entry } } })).toEqual({
      accounts: { a1: { account: { ...entry, workspace_backend_origin: "NO_CONSTRAINT" } } },
    });
  });

  it("another origin, NO_CONSTRAINT, a missing field and text that is not JSON pass as they came, byte for byte", () => {
    for (const text of [
      JSON.stringify({ accounts: [{ id: "a", workspace_backend_origin: "https://eu.example.com" }] }),
      '{"accounts": [{"id": "a", "workspace_backend_origin": "NO_CONSTRAINT"}]}',
      '{"accounts": [{"id": "a"}], "x": 1}',
      "not json",
      "[1]",
    ]) {
      const body = Buffer.from(text);
      expect(keepRoutingHere(body, UPSTREAM)).toBe(body);
    }
  });
});
