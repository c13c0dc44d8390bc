/**
 * Loads a CommonJS bundle (`dist/bundles/<name>.cjs`, written by scripts/bundle.mjs) from V8's code
 * cache: the small entries `dist/cli/main.js` and `dist/stub-mcp/<stub>.js` carry a copy of this and
 * start their bundle with it, and the CLI loads the libraries it bundles apart (undici, OpenTelemetry,
 * x509) with it.
 *
 * Node 20 compiles every ES module from its source at every start (a compile cache for modules came
 * only with Node 22), and a probe run starts the CLI and then each stub server: both spent about a
 * third of their start-up compiling. A script run through `vm.Script` can be handed the code V8
 * compiled the last time, so a start reads it instead. The first start of a build (or of another
 * Node) writes the cache as the process exits successfully, holding every function it compiled.
 *
 * V8 checks a cache against its own version and flags but against the source's length only, and in
 * a release build it does not check its payload: a cache of another build of the same length was
 * taken (old functions run, lazy ones parsed at old offsets: a SyntaxError at every start), and
 * changed bytes stop the process in V8's deserializer. So each cache file starts with a header of
 * ours: the CRC-32 and length of the bundle it was compiled from and the CRC-32 of V8's data; a
 * cache that does not match the bundle just read, or its own checksum, is not handed to V8.
 * The cache only saves compiling: the same code runs either way.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { crc32 } from "node:zlib";
import { replaceFile } from "../files/replace-file.js";

type ModuleBody = (exports: object, require: NodeRequire, module: object, filename: string, dirname: string) => void;

/**
 * Runs the bundle at path `file`, a CommonJS module's body that scripts/bundle.mjs wrapped as Node
 * wraps one, `(function (exports, require, module, __filename, __dirname) {…})`, and returns its
 * exports. `variant` names what this start will mostly run (the CLI's command), so each command
 * keeps a cache of the functions it compiles rather than the first command's; it must be a plain word.
 */
export function loadBundle(file: string, variant = "main"): unknown {
  const cacheFile = codeCachePath(file, /^[a-z]{1,16}$/.test(variant) ? variant : "other");
  const bundle = readFileSync(file);
  const compiledFrom: BundleKey = { crc: crc32(bundle), length: bundle.length };
  const cachedData = cacheOf(readIfPresent(cacheFile), compiledFrom);
  // ASCII by construction (scripts/bundle.mjs), so Latin-1 is exact and copies the bytes without decoding UTF-8.
  const script = new Script(bundle.toString("latin1"), { filename: file, cachedData });
  if (!cachedData || script.cachedDataRejected) {
    // Only from a start that succeeded: one that stopped at bad input compiled little worth keeping,
    // and a mistyped command must not leave a cache of its own behind.
    process.once("exit", (code) => {
      // A bundle rebuilt while this process ran is not the source this cache was compiled from.
      if (code === 0 && isSameBundle(readIfPresent(file), compiledFrom)) {
        writeCodeCache(cacheFile, sealCache(script.createCachedData(), compiledFrom));
      }
    });
  }
  const module = { exports: {} };
  (script.runInThisContext() as ModuleBody)(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/** Which bundle a cache was compiled from. */
interface BundleKey {
  crc: number;
  length: number;
}

/** The header: a tag of this format, the bundle's CRC-32 and length, V8 data's CRC-32. */
const CACHE_TAG = 0x70706331; // "ppc1"
const HEADER_BYTES = 16;

function sealCache(data: Buffer, from: BundleKey): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(CACHE_TAG, 0);
  header.writeUInt32LE(from.crc, 4);
  header.writeUInt32LE(from.length, 8);
  header.writeUInt32LE(crc32(data), 12);
  return Buffer.concat([header, data]);
}

/** V8's data in `file` when it was compiled from `bundle` and arrived whole; otherwise none. */
function cacheOf(file: Buffer | undefined, bundle: BundleKey): Buffer | undefined {
  if (!file || file.length <= HEADER_BYTES || file.readUInt32LE(0) !== CACHE_TAG) return undefined;
  if (file.readUInt32LE(4) !== bundle.crc || file.readUInt32LE(8) !== bundle.length) return undefined;
  const data = file.subarray(HEADER_BYTES);
  return crc32(data) === file.readUInt32LE(12) ? data : undefined;
}

function isSameBundle(bundle: Buffer | undefined, key: BundleKey): boolean {
  return bundle !== undefined && bundle.length === key.length && crc32(bundle) === key.crc;
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
