/**
 * The probe memo (src/probes/probe-memo.ts) as the built CLI uses it: a probe file's validated fields
 * are kept in the user's cache under its text and the build, used when the same text comes again,
 * and never for another text. Real CLI processes from the bundle, a cache folder of the test's own.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { afterEach, describe, expect, it } from "vitest";
import { defaultTokenCachePath } from "../../src/capture/token-count-cache.js";
import type { Probe } from "../../src/probes/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { MAIN } from "../cli/scratch-cli.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

function setUp() {
  const base = tempDir("probe-memo-");
  const cache = join(base, "cache");
  const env = {
    ...process.env,
    XDG_CACHE_HOME: cache,
    // The machine's token facts, so these runs need no tokenizer.
    PAYLOAD_PROBE_TOKEN_CACHE: defaultTokenCachePath() ?? "off",
    PAYLOAD_PROBE_WORKSPACE: join(base, "ws"),
  };
  const run = (probe: string) =>
    spawnSync(process.execPath, [MAIN, "run", probe, "--runs", join(base, "runs"), "--no-db", "--json"], {
      cwd: PROJECT_ROOT,
      env,
      encoding: "utf8",
      timeout: 120_000,
    });
  const memoDir = join(cache, "payload-probe", "probe-memo");
  const entries = () =>
    readdirSync(memoDir, { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".v8"))
      .map((name) => join(memoDir, name));
  return { base, run, entries, memoDir };
}

describe("a probe file validated once is not validated again", () => {
  it("keeps one entry per text and build, and a run takes its fields from it", () => {
    const { run, entries } = setUp();
    expect(run("p1").status).toBe(0);
    expect(entries()).toHaveLength(1);
    expect(run("p1").status).toBe(0);
    expect(entries()).toHaveLength(1);

    // What the entry says is what the run holds the probe to: four requests become five.
    const [entry] = entries();
    const fields = deserialize(readFileSync(entry!)) as Omit<Probe, "file">;
    expect(fields.name).toBe("p1");
    expect(fields.expect.requests).toBe(4);
    writeFileSync(entry!, serialize({ ...fields, expect: { ...fields.expect, requests: 5 } }));
    const held = run("p1");
    expect(held.status).toBe(1);
    expect(held.stdout).toContain("requests: expected 5 provider requests, got 4");
  });

  it("validates another text afresh, and an entry cut short is replaced", () => {
    const { base, run, entries } = setUp();
    const copy = join(base, "p1-copy.yaml");
    // Elsewhere, the copy names p1's MCP config by its absolute path (a probe's paths are taken from its folder).
    const text = readFileSync(join(PROJECT_ROOT, "probes/p1.yaml"), "utf8");
    writeFileSync(copy, text.replace("../fixtures/", join(PROJECT_ROOT, "fixtures/")));
    expect(run(copy).status).toBe(0);
    const [entry] = entries();

    const good = readFileSync(copy, "utf8");
    writeFileSync(copy, good.replace("requests: 4", "requests: four"));
    const bad = run(copy);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`${copy}: field "expect.requests"`);
    expect(entries()).toEqual([entry]);

    writeFileSync(copy, good);
    writeFileSync(entry!, readFileSync(entry!).subarray(0, 20));
    expect(run(copy).status).toBe(0);
    expect(deserialize(readFileSync(entry!))).toMatchObject({ name: "p1" });
  });

  it("keeps the entries of the newest eight builds, and touches nothing else in its folder", () => {
    const { base, run, memoDir } = setUp();
    const builds = Array.from({ length: 9 }, (_, i) => join(memoDir, String(i).repeat(64)));
    for (const [i, dir] of builds.entries()) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "entry.v8"), "");
      utimesSync(dir, 1_000_000 + i, 1_000_000 + i);
    }
    mkdirSync(join(memoDir, "not-a-build"));
    writeFileSync(join(memoDir, "a-file"), "");
    // Named as a build, but a link to a folder elsewhere: neither it nor what it points at goes.
    const elsewhere = join(base, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "keep"), "");
    symlinkSync(elsewhere, join(memoDir, "f".repeat(64)));
    expect(run("p1").status).toBe(0);
    // This build's folder is the newest: the two oldest of the nine go.
    const left = readdirSync(memoDir).sort();
    expect(left).toHaveLength(11);
    const kept = ["a-file", "not-a-build", "f".repeat(64), ...builds.slice(2).map((dir) => basename(dir))];
    expect(left).toEqual(expect.arrayContaining(kept));
    expect(existsSync(join(elsewhere, "keep"))).toBe(true);
    expect(existsSync(builds[0]!)).toBe(false);
    expect(existsSync(builds[1]!)).toBe(false);
  });
});
