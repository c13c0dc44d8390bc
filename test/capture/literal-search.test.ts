import { describe, expect, it } from "vitest";
import { LiteralSearch } from "../../src/capture/literal-search.js";
import { secretWordsIn } from "../../src/capture/secret-rules.js";

/** Every place each literal starts, by indexOf (case-folded for caseless ones): what one pass must equal. */
function byIndexOf(text: string, literals: { text: string; caseless?: boolean }[]): [number, number][] {
  const found: [number, number][] = [];
  for (const [index, literal] of literals.entries()) {
    const haystack = literal.caseless ? text.replace(/[A-Z]/g, (c) => c.toLowerCase()) : text;
    const needle = literal.caseless ? literal.text.toLowerCase() : literal.text;
    for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) found.push([at, index]);
  }
  return found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

function each(search: LiteralSearch, text: string): [number, number][] {
  const found: [number, number][] = [];
  search.each(text, (at, index) => {
    found.push([at, index]);
    return undefined;
  });
  return found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

describe("LiteralSearch", () => {
  const literals = [
    { text: "ghp_" },
    { text: "github_pat_" },
    { text: "://" },
    { text: "_authToken" },
    { text: "token", caseless: true },
    { text: "key", caseless: true },
    { text: "PRIVATE KEY" },
    { text: "xox" },
  ];
  const search = new LiteralSearch(literals);

  it("finds every place of every literal, overlapping ones too, as a search per literal does", () => {
    const text =
      "npm_authToken=x TOKEN Token tOkEn ghp_ghp_ xoxox https://a http:// -----BEGIN PRIVATE KEY----- apiKey github_pat_1";
    const found = each(search, text);
    expect(found).toEqual(byIndexOf(text, literals));
    // `Token` inside `_authToken`, `KEY` inside `PRIVATE KEY`, `xox` twice in `xoxox`.
    expect(found.filter(([, index]) => index === 4)).toHaveLength(4);
    expect(found.filter(([, index]) => index === 7)).toHaveLength(2);
  });

  it("agrees with a search per literal on this checkout's own code and on random text", async () => {
    const { readFileSync } = await import("node:fs");
    const code = readFileSync(new URL("../../src/capture/secret-rules.ts", import.meta.url), "utf8");
    expect(each(search, code)).toEqual(byIndexOf(code, literals));
    const alphabet = "gGhHpP_tTkKoOeEnNyYx:/ AIVRé€";
    let random = "";
    for (let i = 0; i < 50_000; i++) random += alphabet[(i * 7919 + ((i * i) % 31)) % alphabet.length];
    expect(each(search, random)).toEqual(byIndexOf(random, literals));
  });

  it("folds ASCII case only, as a /i expression without u does: no Kelvin sign for K, no long s for s", () => {
    expect(each(search, "\u212Aey \u212AEY kEy")).toEqual([[8, 5]]);
    expect(each(new LiteralSearch([{ text: "secret", caseless: true }]), "\u017Fecret SECRET")).toEqual([[7, 0]]);
  });

  it("does not match characters beyond ASCII that share an ASCII character's low bits", () => {
    // U+00E7 and U+0167 have the low 7 bits of `g` (0x67).
    expect(each(search, "\u00E7hp_ \u0167hp_ ghp_")).toEqual([[10, 0]]);
  });

  it("goes on from the place a call returns, passing over the places before it", () => {
    const words = new LiteralSearch([{ text: "abc" }, { text: "bca" }]);
    const found: number[] = [];
    words.each("abcabcabc abc", (at) => {
      found.push(at);
      return at === 0 ? 9 : undefined;
    });
    expect(found).toEqual([0, 10]);
  });

  it("finds nothing in texts shorter than its literals, and takes no literal shorter than three", () => {
    expect(each(search, "gh")).toEqual([]);
    expect(() => new LiteralSearch([{ text: "sk" }])).toThrow(/shorter than 3/);
  });
});

describe("secretWordsIn", () => {
  it("finds the secret words in any case, and `key` only after an owner word", () => {
    const text = "DB_PASSWORD=x; apiKey: y; monkey=z; private_key=w; Credentials; pwd; SECRET";
    expect(secretWordsIn(text).map((hit) => text.slice(hit.start, hit.end))).toEqual([
      "PASSW",
      "Key",
      "key",
      "Credential",
      "pwd",
      "SECRET",
    ]);
  });
});
