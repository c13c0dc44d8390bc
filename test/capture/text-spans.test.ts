import { describe, expect, it } from "vitest";
import { JoinedTexts, unionOf } from "../../src/capture/text-spans.js";

describe("unionOf", () => {
  const spans = [
    { start: 10, end: 12, kind: "b" },
    { start: 0, end: 4, kind: "a" },
    { start: 4, end: 6, kind: "c" },
    { start: 2, end: 3, kind: "d" },
  ];

  it("joins spans that meet only when told to, and leaves the spans given as they were", () => {
    const before = structuredClone(spans);
    expect(unionOf(spans, true).map(({ start, end }) => [start, end])).toEqual([
      [0, 6],
      [10, 12],
    ]);
    expect(unionOf(spans, false).map(({ start, end }) => [start, end])).toEqual([
      [0, 4],
      [4, 6],
      [10, 12],
    ]);
    expect(spans).toEqual(before);
  });

  it("tells the kept span of each span folded into it", () => {
    const folded: string[] = [];
    unionOf(spans, true, (kept, span) => folded.push(`${span.kind}→${kept.kind}`));
    expect(folded).toEqual(["d→a", "c→a"]);
  });
});

describe("JoinedTexts", () => {
  const texts = [[{ text: "ab" }, { text: "" }, { text: "cd" }], [{ text: "ef" }]];

  it("joins a group's texts directly and groups with the gap, and finds each position's text", () => {
    const joined = new JoinedTexts(texts, "||");
    expect(joined.text).toBe("abcd||ef");
    expect(joined.at(3)).toEqual({ item: texts[0]![2], start: 2 });
    // A position in the gap belongs to the text before it.
    expect(joined.at(5)).toEqual({ item: texts[0]![2], start: 2 });
    expect(joined.at(6)).toEqual({ item: texts[1]![0], start: 6 });
  });

  it("cuts a span into the parts of the texts it covers, passing over empty texts and the gap", () => {
    const joined = new JoinedTexts(texts, "||");
    expect([...joined.covered(1, 7)].map(({ item, from, to }) => [item.text, from, to])).toEqual([
      ["ab", 1, 2],
      ["cd", 0, 2],
      ["ef", 0, 1],
    ]);
  });

  it("reads a single text as it is", () => {
    const text = "x".repeat(1000);
    expect(new JoinedTexts([[{ text }]], "||").text).toBe(text);
  });
});
