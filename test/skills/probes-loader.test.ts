/** p5, p5-bash, p5-none and the `expect.skills` block they rely on. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { checkExpectations } from "../../src/probes/expect.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { runCheckedInProbe } from "./probe-runs.js";

describe("skills loader probes", () => {
  it("p5: every edge case holds against the diagnostics and the prompt", async () => {
    const result = await runCheckedInProbe("p5");
    expect(result.failures).toEqual([]);
    expect(result.skillDiagnostics.map((d) => d.message)).toEqual([
      "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
      "description is required",
      'name "twin" collision',
    ]);
  });

  it("p5-bash and p5-none: the block names bash, or is left out", async () => {
    expect((await runCheckedInProbe("p5-bash")).failures).toEqual([]);
    expect((await runCheckedInProbe("p5-none")).failures).toEqual([]);
  });
});

describe("expect.skills", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "payload-probe-expect-skills-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function probeWith(skills: string) {
    const file = join(dir, "probe.yaml");
    writeFileSync(file, `name: t\nmodel: {script: [{text: DONE}]}\nprompts: [hi]\nexpect:\n  skills:\n${skills}\n`);
    return loadProbeFile(file, dir);
  }

  it("reports a loaded list or a diagnostic that differs", async () => {
    const probe = await probeWith(
      "    loaded: [a, b]\n    diagnostics:\n      - {type: collision, message: 'name \"a\" collision', path: x, winner: w, loser: x}",
    );
    const observation = { records: [], systemTexts: [], toolResults: [], surfaces: [], wire: [], wireLinesBefore: [] };
    const held = checkExpectations(probe.expect, {
      ...observation,
      skills: {
        loaded: ["a", "b"],
        diagnostics: [{ type: "collision", message: 'name "a" collision', path: "x", winner: "w", loser: "x" }],
      },
    });
    expect(held).toEqual([]);
    const failed = checkExpectations(probe.expect, { ...observation, skills: { loaded: ["b"], diagnostics: [] } });
    expect(failed).toHaveLength(2);
    expect(failed[0]).toBe('skills: loaded expected ["a","b"], got ["b"]');
  });

  it("rejects an unknown diagnostic type, naming the field", async () => {
    await expect(probeWith("    diagnostics: [{type: fatal, message: m, path: p}]")).rejects.toThrow(UserError);
    await expect(probeWith("    diagnostics: [{type: fatal, message: m, path: p}]")).rejects.toThrow(
      'field "expect.skills.diagnostics[0].type"',
    );
  });
});
