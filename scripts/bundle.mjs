#!/usr/bin/env node
/**
 * Bundles the CLI and each stub MCP server entry (run by `./run.sh`'s build step, after tsc).
 *
 * Unbundled, one `run p1` resolves, reads and compiles about 120 ES modules before its first
 * request, and every stub server another hundred; a bundle is a handful of files. The bundles
 * overwrite tsc's output at the same paths (`dist/cli/main.js`, `dist/stub-mcp/<stub>.js`), so the
 * command lines in probe fixtures, the package's `bin` and the tests keep working and the MCP
 * cache's configHash (which hashes the server's command line) is unchanged. Code shared by the entry
 * points, and each command `main.ts` loads on demand, goes into `dist/chunks/`: a command still
 * loads only what it uses. better-sqlite3 stays external (a native addon found at run time).
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const ENTRIES = [
  "src/cli/main.ts",
  "src/stub-mcp/probe-stub.ts",
  "src/stub-mcp/configurable-stub.ts",
  "src/stub-mcp/minimal-stub.ts",
];

const result = await build({
  entryPoints: ENTRIES,
  outbase: "src",
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3"],
  // CommonJS dependencies bundled into ES modules call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
  },
  sourcemap: true,
  metafile: true,
  logLevel: "warning",
});

/**
 * dist/build-id.json: for each entry (the CLI and each stub), the sha256 of its own bytes and of
 * everything it loads (its chunks, followed through every import). A primed MCP cache is reused
 * only for the same build of the client and the stub (src/probes/prime-memo.ts); an entry's own
 * hash tells a bundle from a file tsc wrote over it later.
 */
const outputs = result.metafile.outputs;
const sha256 = (data) => createHash("sha256").update(data).digest("hex");
function loaded(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const { path, external } of outputs[file].imports) if (!external && outputs[path]) loaded(path, seen);
  return seen;
}
const builds = {};
for (const [file, output] of Object.entries(outputs)) {
  if (!ENTRIES.includes(output.entryPoint)) continue;
  const build = createHash("sha256");
  for (const part of [...loaded(file)].sort()) build.update(`${part}\n`).update(readFileSync(part));
  builds[file] = { entry: sha256(readFileSync(file)), build: build.digest("hex") };
}
writeFileSync("dist/build-id.json", `${JSON.stringify(builds, null, 2)}\n`);
