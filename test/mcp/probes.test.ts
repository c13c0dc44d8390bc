/**
 * The documented MCP experiments end to end: each probe file runs through runProbe in temp folders
 * (the suite's shared runs, test/fixtures/shared-runs.ts) and its expect block holds.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sharedRun } from "../fixtures/shared-runs.js";

describe("MCP probes hold their expectations", () => {
  for (const name of ["p0", "p0-cold", "p2", "p2-direct", "p2-proxy", "seq-namespace", "seq-search"]) {
    it(name, async () => {
      expect((await sharedRun(name)).failures).toEqual([]);
    });
  }

  it("p7: the sampling request sits between the tool call and its result", async () => {
    const result = await sharedRun("p7");
    expect(result.failures).toEqual([]);
    const events = readFileSync(join(result.dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; kind?: string });
    const order = events
      .filter((e) => ["tool_call", "tool_result", "request"].includes(e.type))
      .map((e) => (e.type === "request" ? e.kind : e.type));
    expect(order).toEqual(["loop", "tool_call", "sampling", "tool_result", "loop"]);
  });
});
