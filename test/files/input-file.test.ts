/**
 * Issue 21: input files had no size limit (a 30 MB probe file parsed for 37 s at 1.6 GB; 300 MB was
 * still parsing at 120 s). Every YAML or JSON file a user hands in is refused over 1 MiB, before it is
 * parsed, naming the file: probe files, MCP configs, profiles, stub fixtures, tolerances, pricing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTolerances } from "../../src/analysis/check/check.js";
import { loadPricing } from "../../src/analysis/cost/pricing.js";
import { MAX_INPUT_FILE_BYTES, readInputFile } from "../../src/files/input-file.js";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { piMcpConfig } from "../../src/probes/pi-agent-dir.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { loadProfile } from "../../src/runtime/load-profile.js";
import { loadFixture } from "../../src/stub-mcp/fixture.js";
import { userErrorOf } from "../fixtures/user-error.js";

const dir = mkdtempSync(join(tmpdir(), "pp-input-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `{}` after blank lines: valid JSON and YAML, `bytes` long. */
function blankPadded(name: string, bytes: number): string {
  const path = join(dir, name);
  writeFileSync(path, `${"\n".repeat(bytes - 3)}{}\n`);
  return path;
}

const tooLarge = (path: string, what: string) =>
  `${path}: expected a ${what} of at most 1 MiB, but it is larger (reading stopped there)`;

describe("readInputFile", () => {
  it("reads a file of exactly 1 MiB and refuses one byte more", () => {
    expect(readInputFile(blankPadded("at-limit.json", MAX_INPUT_FILE_BYTES), "profile")).toHaveLength(
      MAX_INPUT_FILE_BYTES,
    );
    const over = blankPadded("over.json", MAX_INPUT_FILE_BYTES + 1);
    expect(userErrorOf(() => readInputFile(over, "profile")).message).toBe(tooLarge(over, "profile"));
  });

  it("stops at the limit whatever the file is: /dev/zero is refused, not read on", () => {
    expect(userErrorOf(() => readInputFile("/dev/zero", "probe file")).message).toBe(
      tooLarge("/dev/zero", "probe file"),
    );
  });

  it("names a missing or unreadable file", () => {
    expect(userErrorOf(() => readInputFile(join(dir, "absent.yaml"), "probe file")).message).toBe(
      `${join(dir, "absent.yaml")}: probe file not found`,
    );
    expect(userErrorOf(() => readInputFile(dir, "pricing file")).message).toBe(
      `${dir}: cannot read the pricing file (EISDIR)`,
    );
  });
});

describe("every input file over 1 MiB is refused before it is parsed (issue 21)", () => {
  const over = (name: string) => blankPadded(name, MAX_INPUT_FILE_BYTES + 1);

  it("a probe file", async () => {
    const file = over("probe.yaml");
    await expect(loadProbeFile(file, PROJECT_ROOT)).rejects.toThrow(tooLarge(file, "probe file"));
  });

  it("an MCP config, as the runtime and as pi's config read it", () => {
    const file = over("mcp.json");
    expect(() => loadMcpConfig({ cwd: dir, agentDir: dir, home: dir, configPath: file, exclusive: true })).toThrow(
      tooLarge(file, "MCP config"),
    );
    expect(() => piMcpConfig(file)).toThrow(tooLarge(file, "MCP config"));
  });

  it("a profile, a stub fixture, a tolerances file and a pricing file", () => {
    const files = { profile: over("profile.json"), fixture: over("fixture.json"), yaml: over("table.yaml") };
    expect(() => loadProfile(files.profile)).toThrow(tooLarge(files.profile, "profile"));
    expect(() => loadFixture(files.fixture)).toThrow(tooLarge(files.fixture, "stub fixture"));
    expect(() => loadTolerances(files.yaml)).toThrow(tooLarge(files.yaml, "tolerances file"));
    expect(() => loadPricing(files.yaml)).toThrow(tooLarge(files.yaml, "pricing file"));
  });
});

describe("a tolerances or pricing file that is not YAML", () => {
  it("is refused naming the file and what the parser found", () => {
    const file = join(dir, "broken.yaml");
    writeFileSync(file, "default: [unclosed\n");
    for (const load of [() => loadTolerances(file), () => loadPricing(file)]) {
      const { message } = userErrorOf(load);
      expect(message.startsWith(`${file}: expected YAML (`), message).toBe(true);
      expect(message).toContain("unclosed");
      // One line, as every error is: the parser's excerpt and caret do not follow it.
      expect(message).not.toContain("\n");
    }
  });
});
