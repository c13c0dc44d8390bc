import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/** Every figure a record takes from the counter: per-request counts and shared prefix tokens. */
function figures(measure: TokenMeasure) {
  return REQUESTS.map((d, i) => ({
    counts: measure.countRequestTokens(d),
    shared: locatePrefixBreak(REQUESTS[i - 1] ?? null, d, measure).sharedTokens,
  }));
}

describe("TokenCountCache", () => {
  it("answers from the file exactly what the tokenizer answers, cold and then warm", async () => {
    const file = join(dir, "tokens.jsonl");
    const expected = figures(await loadTokenCounter());

    expect(await new TokenCountCache(file).measure(figures)).toEqual(expected);
    const rows = readFileSync(file, "utf8").trim().split("\n");
    expect(rows.length).toBeGreaterThan(5);
    // A second run reads every fact back; nothing new is appended.
    expect(await new TokenCountCache(file).measure(figures)).toEqual(expected);
    expect(readFileSync(file, "utf8").trim().split("\n")).toEqual(rows);
  });

  it("takes a fact from the file when it has it (the tokenizer would say 2)", async () => {
    const file = join(dir, "tokens.jsonl");
    await new TokenCountCache(file).measure((m) => m.countText("hello world"));
    const [row] = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    appendFileSync(file, `${JSON.stringify({ k: row.k, n: 999 })}\n`);
    expect(await new TokenCountCache(file).measure((m) => m.countText("hello world"))).toBe(999);
  });

  it("ignores rows that are torn or not facts, and counts those texts again", async () => {
    const file = join(dir, "tokens.jsonl");
    appendFileSync(file, 'not json\n{"k":1,"n":2}\n{"k":"t:x","n":1.5}\n{"k":"t:y"');
    expect(await new TokenCountCache(file).measure((m) => m.countText("hello world"))).toBe(2);
  });

  it("keeps facts in memory only without a file", async () => {
    const cache = new TokenCountCache(null);
    expect(await cache.measure(figures)).toEqual(figures(await loadTokenCounter()));
    expect(existsSync(join(dir, "tokens.jsonl"))).toBe(false);
  });
});

describe("defaultTokenCachePath", () => {
  it("is named after the encoding and gpt-tokenizer's version, under XDG_CACHE_HOME", () => {
    const version = JSON.parse(readFileSync("node_modules/gpt-tokenizer/package.json", "utf8")).version;
    expect(defaultTokenCachePath({ XDG_CACHE_HOME: dir })).toBe(
      join(dir, "payload-probe", `tokens-o200k_base-gpt-tokenizer-${version}.jsonl`),
    );
    expect(defaultTokenCachePath({ [TOKEN_CACHE_ENV]: "off" })).toBeNull();
    expect(defaultTokenCachePath({ [TOKEN_CACHE_ENV]: join(dir, "x.jsonl") })).toBe(join(dir, "x.jsonl"));
  });
});
