/**
 * A server started early (`startEarly`, as a probe does for the servers its expectations say will be
 * connected): its process runs before the first use, receives nothing until then, and is the one the
 * first use connects; one never used is ended at shutdown. Real stub processes, read from /proc.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readWireLog } from "../../src/stub-mcp/wire-log.js";
import { cleanupAdapters, startAdapter, stubServer } from "./adapter-harness.js";

afterEach(cleanupAdapters);

/** This process's child processes running the stub on `fixture`, by pid (Linux /proc). */
function stubChildren(fixture: string): number[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(" ");
  return children
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`fixtures/stub-servers/${fixture}.json`);
      } catch {
        return false; // ended since the list was read
      }
    });
}

/** The process is spawned a few promise steps after the adapter loads; one turn of the event loop covers them. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** An adapter whose server `a` has valid cached metadata, so it stays unconnected until used. */
async function adapterWithCachedServer(flags: string[] = []) {
  const servers = { a: stubServer("a", {}, flags) };
  const first = await startAdapter({ servers });
  await first.shutdown();
  const wire = join(first.dir, "wire.jsonl");
  const adapter = await startAdapter({
    servers,
    dir: first.dir,
    cache: "keep",
    startEarly: ["a"],
    env: { PAYLOAD_PROBE_WIRE_LOG: wire },
  });
  await nextTurn();
  return { adapter, wire };
}

describe("startEarly", () => {
  it("starts the process before its first use, sends it nothing, and connects that process at first use", async () => {
    const { adapter, wire } = await adapterWithCachedServer();
    const early = stubChildren("a");
    expect(early).toHaveLength(1);
    expect(existsSync(wire)).toBe(false);
    expect(adapter.events.map((e) => e.type)).not.toContain("mcp_connect");

    expect((await adapter.call("mcp", { tool: "a_tool1", args: { value: "v" } })).content).toBe("A_TOOL1:v");
    expect(stubChildren("a")).toEqual(early);
    expect(readWireLog(wire).map((line) => (line.message as { method?: string }).method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
    ]);
    expect(adapter.events.filter((e) => e.type === "mcp_connect")).toHaveLength(1);
  });

  it("ends a process that was never used at shutdown, without a connect or disconnect event", async () => {
    const { adapter, wire } = await adapterWithCachedServer();
    const [pid] = stubChildren("a");
    expect(pid).toBeDefined();
    await adapter.shutdown();
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(existsSync(wire)).toBe(false);
    expect(adapter.events.map((e) => e.type)).not.toContain("mcp_connect");
    expect(adapter.events.map((e) => e.type)).not.toContain("mcp_disconnect");
  });

  it("holds what the process wrote before the connection (garbage on stdout) and connects all the same", async () => {
    const { adapter } = await adapterWithCachedServer(["--fault", "garbage-on-start"]);
    expect((await adapter.call("mcp", { tool: "a_tool1", args: { value: "v" } })).content).toBe("A_TOOL1:v");
  });
});
