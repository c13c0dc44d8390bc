/**
 * Starts a CommonJS bundle (`dist/bundles/<name>.cjs`, written by scripts/bundle.mjs) from V8's code
 * cache: the small entries `dist/cli/main.js` and `dist/stub-mcp/<stub>.js` carry a copy of this and call it.
 *
 * Node 20 compiles every ES module from its source at every start (a compile cache for modules came
 * only with Node 22), and a probe run starts the CLI and then each stub server: both spent about a
 * third of their start-up compiling. A script run through `vm.Script` can be handed the code V8
 * compiled the last time, so a start reads it instead. The first start of a build (or of another
 * Node) writes the cache as the process exits successfully, holding every function it compiled; V8
 * checks the cache against the source and its own version and flags, and one it refuses is written anew.
 * The cache only saves compiling: the same code runs either way.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { replaceFile } from "../files/replace-file.js";

type ModuleBody = (exports: object, require: NodeRequire, module: object, filename: string, dirname: string) => void;

/**
 * Runs the bundle at path `file`: a CommonJS module's body that scripts/bundle.mjs wrapped as Node
 * wraps one, `(function (exports, require, module, __filename, __dirname) {…})`. `variant` names
 * what this start will mostly run (the CLI's command), so each command keeps a cache of the
 * functions it compiles rather than the first command's; it must be a plain word.
 */
export function runBundle(file: string, variant = "main"): void {
  const cacheFile = codeCachePath(file, /^[a-z]{1,16}$/.test(variant) ? variant : "other");
  const cachedData = readIfPresent(cacheFile);
  // ASCII by construction (scripts/bundle.mjs), so Latin-1 reads it without decoding UTF-8.
  const script = new Script(readFileSync(file, "latin1"), {
    filename: file,
    cachedData,
  });
  if (!cachedData || script.cachedDataRejected) {
    // Only from a start that succeeded: one that stopped at bad input compiled little worth keeping,
    // and a mistyped command must not leave a cache of its own behind.
    process.once("exit", (code) => {
      if (code === 0) writeCodeCache(cacheFile, script.createCachedData());
    });
  }
  const module = { exports: {} };
  (script.runInThisContext() as ModuleBody)(module.exports, createRequire(file), module, file, dirname(file));
}

/** Beside the bundle, per Node version and platform: a build's cache is removed with its build. */
function codeCachePath(bundle: string, variant: string): string {
  const name = `${basename(bundle, ".cjs")}.${variant}.${process.version}-${process.platform}-${process.arch}.bin`;
  return join(dirname(bundle), ".code-cache", name);
}

function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Whole or not at all, as two processes may write at once. */
function writeCodeCache(path: string, data: Buffer): void {
  try {
    replaceFile(path, data);
  } catch {
    // A folder that cannot be written (a read-only install) only means the next start compiles again.
  }
}
