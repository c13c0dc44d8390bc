/**
 * bpe-merge.ts must give gpt-tokenizer's own tokens for every piece: its merge is compared here with
 * the library's `bytePairMerge` on the same BytePairEncodingCore, on inputs the library still merges
 * quickly (its time grows with the square of a piece's length).
 */
import { readFileSync } from "node:fs";
import o200k from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { type BytePairCore, LONG_PIECE, mergeBytePairs, mergeLongPiecesFast } from "../../src/capture/bpe-merge.js";
import { loadTokenCounter } from "../../src/capture/tokens.js";

type LibraryCore = BytePairCore & { bytePairMerge(piece: Uint8Array): number[] };
const core = (o200k as unknown as { bytePairEncodingCoreProcessor: LibraryCore }).bytePairEncodingCoreProcessor;
const utf8 = new TextEncoder();

function expectSameMerge(piece: Uint8Array): void {
  expect(mergeBytePairs(piece, core)).toEqual(core.bytePairMerge(piece));
}

/** A fixed pseudo-random sequence, so a failure names an input that can be made again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function randomText(next: () => number, alphabet: string[], length: number): string {
  return Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
}

describe("mergeBytePairs", () => {
  it("merges random strings of small alphabets as gpt-tokenizer does", () => {
    const alphabets = ["ab", "aA", "01", " \n", "a b", "AB1 !", "éa中", "xyz/=+", "ab😀", "\u0301e\u0301"];
    const next = random(21);
    for (const alphabet of alphabets)
      for (let i = 0; i < 60; i++) {
        const text = randomText(next, [...alphabet], 1 + Math.floor(next() * 400));
        expectSameMerge(utf8.encode(text));
      }
  });

  it("merges long runs of one character as gpt-tokenizer does", () => {
    for (const char of ["A", "a", "7", " ", "\n", "!", "=", "中", "é", "😀"])
      for (const length of [1, 2, 3, 5, 8, 13, 63, 64, 65, 100, 1000, 4000])
        expectSameMerge(utf8.encode(char.repeat(length)));
  });

  it("merges any bytes, also those that are not UTF-8, as gpt-tokenizer does", () => {
    const next = random(7);
    for (let i = 0; i < 200; i++) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(next() * 200) }, () => Math.floor(next() * 256));
      expectSameMerge(bytes);
    }
  });

  it("merges the words of real texts as gpt-tokenizer does, also as one long piece", () => {
    for (const file of ["README.md", "docs/decisions.md", "src/capture/tokens.ts"]) {
      const text = readFileSync(file, "utf8");
      for (const [piece] of text.slice(0, 20_000).matchAll(/\S+\s*/g)) expectSameMerge(utf8.encode(piece));
      // Letters alone run together into one piece of real words, as a minified identifier might.
      expectSameMerge(utf8.encode(text.replace(/[^\p{L}]/gu, "").slice(0, 3000)));
    }
  });
});

describe("the token counter", () => {
  it("counts texts with long pieces exactly as gpt-tokenizer does", async () => {
    const counter = await loadTokenCounter();
    const plain = { disallowedSpecial: new Set<string>() };
    const texts = [
      `data:image/png;base64,iVBORw0KGgo${"A".repeat(3000)}ElFTkSuQmCC`,
      `${"7".repeat(2000)} ${" ".repeat(2000)}x${"\n".repeat(500)}${"!".repeat(LONG_PIECE * 3)}`,
      `${"Ünïcödé".repeat(300)} ${"中文".repeat(500)}`,
    ];
    for (const text of texts) {
      expect(counter.countText(text)).toBe(o200k.countTokens(text, plain));
      expect(counter.framedTokens({ kind: "messages", text }).slice(3, -1)).toEqual(o200k.encode(text, plain));
    }
  });
});

describe("a piece longer than the longest merged whole", () => {
  it("is merged in cuts of that length, never between the halves of a surrogate pair", () => {
    const stand = {
      textEncoder: utf8,
      bytePairEncode: (piece: string) => [piece.length],
      getBpeRankFromBytes: core.getBpeRankFromBytes.bind(core),
      getBpeRankFromBytesOrThrow: core.getBpeRankFromBytesOrThrow.bind(core),
      getBpeRankFromString: core.getBpeRankFromString.bind(core),
    };
    mergeLongPiecesFast(stand, 100);
    // Each cut is merged on its own: the tokens are those of the cuts, one after the other.
    expect(stand.bytePairEncode("A".repeat(250))).toEqual([
      ...mergeBytePairs(utf8.encode("A".repeat(100)), core),
      ...mergeBytePairs(utf8.encode("A".repeat(100)), core),
      ...mergeBytePairs(utf8.encode("A".repeat(50)), core),
    ]);
    // 99 units, then a surrogate pair across the cut at 100: the pair goes whole into the next cut.
    const astral = `${"A".repeat(99)}😀${"A".repeat(98)}`;
    expect(stand.bytePairEncode(astral)).toEqual([
      ...mergeBytePairs(utf8.encode("A".repeat(99)), core),
      ...mergeBytePairs(utf8.encode(`😀${"A".repeat(98)}`), core),
    ]);
    // Up to the bound a piece is merged whole.
    expect(stand.bytePairEncode("A".repeat(100))).toEqual(mergeBytePairs(utf8.encode("A".repeat(100)), core));
  });
});
