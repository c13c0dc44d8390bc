/** The documented MCP experiments end to end: each probe file runs through runProbe in temp folders. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadProbeFile } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { ROOT } from "./adapter-harness.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-probes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(name: string) {
  const probe = loadProbeFile(join(ROOT, "probes", `${name}.yaml`), ROOT);
  return runProbe(probe, { root: ROOT, runsDir: join(dir, "runs"), workspaceRoot: join(dir, "ws"), database: false });
}

describe("MCP probes hold their expectations", () => {
  for (const name of ["p0", "p0-cold", "p2", "p2-direct", "p2-proxy", "seq-namespace", "seq-search"]) {
    it(name, async () => {
      expect((await run(name)).failures).toEqual([]);
    }, 60_000);
  }

  it("p7: the sampling request sits between the tool call and its result", async () => {
    const result = await run("p7");
    expect(result.failures).toEqual([]);
    const events = readFileSync(join(result.dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; kind?: string });
    const order = events
      .filter((e) => ["tool_call", "tool_result", "request"].includes(e.type))
      .map((e) => (e.type === "request" ? e.kind : e.type));
    expect(order).toEqual(["loop", "tool_call", "sampling", "tool_result", "loop"]);
  }, 60_000);
});
