/** p6 run for real: the load_skill model's catalog, environment part, tool snapshot and failures. */
import { describe, expect, it } from "vitest";
import { runCheckedInProbe } from "./probe-runs.js";

describe("p6: progressive disclosure with load_skill", () => {
  it("holds every expectation: stable catalog, SOP in the environment, the skill tool from the next run", async () => {
    const result = await runCheckedInProbe("p6");
    expect(result.failures).toEqual([]);
    const stable = new Set(result.records.map((r) => r.systemParts[0]!.sha256));
    const environment = result.records.map((r) => r.systemParts[1]!.sha256);
    expect(stable.size).toBe(1);
    // The environment changes exactly when load_skill's effect arrives: requests 4 and 6.
    expect(new Set(environment.slice(0, 3)).size).toBe(1);
    expect(environment[3]).not.toBe(environment[2]);
    expect(environment[5]).not.toBe(environment[4]);
    expect(result.records.map((r) => r.tools.includes("deploy_status"))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });
});
