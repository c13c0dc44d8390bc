/** p3, p4 and p4-hidden, run for real on the scripted model (experiments.md). */
import { describe, expect, it } from "vitest";
import { runCheckedInProbe } from "./probe-runs.js";

describe("skills probes in pi's index mode", () => {
  it("p3: the body reaches the model only through read, and the system prompt stays byte-identical", async () => {
    const result = await runCheckedInProbe("p3");
    expect(result.failures).toEqual([]);
    const [first, second] = result.records;
    expect(result.records.map((r) => r.markers)).toEqual([
      { index: 1, location: 1, body: 0 },
      { index: 1, location: 1, body: 1 },
    ]);
    expect(second!.hashes.system).toBe(first!.hashes.system);
    expect(result.skillDiagnostics).toEqual([]);
  });

  it("p4: the user message is the <skill> block followed by a blank line and the arguments", async () => {
    const result = await runCheckedInProbe("p4");
    expect(result.failures).toEqual([]);
    expect(result.records.map((r) => r.markers)).toEqual([{ index: 1, body: 1, wrapper: 1, unexpanded: 0 }]);
  });

  it("p4-hidden: the hidden skill is absent from the system prompt yet still expands", async () => {
    const result = await runCheckedInProbe("p4-hidden");
    expect(result.failures).toEqual([]);
    expect(result.records[0]!.markers).toEqual({ index: 0, body: 1, wrapper: 1, unexpanded: 0 });
  });
});
