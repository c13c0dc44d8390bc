/**
 * Every script under scripts/ and scripts/bench/ answers `--help` with its opening comment and does
 * nothing else: a benchmark asked for help must not start a minute of work. The modules the scripts
 * share are named here; every other file is a script.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";

const MODULES = ["scripts/help.mjs", "scripts/bench/harness.mjs", "scripts/bench/proxy-kit.mjs"];
const scripts = ["scripts", "scripts/bench"].flatMap((folder) =>
  readdirSync(join(PROJECT_ROOT, folder))
    .filter((name) => name.endsWith(".mjs"))
    .map((name) => join(folder, name))
    .filter((path) => !MODULES.includes(path)),
);

describe("scripts/*.mjs --help", () => {
  it.each(scripts)("%s prints its opening comment and exits 0", (name) => {
    const file = join(PROJECT_ROOT, name);
    const result = spawnSync(process.execPath, [file, "--help"], { encoding: "utf8", timeout: 120_000 });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const firstLine = result.stdout.split("\n")[0]!;
    expect(firstLine.length).toBeGreaterThan(20);
    // The first line of the comment, as written in the file (after its comment marker).
    expect(readFileSync(file, "utf8")).toContain(firstLine);
  });
});
