import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";

const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "pp-check-cli-"));
  mkdirSync(join(scratch, "baselines"));
  // A bug planted in the spawned CLI: the capture hashes every request body, so the first provider
  // request of the run throws a TypeError that is neither bad input nor a failed check.
  writeFileSync(
    join(scratch, "plant-bug.mjs"),
    `import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
crypto.createHash = () => { throw new TypeError("planted bug in createHash"); };
syncBuiltinESMExports();
`,
  );
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `check p5-none` (one request, no MCP) in scratch folders: its own runs, workspace and baselines. */
function check(extraEnv: Record<string, string> = {}) {
  const args = [MAIN, "check", "p5-none", "--runs", join(scratch, "runs"), "--baseline", join(scratch, "baselines")];
  const env = { ...process.env, PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws"), ...extraEnv };
  const child = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, env, encoding: "utf8", timeout: 120_000 });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe("check exit codes (the built CLI)", () => {
  it("a missing baseline is input the gate cannot use: exit 2, naming the probe and the file, no stack", () => {
    const { code, stdout, stderr } = check();
    expect(code).toBe(2);
    expect(stdout).toContain(`no baseline for probe "p5-none"`);
    expect(stdout).toContain(join(scratch, "baselines", "p5-none.json"));
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("a bug while a probe runs is an internal error: exit 3 with its stack, not 'could not evaluate'", () => {
    const { code, stdout, stderr } = check({
      NODE_OPTIONS: `--import=${pathToFileURL(join(scratch, "plant-bug.mjs"))}`,
    });
    expect(code).toBe(3);
    expect(stderr).toContain("internal error (this is a bug)");
    expect(stderr).toContain("TypeError: planted bug in createHash");
    expect(stderr).toMatch(/\n\s+at /);
    expect(stdout).not.toContain("could not");
  });
});
