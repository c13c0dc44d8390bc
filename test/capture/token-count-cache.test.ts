import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { locatePrefixBreak } from "../../src/capture/prefix.js";
import { defaultTokenCachePath, TOKEN_CACHE_ENV, TokenCountCache } from "../../src/capture/token-count-cache.js";
import { loadTokenCounter, type TokenMeasure } from "../../src/capture/tokens.js";
import type { WireDissection } from "../../src/providers/types.js";
import { dissection } from "./dissection.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "token-cache-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const TOOL = '{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{}}}';
const user = (text: string) => ({ role: "user", json: JSON.stringify({ role: "user", content: text }) });

/** A conversation that grows, then a request whose system part changed (a prefix break inside a segment). */
const REQUESTS: WireDissection[] = [
  dissection([TOOL], ["You are a probe.", "cwd: /tmp/проба"], [user("say hello 你好")]),
  dissection([TOOL], ["You are a probe.", "cwd: /tmp/проба"], [user("say hello 你好"), user("and again <|im_end|>")]),
  dissection([TOOL], ["You are a probe!", "cwd: /tmp/проба"], [user("say hello 你好"), user("and again <|im_end|>")]),
];

/** Every row of every file of the cache folder, as text. */
const rowsIn = (folder: string) =>
  readdirSync(folder)
    .sort()
    .flatMap((name) => readFileSync(join(folder, name), "utf8").trim().split("\n"));

/** Every figure a record takes from the counter: per-request counts and shared prefix tokens. */
function figures(measure: TokenMeasure) {
  return REQUESTS.map((d, i) => ({
    counts: measure.countRequestTokens(d),
    shared: locatePrefixBreak(REQUESTS[i - 1] ?? null, d, measure).sharedTokens,
  }));
}

describe("TokenCountCache", () => {
  it("answers from the folder exactly what the tokenizer answers, cold and then warm", async () => {
    const folder = join(dir, "tokens");
    const expected = figures(await loadTokenCounter());

    expect(await new TokenCountCache(folder).measure(figures)).toEqual(expected);
    const rows = rowsIn(folder);
    expect(rows.length).toBeGreaterThan(5);
    // Spread over files by the key's first hash character, each file named by it.
    for (const name of readdirSync(folder)) {
      for (const row of readFileSync(join(folder, name), "utf8").trim().split("\n")) {
        expect(`${JSON.parse(row).k[2]}.jsonl`).toBe(name);
      }
    }
    // A second run reads every fact back; nothing new is appended.
    expect(await new TokenCountCache(folder).measure(figures)).toEqual(expected);
    expect(rowsIn(folder)).toEqual(rows);
  });

  it("takes a fact from the folder when it has it (the tokenizer would say 2)", async () => {
    const folder = join(dir, "tokens");
    await new TokenCountCache(folder).measure((m) => m.countText("hello world"));
    const [name] = readdirSync(folder);
    const row = JSON.parse(readFileSync(join(folder, name!), "utf8"));
    appendFileSync(join(folder, name!), `${JSON.stringify({ k: row.k, n: 999 })}\n`);
    expect(await new TokenCountCache(folder).measure((m) => m.countText("hello world"))).toBe(999);
  });

  it("reads only the files of the facts it is asked for", async () => {
    const folder = join(dir, "tokens");
    await new TokenCountCache(folder).measure((m) => m.countText("hello world"));
    const [name] = readdirSync(folder);
    // Another shard past the size limit: read, it would be started afresh (removed).
    const other = name === "A.jsonl" ? "B.jsonl" : "A.jsonl";
    writeFileSync(join(folder, other), `${"x".repeat(70 * 1024)}\n`);
    expect(await new TokenCountCache(folder).measure((m) => m.countText("hello world"))).toBe(2);
    expect(existsSync(join(folder, other))).toBe(true);
    // The shard it reads is started afresh once past the limit, and the fact counted again.
    writeFileSync(join(folder, name!), `${"x".repeat(70 * 1024)}\n`);
    expect(await new TokenCountCache(folder).measure((m) => m.countText("hello world"))).toBe(2);
    expect(rowsIn(folder).filter((row) => row.startsWith("{")).length).toBe(1);
  });

  it("ignores rows that are torn or not facts, and counts those texts again", async () => {
    const folder = join(dir, "tokens");
    await new TokenCountCache(folder).measure((m) => m.countText("hello world"));
    const [name] = readdirSync(folder);
    const { k } = JSON.parse(readFileSync(join(folder, name!), "utf8"));
    writeFileSync(join(folder, name!), `not json\n{"k":1,"n":2}\n{"k":"${k}","n":1.5}\n{"k":"${k}"`);
    expect(await new TokenCountCache(folder).measure((m) => m.countText("hello world"))).toBe(2);
  });

  it("keeps facts in memory only without a folder", async () => {
    const cache = new TokenCountCache(null);
    expect(await cache.measure(figures)).toEqual(figures(await loadTokenCounter()));
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("defaultTokenCachePath", () => {
  it("is named after the encoding and gpt-tokenizer's version, under XDG_CACHE_HOME", () => {
    const version = JSON.parse(readFileSync("node_modules/gpt-tokenizer/package.json", "utf8")).version;
    expect(defaultTokenCachePath({ XDG_CACHE_HOME: dir })).toBe(
      join(dir, "payload-probe", `tokens-o200k_base-gpt-tokenizer-${version}`),
    );
    expect(defaultTokenCachePath({ [TOKEN_CACHE_ENV]: "off" })).toBeNull();
    expect(defaultTokenCachePath({ [TOKEN_CACHE_ENV]: join(dir, "x") })).toBe(join(dir, "x"));
  });
});
