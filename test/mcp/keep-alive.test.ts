/**
 * KeepAlive's own rules, on hooks that record what they are asked (the lifecycle tests drive it
 * with real stub servers; here a ping can be held open at exactly the moment shutdown comes).
 */
import { describe, expect, it } from "vitest";
import { KeepAlive, type KeepAliveHooks } from "../../src/mcp/keep-alive.js";
import { conditionWaiters } from "../fixtures/condition-waiters.js";

/** Hooks whose pings stay open until the test settles them; every call is recorded, and `until` waits for one. */
function recordingHooks() {
  const calls: string[] = [];
  const pending: { reject(error: Error): void }[] = [];
  const recorded = conditionWaiters();
  const record = (call: string) => {
    calls.push(call);
    recorded.changed();
  };
  const hooks: KeepAliveHooks = {
    ping: (server) =>
      new Promise((_, reject) => {
        pending.push({ reject });
        record(`ping ${server}`);
      }),
    drop: async (server) => record(`drop ${server}`),
    reconnect: async (server) => record(`reconnect ${server}`),
    log: (type, data) => record(`${type} ${String(data.server)}`),
  };
  return { hooks, calls, pending, until: recorded.until };
}

const TIMINGS = { healthCheckMs: 5, reconnectMinMs: 60_000, reconnectMaxMs: 60_000 };

describe("keep-alive health checks", () => {
  it("a ping that fails while running drops the server and schedules a reconnect", async () => {
    const { hooks, calls, pending, until } = recordingHooks();
    const keepAlive = new KeepAlive(TIMINGS, hooks);
    keepAlive.connected("a");
    await until(() => pending.length > 0);
    pending[0]!.reject(new Error("no answer"));
    await until(() => calls.includes("mcp_reconnect_scheduled a"));
    keepAlive.stop();
    expect(calls.slice(0, 3)).toEqual(["ping a", "drop a", "mcp_reconnect_scheduled a"]);
  });

  it("a ping still in flight at shutdown that then fails is not a failed check", async () => {
    const { hooks, calls, pending, until } = recordingHooks();
    const keepAlive = new KeepAlive(TIMINGS, hooks);
    keepAlive.connected("a");
    await until(() => pending.length > 0);
    keepAlive.stop();
    pending[0]!.reject(new Error("connection closed"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls).toEqual(["ping a"]);
  });
});
