import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  buildCacheEntry,
  CACHE_MAX_AGE_MS,
  computeConfigHash,
  configIdentity,
  defaultCachePath,
  initEmptyCache,
  isEntryValid,
  readCache,
  removeCacheEntry,
  stableStringify,
  writeCacheEntry,
} from "../../src/mcp/cache.js";
import type { CacheEntry } from "../../src/mcp/types.js";

let dir: string;
let cachePath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-cache-"));
  cachePath = defaultCachePath(join(dir, "agent"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function entry(overrides: Partial<CacheEntry> = {}): CacheEntry {
  return { configHash: "h", tools: [{ name: "stub_echo" }], resources: [], cachedAt: 1_000, ...overrides };
}

describe("configHash", () => {
  const vectorEntry = { command: "node", args: ["probe.js"] };

  it("renders the spec's stable string for the test vector, cwd staying undefined", () => {
    expect(stableStringify(configIdentity(vectorEntry, {}))).toBe(
      '{"args":["probe.js"],"auth":undefined,"bearerToken":undefined,"bearerTokenEnv":undefined,"command":"node","cwd":undefined,"env":undefined,"excludeTools":undefined,"exposeResources":undefined,"headers":undefined,"includeTools":undefined,"protocolVersion":undefined,"requestHeadersCommand":undefined,"socket":undefined,"url":undefined}',
    );
  });

  it("hashes the test vector to the spec's digest", () => {
    expect(computeConfigHash(vectorEntry, {})).toBe("339f817a97655889dd163407f92b60b625b26c97f7c1cc9a8b9429c9e524710f");
  });

  it("sorts keys at every depth and renders undefined array items bare", () => {
    expect(stableStringify({ b: { d: 1, c: [undefined, { z: null, a: "x" }] }, a: true })).toBe(
      '{"a":true,"b":{"c":[undefined,{"a":"x","z":null}],"d":1}}',
    );
  });

  it("ignores the fields that do not change what a server offers", () => {
    const base = computeConfigHash(vectorEntry, {});
    expect(
      computeConfigHash(
        {
          ...vectorEntry,
          lifecycle: "eager",
          idleTimeout: 3,
          requestTimeoutMs: 5,
          debug: true,
          directTools: true,
          toolPrefix: "none",
        },
        {},
      ),
    ).toBe(base);
    expect(computeConfigHash({ ...vectorEntry, includeTools: ["a"] }, {})).not.toBe(base);
  });

  it("hashes interpolated env, url and headers, so changing the variable changes the hash", () => {
    const withVar = {
      command: "node",
      env: { TOKEN: "${SECRET}" },
      url: "http://h/${SECRET}",
      headers: { A: "${SECRET}" },
    };
    expect(configIdentity(withVar, { SECRET: "s1" })).toMatchObject({
      env: { TOKEN: "s1" },
      url: "http://h/s1",
      headers: { A: "s1" },
    });
    expect(computeConfigHash(withVar, { SECRET: "s1" })).not.toBe(computeConfigHash(withVar, { SECRET: "s2" }));
  });

  it("resolves cwd to an absolute path and bearerTokenEnv to the token", () => {
    const identity = configIdentity(
      { command: "node", cwd: "sub/dir", bearerTokenEnv: "TOK" },
      { TOK: "abc" },
      "/base",
    );
    expect(identity.cwd).toBe("/base/sub/dir");
    expect(identity.bearerToken).toBe("abc");
    expect(configIdentity({ command: "node", cwd: "~/x" }, { HOME: "/home/u" }, "/base").cwd).toBe("/home/u/x");
  });
});

describe("validity", () => {
  const now = 10 * CACHE_MAX_AGE_MS;

  it("rejects a missing entry and a hash mismatch", () => {
    expect(isEntryValid(undefined, "h", now)).toBe(false);
    expect(isEntryValid(entry({ cachedAt: now }), "other", now)).toBe(false);
    expect(isEntryValid(entry({ cachedAt: now }), "h", now)).toBe(true);
  });

  it("accepts age up to and including 7 days without ttlMs, not beyond", () => {
    expect(isEntryValid(entry({ cachedAt: now - CACHE_MAX_AGE_MS + 1 }), "h", now)).toBe(true);
    expect(isEntryValid(entry({ cachedAt: now - CACHE_MAX_AGE_MS }), "h", now)).toBe(true);
    expect(isEntryValid(entry({ cachedAt: now - CACHE_MAX_AGE_MS - 1 }), "h", now)).toBe(false);
  });

  it("treats ttlMs 0 as never valid", () => {
    expect(isEntryValid(entry({ cachedAt: now, ttlMs: 0 }), "h", now)).toBe(false);
  });

  it("requires age strictly below ttlMs, and ttlMs never extends the 7-day limit", () => {
    expect(isEntryValid(entry({ cachedAt: now - 999, ttlMs: 1000 }), "h", now)).toBe(true);
    expect(isEntryValid(entry({ cachedAt: now - 1000, ttlMs: 1000 }), "h", now)).toBe(false);
    expect(isEntryValid(entry({ cachedAt: now - CACHE_MAX_AGE_MS, ttlMs: 2 * CACHE_MAX_AGE_MS }), "h", now)).toBe(
      false,
    );
    expect(isEntryValid(entry({ cachedAt: now - CACHE_MAX_AGE_MS + 1, ttlMs: 2 * CACHE_MAX_AGE_MS }), "h", now)).toBe(
      true,
    );
  });

  it("ignores a ttlMs that is not a safe integer of zero or more", () => {
    expect(isEntryValid(entry({ cachedAt: now - 5000, ttlMs: -1 }), "h", now)).toBe(true);
    expect(isEntryValid(entry({ cachedAt: now - 5000, ttlMs: 1.5 }), "h", now)).toBe(true);
  });

  it("rejects a cachedAt that is not a number", () => {
    expect(isEntryValid(entry({ cachedAt: String(now) as unknown as number }), "h", now)).toBe(false);
  });
});

describe("cache file", () => {
  it("reads a missing file as missing and empty", () => {
    expect(readCache(cachePath)).toEqual({ state: "missing", file: { version: 1, servers: {} } });
  });

  it("reads bad JSON and another version as corrupt and empty", () => {
    initEmptyCache(cachePath);
    writeFileSync(cachePath, '{"version":1,"servers":');
    expect(readCache(cachePath)).toEqual({ state: "corrupt", file: { version: 1, servers: {} } });
    writeFileSync(cachePath, JSON.stringify({ version: 2, servers: { a: entry() } }));
    expect(readCache(cachePath)).toEqual({ state: "corrupt", file: { version: 1, servers: {} } });
  });

  it('initialises an empty cache as exactly {"version":1,"servers":{}}', () => {
    initEmptyCache(cachePath);
    expect(readFileSync(cachePath, "utf8")).toBe('{"version":1,"servers":{}}');
    expect(readCache(cachePath).state).toBe("ok");
  });

  it("writes entry keys, tool keys and resource keys in the spec's order, compactly", () => {
    const scrambled = {
      cachedAt: 42,
      cacheScope: "user",
      ttlMs: 5,
      instructions: "hi",
      prompts: [],
      resources: [{ description: "d", name: "n", uri: "u://x" }],
      tools: [{ inputSchema: { type: "object" }, description: "Echo", name: "stub_echo" }],
      configHash: "abc",
    } as CacheEntry;
    writeCacheEntry(cachePath, "probe-stub", scrambled);
    expect(readFileSync(cachePath, "utf8")).toBe(
      '{"version":1,"servers":{"probe-stub":{"configHash":"abc","tools":[{"name":"stub_echo","description":"Echo","inputSchema":{"type":"object"}}],' +
        '"resources":[{"uri":"u://x","name":"n","description":"d"}],"prompts":[],"instructions":"hi","ttlMs":5,"cacheScope":"user","cachedAt":42}}}',
    );
  });

  it("leaves optional keys out rather than writing them empty", () => {
    const built = buildCacheEntry({ configHash: "abc", tools: [{ name: "t" }], resources: [], cachedAt: 7 });
    expect(Object.keys(built)).toEqual(["configHash", "tools", "resources", "cachedAt"]);
    expect(Object.keys(built.tools[0]!)).toEqual(["name"]);
  });

  it("leaves no temp file behind", () => {
    writeCacheEntry(cachePath, "a", entry());
    expect(readdirSync(join(dir, "agent"))).toEqual(["mcp-cache.json"]);
  });

  it("keeps other servers' entries when writing one, including ones written by someone else", () => {
    writeCacheEntry(cachePath, "a", entry({ configHash: "ha" }));
    const foreign = JSON.parse(readFileSync(cachePath, "utf8"));
    foreign.servers.b = entry({ configHash: "hb" });
    writeFileSync(cachePath, JSON.stringify(foreign));
    writeCacheEntry(cachePath, "a", entry({ configHash: "ha2" }));
    const { state, file } = readCache(cachePath);
    expect(state).toBe("ok");
    expect(Object.keys(file.servers)).toEqual(["a", "b"]);
    expect(file.servers.a!.configHash).toBe("ha2");
    expect(file.servers.b!.configHash).toBe("hb");
  });

  it("replaces a corrupt file when writing an entry", () => {
    initEmptyCache(cachePath);
    writeFileSync(cachePath, "not json");
    writeCacheEntry(cachePath, "a", entry());
    expect(Object.keys(readCache(cachePath).file.servers)).toEqual(["a"]);
  });

  it("removes one server's entry and keeps the rest", () => {
    writeCacheEntry(cachePath, "a", entry());
    writeCacheEntry(cachePath, "b", entry());
    removeCacheEntry(cachePath, "a");
    expect(Object.keys(readCache(cachePath).file.servers)).toEqual(["b"]);
  });

  it("round-trips a server named __proto__ as an ordinary entry", () => {
    writeCacheEntry(cachePath, "__proto__", entry());
    const { file } = readCache(cachePath);
    expect(Object.keys(file.servers)).toEqual(["__proto__"]);
  });
});
