/**
 * run.sh's first set-up on a machine: before npm ci's silence and the SQLite addon's minutes-long
 * compile, one line says that it takes a few minutes and why. npm is a stand-in on PATH that records
 * its calls and makes the files run.sh checks, so the test runs the real script without the compile.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";
import { removeTempDirs, tempDir } from "./runtime/harness.js";

afterEach(removeTempDirs);

const FAKE_NPM = `#!/usr/bin/env bash
echo "npm $*" >&2
case "$1" in
  ci) mkdir -p node_modules/better-sqlite3 && touch node_modules/.package-lock.json ;;
  rebuild) mkdir -p node_modules/better-sqlite3/build/Release && touch node_modules/better-sqlite3/build/Release/better_sqlite3.node ;;
esac
`;

/** A checkout with run.sh and the lockfile, an up-to-date build, and no node_modules. */
function bareCheckout(): string {
  const dir = tempDir("run-sh-");
  for (const file of ["run.sh", "package.json", "package-lock.json"])
    copyFileSync(join(PROJECT_ROOT, file), join(dir, file));
  for (const folder of ["src", "scripts", "dist/cli"]) mkdirSync(join(dir, folder), { recursive: true });
  for (const config of ["tsconfig.json", "tsconfig.browser.json"]) writeFileSync(join(dir, config), "{}");
  writeFileSync(join(dir, "scripts/bundle.mjs"), "");
  writeFileSync(join(dir, "dist/cli/main.js"), "console.log('cli ran');\n");
  const stamp = join(dir, "dist/.build-stamp");
  writeFileSync(stamp, "");
  const later = new Date(Date.now() + 3_600_000);
  utimesSync(stamp, later, later);
  return dir;
}

function runSh(checkout: string, cache: string, bin: string) {
  const result = spawnSync(join(checkout, "run.sh"), ["--version"], {
    cwd: checkout,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, XDG_CACHE_HOME: cache },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, lines: result.stderr.trimEnd().split("\n") };
}

it("the first set-up says it takes a few minutes and why, once, before npm ci; a cached addon does not", () => {
  const bin = tempDir("run-sh-bin-");
  writeFileSync(join(bin, "npm"), FAKE_NPM);
  chmodSync(join(bin, "npm"), 0o755);
  const cache = tempDir("run-sh-cache-");
  const first = runSh(bareCheckout(), cache, bin);
  expect(first.code).toBe(0);
  expect(first.stdout).toBe("cli ran\n");
  expect(first.lines[0]).toMatch(
    /^run\.sh: first set-up on this machine: installing dependencies \(npm ci\), then compiling the SQLite addon \(better-sqlite3 [\d.]+\) from C\+\+.* a few minutes/,
  );
  expect(first.lines.slice(1).map((line) => line.split(" ").slice(0, 2).join(" "))).toEqual([
    "npm ci",
    "run.sh: compiling",
    "npm rebuild",
  ]);
  expect(first.lines.filter((line) => line.includes("few minutes"))).toHaveLength(1);

  const again = runSh(bareCheckout(), cache, bin);
  expect(again.code).toBe(0);
  expect(again.lines).toEqual(["run.sh: installing dependencies (npm ci) …", expect.stringMatching(/^npm ci /)]);
});

it("a run on another Node puts that Node's addon in place: from the cache, else compiled against its own headers", () => {
  const bin = tempDir("run-sh-bin-");
  // The stand-in also says which headers a compile was pointed at.
  writeFileSync(
    join(bin, "npm"),
    FAKE_NPM.replace('echo "npm $*" >&2', 'echo "npm $* nodedir=${npm_config_nodedir:-}" >&2'),
  );
  chmodSync(join(bin, "npm"), 0o755);
  const cache = tempDir("run-sh-cache-");
  const checkout = bareCheckout();
  const release = join(checkout, "node_modules/better-sqlite3/build/Release");
  mkdirSync(release, { recursive: true });
  const installed = join(checkout, "node_modules/.package-lock.json");
  writeFileSync(installed, "");
  const later = new Date(Date.now() + 3_600_000);
  utimesSync(installed, later, later);
  const stamp = join(checkout, "node_modules/.better-sqlite3-node");
  writeFileSync(stamp, "v19.0.0\n");

  const compiled = runSh(checkout, cache, bin);
  expect(compiled.code).toBe(0);
  const prefix = dirname(dirname(process.execPath));
  const headers = existsSync(join(prefix, "include/node/node.h")) ? prefix : "";
  expect(compiled.lines).toEqual([
    `run.sh: compiling better-sqlite3 ${ADDON_VERSION} for Node ${process.version} …`,
    `npm rebuild better-sqlite3 --loglevel=error nodedir=${headers}`,
  ]);
  expect(readFileSync(stamp, "utf8")).toBe(`${process.version}\n`);
  const cached = join(cache, "payload-probe", `better_sqlite3-${ADDON_VERSION}-${ADDON_ABI}.node`);
  expect(existsSync(cached)).toBe(true);

  // Back on a Node whose copy is kept: it is put in place, nothing compiled, nothing said.
  writeFileSync(stamp, "v19.0.0\n");
  writeFileSync(cached, "kept copy");
  const placed = runSh(checkout, cache, bin);
  expect(placed.lines).toEqual([""]);
  expect(readFileSync(join(release, "better_sqlite3.node"), "utf8")).toBe("kept copy");
  expect(readFileSync(stamp, "utf8")).toBe(`${process.version}\n`);
});

const ADDON_VERSION = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>;
  }
).packages["node_modules/better-sqlite3"]!.version;
const ADDON_ABI = `${process.versions.modules}-${process.platform}-${process.arch}`;
