/**
 * src/processes/bundle-loader.ts, as the built entries use it: a real Node process starts a wrapped CommonJS
 * bundle through dist/processes/bundle-loader.js, writes V8's code cache as it exits, and the next start
 * takes it. Whether V8 took the cache shows in the file: a refused cache is written anew.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { stopAfterTest } from "../fixtures/children.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const LOADER = pathToFileURL(join(PROJECT_ROOT, "dist/processes/bundle-loader.js")).href;

/** A bundle as scripts/bundle.mjs writes one, reporting what the module body was given. */
const BUNDLE = `(function (exports, require, module, __filename, __dirname) {"use strict";
const os = require("node:os");
const strict = (function () { return this === undefined; })();
console.log(JSON.stringify({ file: __filename, dir: __dirname, strict, exportsIsModules: exports === module.exports, cpus: os.cpus().length > 0 }));
if (process.env.BUNDLE_EXIT) process.exitCode = Number(process.env.BUNDLE_EXIT);
})`;

type Start = (exitCode?: number) => { status: number | null; stdout: string; stderr: string };

function setUp(variant?: string): { dir: string; start: Start } {
  const dir = tempDir("bundle-loader-");
  mkdirSync(join(dir, "bundles"));
  writeFileSync(join(dir, "bundles", "probe.cjs"), BUNDLE);
  const args = variant === undefined ? "" : `, ${JSON.stringify(variant)}`;
  const launcher = `import { loadBundle } from ${JSON.stringify(LOADER)};\nloadBundle(new URL("./bundles/probe.cjs", import.meta.url).pathname${args});\n`;
  writeFileSync(join(dir, "main.mjs"), launcher);
  const start: Start = (exitCode) =>
    spawnSync(process.execPath, [join(dir, "main.mjs")], {
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, BUNDLE_EXIT: exitCode === undefined ? "" : String(exitCode) },
    });
  return { dir, start };
}

/**
 * Two builds of one bundle, the same length to the character: V8 checks a cache against its source's
 * length only. Each says which it is from a function V8 compiles lazily, after stdin ends, so the
 * function is in the cache the process writes as it exits.
 */
function build(name: "old" | "new"): string {
  const body =
    name === "old"
      ? `function says(){ return ["old", 1 + 1].join(" "); }`
      : `function says(){ if (typeof says !== "x") return "new 2"; }`;
  return `(function (exports, require, module, __filename, __dirname) {"use strict";
${body.padEnd(64)}
process.stdout.write("ready\\n");
process.stdin.resume().on("end", () => console.log(says()));
})`;
}

const cacheFiles = (dir: string) =>
  existsSync(join(dir, "bundles", ".code-cache")) ? readdirSync(join(dir, "bundles", ".code-cache")) : [];

describe("bundle loader", () => {
  it("runs the body as Node runs a CommonJS module, strict, and keeps V8's code cache per variant and Node", () => {
    const { dir, start } = setUp("run");
    const failed = start(2);
    expect(failed.status).toBe(2);
    expect(cacheFiles(dir)).toEqual([]); // only a start that succeeded leaves a cache
    const first = start();
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      file: join(dir, "bundles", "probe.cjs"),
      dir: join(dir, "bundles"),
      strict: true,
      exportsIsModules: true,
      cpus: true,
    });
    const name = `probe.run.${process.version}-${process.platform}-${process.arch}.bin`;
    expect(cacheFiles(dir)).toEqual([name]);
    const cache = join(dir, "bundles", ".code-cache", name);
    const written = statSync(cache).mtimeMs;
    const bytes = readFileSync(cache);

    const second = start();
    expect(second.stdout).toBe(first.stdout);
    // Taken, not refused: a refused cache would have been written again.
    expect(statSync(cache).mtimeMs).toBe(written);
    expect(readFileSync(cache).equals(bytes)).toBe(true);
  });

  it("writes a cache it cannot use anew, with the same output, and names a variant that is not a plain word other", () => {
    const { dir, start } = setUp("--help");
    const first = start();
    const [name] = cacheFiles(dir);
    expect(name).toMatch(/^probe\.other\./);
    const cache = join(dir, "bundles", ".code-cache", name as string);
    writeFileSync(cache, "not a code cache");
    const again = start();
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toBe("");
    expect(readFileSync(cache).subarray(0, 16).toString()).not.toBe("not a code cache");
    expect(readFileSync(cache).length).toBeGreaterThan(100);
  });

  it("runs without a cache where none can be written, saying nothing", () => {
    const { dir, start } = setUp();
    // A file where the cache folder would go: no one can write there, root included.
    writeFileSync(join(dir, "bundles", ".code-cache"), "not a folder");
    const run = start();
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout).strict).toBe(true);
    expect(readdirSync(join(dir, "bundles")).sort()).toEqual([".code-cache", "probe.cjs"]);
  });

  it("is handed bundles that are ASCII, so reading them as Latin-1 is exact (scripts/bundle.mjs makes them so)", () => {
    const bundles = readdirSync(join(PROJECT_ROOT, "dist/bundles")).filter((name) => name.endsWith(".cjs"));
    expect(bundles.sort()).toEqual([
      "capture-worker.cjs",
      "cli.cjs",
      "configurable-stub.cjs",
      "live-data-worker.cjs",
      "minimal-stub.cjs",
      "otel.cjs",
      "probe-stub.cjs",
      "undici.cjs",
      "x509.cjs",
    ]);
    for (const name of bundles) {
      const bytes = readFileSync(join(PROJECT_ROOT, "dist/bundles", name));
      expect({ name, firstPastAscii: bytes.findIndex((byte) => byte > 0x7f) }).toEqual({ name, firstPastAscii: -1 });
    }
  });

  it("loads a library bundled apart (undici) with its package's own exports, and its cache; the CLI bundle asks node_modules for none", () => {
    const dir = tempDir("bundle-library-");
    mkdirSync(join(dir, "bundles"));
    copyFileSync(join(PROJECT_ROOT, "dist/bundles/undici.cjs"), join(dir, "bundles", "undici.cjs"));
    const script = `import { createRequire } from "node:module";
import { loadBundle } from ${JSON.stringify(LOADER)};
const bundled = loadBundle(new URL("./bundles/undici.cjs", import.meta.url).pathname).undici;
const installed = createRequire(${JSON.stringify(join(PROJECT_ROOT, "package.json"))})("undici");
console.log(JSON.stringify({ keys: Object.keys(bundled).sort(), same: Object.keys(installed).sort(), agent: typeof new bundled.Agent().dispatch }));`;
    writeFileSync(join(dir, "main.mjs"), script);
    const load = () => spawnSync(process.execPath, [join(dir, "main.mjs")], { encoding: "utf8", timeout: 120_000 });
    const first = load();
    expect(first.stderr).toBe("");
    const { keys, same, agent } = JSON.parse(first.stdout) as { keys: string[]; same: string[]; agent: string };
    expect(keys).toEqual(same);
    expect(keys).toContain("Agent");
    expect(agent).toBe("function");
    const [cache] = cacheFiles(dir);
    expect(cache).toBe(`undici.main.${process.version}-${process.platform}-${process.arch}.bin`);
    const written = statSync(join(dir, "bundles", ".code-cache", cache!)).mtimeMs;
    expect(load().stdout).toBe(first.stdout);
    expect(statSync(join(dir, "bundles", ".code-cache", cache!)).mtimeMs).toBe(written);

    const cli = readFileSync(join(PROJECT_ROOT, "dist/bundles/cli.cjs"), "latin1");
    expect(cli).not.toMatch(/require\("(undici|@opentelemetry\/|@peculiar\/|reflect-metadata)/);
    for (const library of ["undici", "otel", "x509"]) expect(cli).toContain(`"${library}.cjs"`);
  });

  it("takes no cache of another build: one written by a process of the old bundle after the rebuild", async () => {
    expect(build("old").length).toBe(build("new").length);
    const { dir, start } = setUp();
    const bundle = join(dir, "bundles", "probe.cjs");
    writeFileSync(bundle, build("old"));
    const old = stopAfterTest(spawn(process.execPath, [join(dir, "main.mjs")], { stdio: ["pipe", "pipe", "pipe"] }));
    let out = "";
    old.stdout.setEncoding("utf8");
    await new Promise<void>((resolve) => {
      old.stdout.on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("ready\n")) resolve();
      });
    });
    writeFileSync(bundle, build("new")); // the rebuild, while the old build runs
    const exited = once(old, "exit");
    old.stdin.end();
    expect(await exited).toEqual([0, null]);
    expect(out).toBe("ready\nold 2\n");

    const next = start();
    expect(next.stderr).toBe("");
    expect(next.stdout).toBe("ready\nnew 2\n");
    expect(next.status).toBe(0);
    // The new build's own cache is written and then taken.
    const [name] = cacheFiles(dir);
    const cache = join(dir, "bundles", ".code-cache", name as string);
    const written = readFileSync(cache);
    expect(start().stdout).toBe("ready\nnew 2\n");
    expect(readFileSync(cache).equals(written)).toBe(true);
  });

  it("never fails a start on a corrupt cache: cut short, bytes changed, or empty", () => {
    const { dir, start } = setUp("run");
    const first = start();
    const [name] = cacheFiles(dir);
    const cache = join(dir, "bundles", ".code-cache", name as string);
    const whole = readFileSync(cache);
    const flipped = Buffer.from(whole);
    for (let at = 64; at < flipped.length; at += 5) flipped[at] = (flipped[at] as number) ^ 0x5a;
    for (const corrupt of [whole.subarray(0, whole.length >> 1), flipped, Buffer.alloc(0)]) {
      writeFileSync(cache, corrupt);
      const again = start();
      expect({ status: again.status, stderr: again.stderr, stdout: again.stdout }).toEqual({
        status: 0,
        stderr: "",
        stdout: first.stdout,
      });
      expect(readFileSync(cache).length).toBeGreaterThan(100); // written anew
    }
  });
});
