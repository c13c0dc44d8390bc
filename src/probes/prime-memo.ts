/**
 * `cache: valid` without starting the servers again, when that is provably what starting them
 * would write.
 *
 * A primed entry is what our client (the CLI build) asked of a stub server (its build, its command
 * line, the fixture files it reads) and what the stub answered; nothing else reaches it (the stubs
 * read no environment besides the wire log's path, which priming leaves out). So the entries
 * primed once are kept under a key made of exactly those things: the sha256 of the client's and
 * each stub's bundle with everything they load (dist/build-id.json, written by scripts/bundle.mjs),
 * each server's name and configHash (its command, args, env, cwd), and the bytes of every argument
 * that names a file. The same key can only prime the same entries; only `cachedAt` is new.
 *
 * Only for our own stubs run from the bundle: a server that is not `node dist/stub-mcp/<stub>.js`,
 * a stub tsc wrote over, or the CLI running from tsc's output (as in unit tests) is primed by a
 * connection every time. `PAYLOAD_PROBE_PRIME_MEMO=off` primes by a connection always.
 */
import { readFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { bundleBuildIds, isFile, memoKey, memoPath, sha256, storeMemo } from "../files/build-memo.js";
import { computeConfigHash } from "../mcp/cache.js";
import type { CacheEntry, McpConfig } from "../mcp/types.js";

export const PRIME_MEMO_ENV = "PAYLOAD_PROBE_PRIME_MEMO";
/** Raised when the key or the stored file's form changes. */
const MEMO_FORMAT = 1;

/**
 * The key of the entries priming `config`'s enabled servers (started with `env`) would write, or
 * null when they cannot be vouched for. Relative paths on a command line are resolved as the spawned
 * server sees them: from `baseDir`, where a server without a cwd starts.
 */
export function primeMemoKey(config: McpConfig, root: string, env: NodeJS.ProcessEnv, baseDir: string): string | null {
  const builds = bundleBuildIds(root);
  const client = builds?.["dist/cli/main.js"];
  if (!builds || !client) return null;
  const servers = [];
  for (const { name, entry } of config.servers) {
    if (entry.disabled) continue;
    const [script, ...rest] = entry.args ?? [];
    if (entry.command !== "node" || entry.url !== undefined || entry.cwd !== undefined || script === undefined)
      return null;
    const at = (path: string) => resolve(baseDir, path);
    const stub = relative(root, at(script)).split(sep).join("/");
    const built = builds[stub];
    if (!stub.startsWith("dist/stub-mcp/") || !built || !isFile(at(script))) return null;
    if (sha256(readFileSync(at(script))) !== built.entry) return null;
    const files = rest.filter((arg) => isFile(at(arg))).map((arg) => [arg, sha256(readFileSync(at(arg)))]);
    servers.push({ name, configHash: computeConfigHash(entry, env, baseDir), stub: built.build, files });
  }
  return memoKey(client.build, JSON.stringify({ format: MEMO_FORMAT, servers }));
}

const primedPath = (key: string) => memoPath("mcp-primed", key, "json");

/** The entries stored under `key`, in the order priming wrote them, or null. */
export function readPrimeMemo(key: string): [string, CacheEntry][] | null {
  try {
    const stored = JSON.parse(readFileSync(primedPath(key), "utf8")) as {
      format?: number;
      servers?: [string, CacheEntry][];
    };
    return stored.format === MEMO_FORMAT && Array.isArray(stored.servers) ? stored.servers : null;
  } catch {
    return null; // not stored yet, or cut short by a crash: prime by a connection and store it
  }
}

/** Stores what a real priming wrote. */
export function savePrimeMemo(key: string, servers: [string, CacheEntry][]): void {
  storeMemo(primedPath(key), JSON.stringify({ format: MEMO_FORMAT, servers }));
}
