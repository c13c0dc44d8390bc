import { describe, expect, it } from "vitest";
import { unescapedRare } from "../../src/capture/rare-escapes.js";

describe("unescapedRare", () => {
  it("returns a text without \\/ or \\u escapes as it is", () => {
    const text = String.raw`{"a":"line\nbreak \"quoted\" C:\\path"}`;
    const view = unescapedRare(text);
    expect(view.text).toBe(text);
    expect([view.start(5), view.end(9)]).toEqual([5, 9]);
  });

  it("decodes \\/ and \\uXXXX once or twice escaped, and maps each position back to the whole escape", () => {
    const text = String.raw`x https:\/\/u\u0041 y:\\/ z\\u0042 w\\\/ v\\\u0043 end`;
    const view = unescapedRare(text);
    expect(view.text).toBe(String.raw`x https://uA y:/ zB w/ v\\C end`);
    const at = (char: string, nth = 0) => view.text.split(char, nth + 1).join(char).length;
    // The first `/` of `://` starts at its backslash; `A` spans the six characters of `\u0041`.
    expect(view.start(at("/"))).toBe(text.indexOf(String.raw`\/`));
    expect(view.start(at("A"))).toBe(text.indexOf(String.raw`\u0041`));
    expect(view.end(at("A") + 1)).toBe(text.indexOf(String.raw`\u0041`) + 6);
    // Twice escaped: `\\u0042` is one escape, `\\\/` one slash escaped by both writers.
    expect(view.start(at("B"))).toBe(text.indexOf(String.raw`\\u0042`));
    expect(view.end(at("/", 3) + 1)).toBe(text.indexOf(String.raw`w\\\/`) + 5);
    // After an escaped backslash pair the last backslash escapes the `u`.
    expect(view.start(at("C"))).toBe(text.indexOf(String.raw`\u0043`));
    // And the other way: an escape's characters, any of them, are its one character.
    const escapeAt = text.indexOf(String.raw`\u0041`);
    expect([view.at(escapeAt), view.at(escapeAt + 5), view.at(escapeAt + 6)]).toEqual([at("A"), at("A"), at("A") + 1]);
    // A plain character after the escapes maps by the length they lost.
    expect(view.start(view.text.length - 1)).toBe(text.length - 1);
    expect(view.end(view.text.length)).toBe(text.length);
  });
});
