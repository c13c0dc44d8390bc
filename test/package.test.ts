/**
 * payload-probe as a team installs it: `npm pack` (its prepack builds dist/), the tarball installed
 * into a fresh folder holding only a team's probe, MCP server and skill (`npm install
 * --prefer-offline`: from the npm cache, the registry only for what it lacks, as a first install
 * without a lockfile needs each package's registry document, which `npm ci` never caches: see
 * docs/decisions.md, "--offline cannot work for a first install"; better-sqlite3's own
 * install compiles its addon when no prebuilt one downloads), then `npx payload-probe` from there: a
 * probe, `check`, and `record -- node script.mjs`. Then a second checkout of that folder, its lockfile
 * as a team commits it, installs with `npm ci --offline` (npm reaches no registry) and passes `check`.
 *
 * Slow (the addon compiles: about 80 s of CPU), so it runs when PAYLOAD_PROBE_PACKAGE_TEST=1 (.ci/run
 * sets it) and otherwise says it was skipped.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";
import { defaultWorkspaceRootsOf } from "./cli/scratch-cli.js";
import { teamFolder } from "./fixtures/team-folder.js";
import { removeTempDirs, tempDir } from "./runtime/harness.js";

afterAll(removeTempDirs);

const enabled = process.env.PAYLOAD_PROBE_PACKAGE_TEST === "1";
if (!enabled)
  console.log("package test skipped: set PAYLOAD_PROBE_PACKAGE_TEST=1 to pack, install and run the package");

function sh(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 1_200_000,
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

describe.skipIf(!enabled)("the packed package installed in a team's folder", () => {
  it("installs with no build step and runs a probe, check and record from the team's root", () => {
    const scratch = tempDir("package-");
    const packed = sh(PROJECT_ROOT, "npm", ["pack", "--pack-destination", scratch, "--loglevel=error"]);
    expect(packed.code, packed.out).toBe(0);
    const tarball = join(scratch, readdirSync(scratch).find((name) => name.endsWith(".tgz"))!);
    const team = teamFolder(scratch, "team");
    // The team's runs folder gets its own workspace root, removed with the test's folders.
    const clone = join(scratch, "team-clone");
    const roots = defaultWorkspaceRootsOf([join(team, "runs"), join(clone, "runs")]);
    onTestFinished(roots.remove);
    writeFileSync(join(team, "package.json"), JSON.stringify({ name: "team", private: true }));
    // node-gyp builds against the running Node's headers where Node ships them, as run.sh does.
    const prefix = dirname(dirname(process.execPath));
    const nodedir = existsSync(join(prefix, "include", "node", "node.h")) ? { npm_config_nodedir: prefix } : {};
    const args = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--save-dev", tarball];
    const installed = sh(team, "npm", args, nodedir);
    if (installed.code !== 0 && /ENOTCACHED|ENOTFOUND|EAI_AGAIN/.test(installed.out)) {
      console.log(`package test skipped: a package is neither in the npm cache nor reachable:\n${installed.out}`);
      return;
    }
    expect(installed.code, installed.out).toBe(0);
    const pp = (...more: string[]) => sh(team, "npx", ["--no-install", "payload-probe", ...more]);
    const updated = pp("check", "--update");
    expect(updated.code, updated.out).toBe(0);
    expect(existsSync(join(team, "probes", "baselines", "team-probe.json"))).toBe(true);
    const ran = pp("run", "team-probe");
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toContain("expect: held (2 requests)");
    expect(pp("check").code).toBe(0);
    // The installed package writes nothing inside itself: its runs are the team's.
    expect(existsSync(join(team, "runs", "team-probe", "requests.jsonl"))).toBe(true);
    expect(existsSync(join(team, "node_modules", "payload-probe", "runs"))).toBe(false);
    writeFileSync(join(team, "agent.mjs"), "console.log('an agent that sends nothing');\n");
    const recorded = pp("record", "--", "node", "agent.mjs");
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toContain("an agent that sends nothing");
    expect(recorded.out).toContain("no request reached the proxy");
    // A second checkout of the team's repository (its lockfile committed) installs with npm reaching
    // no registry: `npm ci --offline`, from the cache the first install filled, then the same gate.
    cpSync(team, clone, { recursive: true, filter: (path) => !/[/\\](node_modules|runs)$/.test(path) });
    const offline = sh(clone, "npm", ["ci", "--offline", "--no-audit", "--no-fund"], nodedir);
    expect(offline.code, offline.out).toBe(0);
    const gate = sh(clone, "npx", ["--no-install", "payload-probe", "check"]);
    expect(gate.code, gate.out).toBe(0);
  }, 1_500_000);
});
