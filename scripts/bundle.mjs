#!/usr/bin/env node
/**
 * Bundles the CLI, each stub MCP server entry and the worker threads (capture, live view data), and
 * the view page's browser scripts; run by `./run.sh`'s build step, after tsc.
 *
 * Unbundled, one `run p1` resolves, reads and compiles about 120 ES modules before its first
 * request, and every stub server another hundred. Each entry becomes one CommonJS file,
 * `dist/bundles/<name>.cjs`, which src/processes/bundle-loader.ts starts from V8's code cache (Node 20 has no
 * compile cache for ES modules). The entry paths stay as they were — `dist/cli/main.js` and
 * `dist/stub-mcp/<stub>.js` become small CommonJS launchers that hand their bundle to the loader — so
 * the command lines in probe fixtures, the package's `bin` and the tests keep working, and the MCP
 * cache's configHash (which hashes the server's command line) is unchanged.
 *
 * Left outside the bundles and loaded where they are used: better-sqlite3 (a native addon found at
 * run time) and gpt-tokenizer (megabytes of encoding data, needed only for a text whose count is not
 * cached). A command's modules are in the CLI bundle but run only when the command does.
 *
 * Libraries that only some commands load are bundles of their own, `dist/bundles/<library>.cjs`,
 * loaded through the same loader at their first import (LIBRARIES): from node_modules, Node resolved
 * and compiled a hundred files or more at every start that used one (undici alone 55 ms of CPU at a
 * relaying proxy's start); inside the CLI bundle, every other command would read them at every start
 * (@peculiar/x509 alone is about 200 small modules, for certificates record makes only when needed).
 */
import "./help.mjs";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { build } from "esbuild";

// tsc's output, which run.sh builds before this step (loaded after help.mjs has answered --help).
const { escapeRegExp } = await import("../dist/text/regexp.js");

const ENTRIES = [
  "src/cli/main.ts",
  "src/stub-mcp/probe-stub.ts",
  "src/stub-mcp/configurable-stub.ts",
  "src/stub-mcp/minimal-stub.ts",
  "src/capture/capture-worker.ts",
  "src/analysis/view/live-data-worker.ts",
];
/**
 * Worker threads' entries get launchers of their own folder, dist/workers/: a launcher's folder is
 * marked CommonJS, and dist/capture/ holds tsc's ES modules that scripts import.
 */
const WORKERS = new Set(["src/capture/capture-worker.ts", "src/analysis/view/live-data-worker.ts"]);
/** What src/processes/bundle-loader.ts expects a bundle to be: a function of Node's five CommonJS arguments. */
const WRAPPER_START = "(function (exports, require, module, __filename, __dirname) {";

/**
 * The libraries bundled apart (see above), each a bundle of the packages the commands import
 * together, in the order they load: the proxy's relay (and the CA file held back from Node's start),
 * OTLP export, and record's certificates (x509 wants the Reflect metadata polyfill loaded first).
 */
const LIBRARIES = {
  undici: ["undici"],
  otel: [
    "@opentelemetry/api",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/resources",
    "@opentelemetry/sdk-trace-base",
  ],
  x509: ["reflect-metadata", "@peculiar/x509"],
};
const libraryOf = new Map(
  Object.entries(LIBRARIES).flatMap(([library, packages]) => packages.map((p) => [p, library])),
);

/**
 * Turns an entry's import of a package of LIBRARIES into a load of its library's bundle, from beside
 * the entry's bundle (`__dirname` is the wrapper's: dist/bundles), which exports each package by
 * name. An `import()` stays lazy: esbuild runs the module that loads it only when the import runs.
 */
const librariesApart = {
  name: "libraries-apart",
  setup(build) {
    const filter = new RegExp(`^(${[...libraryOf.keys()].map(escapeRegExp).join("|")})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "library-apart" }));
    build.onLoad({ filter: /.*/, namespace: "library-apart" }, (args) => {
      const bundle = JSON.stringify(`${libraryOf.get(args.path)}.cjs`);
      return {
        contents: `const { loadBundle } = require("./src/processes/bundle-loader.ts");\nmodule.exports = loadBundle(require("node:path").join(__dirname, ${bundle}))[${JSON.stringify(args.path)}];\n`,
        resolveDir: ".",
        loader: "js",
      };
    });
  },
};

/** Options every bundle shares: one CommonJS module body, wrapped as Node wraps one, ASCII only. */
const WRAPPED = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // Each bundle is a CommonJS module body already wrapped as Node wraps one, so the loader compiles
  // the file's own text, not a copy with the wrapper joined on (megabytes more heap at every start).
  // The sources are ES modules, strict by definition: the body says so before esbuild's own
  // "use strict" (which the banner's line stops being a directive). import.meta.url is the bundle's
  // own URL, as each module's was the file it came from.
  banner: {
    js: `${WRAPPER_START}"use strict";\nvar __bundleUrl = require("node:url").pathToFileURL(__filename).href;`,
  },
  footer: { js: "})" },
  define: { "import.meta.url": "__bundleUrl" },
  // import() of a package left outside (or of a Node built-in) becomes require(): a script run through
  // node:vm has no module loader of its own for import() (Node 20 offers one only as an experiment,
  // with a warning), and an import() left in fails when it runs.
  supported: { "dynamic-import": false },
  sourcemap: true,
  logLevel: "warning",
};

const bundleOf = (entry) => `dist/bundles/${entry === "src/cli/main.ts" ? "cli" : basename(entry, ".ts")}.cjs`;
const launcherOf = (entry) =>
  WORKERS.has(entry)
    ? `dist/workers/${basename(entry, ".ts")}.js`
    : entry.replace(/^src\//, "dist/").replace(/\.ts$/, ".js");

for (const entry of ENTRIES) {
  await build({
    ...WRAPPED,
    entryPoints: [entry],
    outfile: bundleOf(entry),
    external: ["better-sqlite3", "gpt-tokenizer"],
    plugins: [librariesApart],
    // jsonc-parser's `main` is a UMD wrapper whose require() calls esbuild cannot follow (they fail
    // at run time); its ES module build bundles. Plain Node (tsc's output, the tests) loads the UMD one.
    alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  });
  asciiOnly(bundleOf(entry));
  await writeLauncher(entry);
}

for (const [library, packages] of Object.entries(LIBRARIES)) {
  const exports = packages.map((name) => `  ${JSON.stringify(name)}: require(${JSON.stringify(name)}),`);
  await build({
    ...WRAPPED,
    stdin: { contents: `module.exports = {\n${exports.join("\n")}\n};\n`, resolveDir: ".", loader: "js" },
    outfile: `dist/bundles/${library}.cjs`,
  });
  asciiOnly(`dist/bundles/${library}.cjs`);
}

/**
 * The loader reads a bundle as Latin-1: V8 keeps it one byte per character and Node copies it without
 * a UTF-8 pass (about 8 ms of the CLI's start, for 2.4 MB). esbuild writes code as ASCII (it escapes
 * strings, templates, regular expressions and names) but leaves comments as they were written, so a
 * character past ASCII in a comment becomes "?", one per UTF-16 unit so the source map's columns
 * still hold. One outside a comment stops the build rather than be misread. A comment is a line
 * comment, a line of a doc comment, or a line inside a block comment that opened a line of its own
 * (the license notices esbuild gathers at a bundle's end, whose lines need not start with "*").
 */
function asciiOnly(file) {
  const text = readFileSync(file, "utf8");
  let inBlock = false;
  for (const [index, line] of text.split("\n").entries()) {
    const at = line.search(/[\u0080-\uffff]/);
    const comment = inBlock || /^\s*(\*|\/\*)/.test(line) || (at >= 0 && line.slice(0, at).includes("//"));
    if (at >= 0 && !comment) throw new Error(`${file}:${index + 1}: a character past ASCII outside a comment`);
    inBlock = (inBlock || /^\s*\/\*/.test(line)) && !line.includes("*/");
  }
  writeFileSync(file, text.replace(/[\u0080-\uffff]/g, "?"));
}

/**
 * The entry as users and fixtures start it: hands its bundle to the loader (the CLI with its command).
 * A CommonJS file with the loader built in, in a folder whose package.json says so: an ES module entry
 * made Node set up its module loader first, about 7 ms of every start (the stub's included). tsc's
 * own output beside the launchers is no longer loadable as ES modules; nothing loads it (the bundles
 * are built from src/).
 */
async function writeLauncher(entry) {
  const bundle = relative(dirname(launcherOf(entry)), bundleOf(entry));
  const variant = entry === "src/cli/main.ts" ? ", process.argv[2]" : "";
  await build({
    stdin: {
      contents: `import { loadBundle } from "./src/processes/bundle-loader.ts";\nloadBundle(require("node:path").join(__dirname, ${JSON.stringify(bundle)})${variant});\n`,
      resolveDir: ".",
      loader: "ts",
    },
    outfile: launcherOf(entry),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    banner: {
      js: `#!/usr/bin/env node\n// Written by scripts/bundle.mjs: runs ${bundleOf(entry)} from V8's code cache (src/processes/bundle-loader.ts).`,
    },
    logLevel: "warning",
  });
  writeFileSync(join(dirname(launcherOf(entry)), "package.json"), '{ "type": "commonjs" }\n');
}

/**
 * The view page's scripts, typed browser code in src/analysis/view/browser/: `page` for the page
 * `view` saves, `live` for the live view's. Each is one self-running script (an IIFE) that
 * src/analysis/view/view-page.ts inlines into the HTML as it is; the page loads nothing else.
 */
await build({
  entryPoints: { page: "src/analysis/view/browser/page.ts", live: "src/analysis/view/browser/live.ts" },
  outdir: "dist/view",
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  logLevel: "warning",
});

/**
 * gpt-tokenizer's o200k_base ranks as a table read in place (src/capture/rank-table.ts), for
 * src/capture/tokens.ts: its module spells the 200,000 ranks as one array literal that Node parses at
 * every load, and its encoder builds a Map of them. Named after the installed version, so a
 * tokenizer update is never read with another version's ranks.
 */
const { default: ranks } = await import("gpt-tokenizer/bpeRanks/o200k_base");
const { version: tokenizerVersion } = JSON.parse(readFileSync("node_modules/gpt-tokenizer/package.json", "utf8"));
const { writeRankTable } = await import("../dist/capture/rank-table.js");
mkdirSync("dist/tokenizer", { recursive: true });
writeFileSync(`dist/tokenizer/o200k_base-${tokenizerVersion}.ranks`, writeRankTable(ranks));

/**
 * dist/build-id.json: for each entry, the sha256 of its own bytes and of everything that runs when
 * it starts (the entry, with the loader in it, and the bundle). A primed MCP cache is reused only for the same build
 * of the client and the stub (src/probes/prime-memo.ts); an entry's own hash tells a launcher from
 * a file tsc wrote over it later.
 */
const sha256 = (data) => createHash("sha256").update(data).digest("hex");
const builds = {};
for (const entry of ENTRIES) {
  const parts = [launcherOf(entry), bundleOf(entry)];
  const whole = createHash("sha256");
  for (const part of parts) whole.update(`${part}\n`).update(readFileSync(part));
  builds[launcherOf(entry)] = { entry: sha256(readFileSync(launcherOf(entry))), build: whole.digest("hex") };
}
writeFileSync("dist/build-id.json", `${JSON.stringify(builds, null, 2)}\n`);
