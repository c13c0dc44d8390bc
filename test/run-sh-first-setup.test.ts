/**
 * run.sh's first set-up on a machine: before npm ci's silence and the SQLite addon's minutes-long
 * compile, one line says that it takes a few minutes and why. npm is a stand-in on PATH that records
 * its calls and makes the files run.sh checks, so the test runs the real script without the compile.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, expect, it } from "vitest";
import { findPi } from "../src/agents/pi-install.js";
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

/** Where the `bindings` loader looks for a Node ABI's addon: run.sh puts each Node's copy there. */
const placedAddon = (checkout: string, abi = ADDON_ABI) =>
  join(checkout, `node_modules/better-sqlite3/lib/binding/node-v${abi}/better_sqlite3.node`);

/** A checkout whose dependencies are installed (its lockfile copy newer than the lockfile). */
function installedCheckout(): string {
  const checkout = bareCheckout();
  mkdirSync(join(checkout, "node_modules/better-sqlite3"), { recursive: true });
  const installed = join(checkout, "node_modules/.package-lock.json");
  writeFileSync(installed, "");
  const later = new Date(Date.now() + 3_600_000);
  utimesSync(installed, later, later);
  return checkout;
}

it("a run on another Node puts that Node's addon beside the others: from the cache, else compiled against its own headers", () => {
  const bin = tempDir("run-sh-bin-");
  // The stand-in also says which headers a compile was pointed at.
  writeFileSync(
    join(bin, "npm"),
    FAKE_NPM.replace('echo "npm $*" >&2', 'echo "npm $* nodedir=${npm_config_nodedir:-}" >&2'),
  );
  chmodSync(join(bin, "npm"), 0o755);
  const cache = tempDir("run-sh-cache-");
  const checkout = installedCheckout();
  const stamp = join(checkout, `node_modules/.better-sqlite3-placed/${process.version}`);

  const compiled = runSh(checkout, cache, bin);
  expect(compiled.code).toBe(0);
  const prefix = dirname(dirname(process.execPath));
  const headers = existsSync(join(prefix, "include/node/node.h")) ? prefix : "";
  expect(compiled.lines).toEqual([
    `run.sh: compiling better-sqlite3 ${ADDON_VERSION} for Node ${process.version} …`,
    `npm rebuild better-sqlite3 --loglevel=error nodedir=${headers}`,
  ]);
  expect(existsSync(stamp)).toBe(true);
  const cached = join(cache, "payload-probe", `better_sqlite3-${ADDON_VERSION}-${ADDON_ABI}.node`);
  expect(existsSync(cached)).toBe(true);
  expect(existsSync(placedAddon(checkout))).toBe(true);
  // The compile's own output is gone: the loader would take it first, on every Node.
  expect(existsSync(join(checkout, "node_modules/better-sqlite3/build"))).toBe(false);

  // A Node without its stamp gets its kept copy, nothing compiled, nothing said.
  rmSync(stamp);
  writeFileSync(cached, "kept copy");
  const placed = runSh(checkout, cache, bin);
  expect(placed.lines).toEqual([""]);
  expect(readFileSync(placedAddon(checkout), "utf8")).toBe("kept copy");
  expect(existsSync(stamp)).toBe(true);
});

it("a compile for another Node that is interrupted leaves this Node's addon and stamp as they were (issue 35)", () => {
  const bin = tempDir("run-sh-bin-");
  // npm rebuild as node-gyp does it: the build folder cleaned first; then the user's Ctrl-C.
  writeFileSync(
    join(bin, "npm"),
    FAKE_NPM.replace(
      "rebuild) mkdir",
      "rebuild) rm -rf node_modules/better-sqlite3/build; mkdir -p node_modules/better-sqlite3/build/Release; exit 130; mkdir",
    ),
  );
  chmodSync(join(bin, "npm"), 0o755);
  // Another Node on PATH: its own version and ABI, the real one for everything else.
  const other = tempDir("run-sh-other-node-");
  mkdirSync(join(other, "bin"));
  writeFileSync(
    join(other, "bin/node"),
    `#!/usr/bin/env bash\ncase "$*" in\n  --version) echo v99.0.0 ;;\n  *versions.modules*) echo 999-linux-x64 ;;\n  *) exec ${process.execPath} "$@" ;;\nesac\n`,
  );
  chmodSync(join(other, "bin/node"), 0o755);
  const cache = tempDir("run-sh-cache-");
  mkdirSync(join(cache, "payload-probe"));
  writeFileSync(join(cache, "payload-probe", `better_sqlite3-${ADDON_VERSION}-${ADDON_ABI}.node`), "this Node's");
  const checkout = installedCheckout();
  expect(runSh(checkout, cache, bin).code).toBe(0);

  const interrupted = runSh(checkout, cache, `${bin}:${join(other, "bin")}`);
  expect(interrupted.code).toBe(130);
  expect(existsSync(join(checkout, "node_modules/.better-sqlite3-placed/v99.0.0"))).toBe(false);

  // This Node runs on: its addon was never in the compile's way; the compile's leftovers are cleared.
  const after = runSh(checkout, cache, bin);
  expect(after.code).toBe(0);
  expect(after.lines).toEqual([""]);
  expect(readFileSync(placedAddon(checkout), "utf8")).toBe("this Node's");
  expect(existsSync(join(checkout, "node_modules/better-sqlite3/build"))).toBe(false);
});

const ADDON_VERSION = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>;
  }
).packages["node_modules/better-sqlite3"]!.version;
const ADDON_ABI = `${process.versions.modules}-${process.platform}-${process.arch}`;

/** The Node 22 that `agents install pi` brings (as .ci/run finds it), when it is there and is another Node. */
function otherNode(): string | undefined {
  const pi = findPi();
  if (!pi || basename(pi.program) !== "node") return undefined;
  const version = spawnSync(pi.program, ["--version"], { encoding: "utf8" }).stdout.trim();
  return version === process.version ? undefined : pi.program;
}

const node22 = otherNode();
const realCache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "payload-probe");
const abiOf = (node: string) =>
  spawnSync(node, ["-p", 'process.versions.modules + "-" + process.platform + "-" + process.arch'], {
    encoding: "utf8",
  }).stdout.trim();

const cachedName = (abi: string) => `better_sqlite3-${ADDON_VERSION}-${abi}.node`;
/** Both Nodes' compiled copies are in the user's cache: a compile here would take minutes. */
const bothCached =
  node22 !== undefined && [ADDON_ABI, abiOf(node22)].every((abi) => existsSync(join(realCache, cachedName(abi))));

/** A Node process with the checkout's SQLite loaded, answering one query per line it reads. */
const QUERIES = `
const Database = require(process.argv[1] + "/node_modules/better-sqlite3");
const db = new Database(":memory:");
console.log("ready");
require("readline").createInterface({ input: process.stdin }).on("line", (n) => {
  console.log(db.prepare("SELECT ? * 2 AS x").get(Number(n)).x);
});`;

it.skipIf(!bothCached)(
  "switching Node never touches the addon a running process loaded; each Node loads its own (skipped without the Node 22 of `agents install pi` and both addons in the user's cache)",
  async () => {
    const cache = tempDir("run-sh-cache-");
    mkdirSync(join(cache, "payload-probe"));
    for (const abi of [ADDON_ABI, abiOf(node22!)])
      copyFileSync(join(realCache, cachedName(abi)), join(cache, "payload-probe", cachedName(abi)));
    const checkout = installedCheckout();
    for (const name of ["better-sqlite3", "bindings", "file-uri-to-path"])
      cpSync(join(PROJECT_ROOT, "node_modules", name), join(checkout, "node_modules", name), {
        recursive: true,
        filter: (source) => !source.includes(`${name}/build`) && !source.includes(`${name}/lib/binding`),
      });
    expect(runSh(checkout, cache, tempDir("run-sh-bin-")).code).toBe(0);

    const running = spawn(process.execPath, ["-e", QUERIES, checkout], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      const lines = createInterface({ input: running.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe("ready");
      // The other Node's run.sh while this one holds its addon.
      expect(runSh(checkout, cache, dirname(node22!)).code).toBe(0);
      running.stdin!.write("21\n");
      expect((await lines.next()).value).toBe("42");
      const onOther = spawnSync(node22!, ["-e", `${QUERIES}\nprocess.stdin.end()`, checkout], {
        input: "5\n",
        encoding: "utf8",
      });
      expect(onOther.stdout).toBe("ready\n10\n");
    } finally {
      running.kill();
    }
    expect(existsSync(placedAddon(checkout))).toBe(true);
    expect(existsSync(placedAddon(checkout, abiOf(node22!)))).toBe(true);
  },
);
