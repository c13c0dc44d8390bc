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
import { build } from "esbuild";

const ENTRIES = [
  "src/cli/main.ts",
  "src/stub-mcp/probe-stub.ts",
  "src/stub-mcp/configurable-stub.ts",
  "src/stub-mcp/minimal-stub.ts",
];

await build({
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
  logLevel: "warning",
});
