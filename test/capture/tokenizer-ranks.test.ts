/**
 * The tokenizer loads from the ranks the build wrote (dist/tokenizer/, scripts/bundle.mjs) instead of
 * gpt-tokenizer's o200k_base module: the ranks must be that module's, and the counts the same.
 */
import { existsSync, readFileSync } from "node:fs";
import { deserialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { builtRanksPath, loadTokenCounter } from "../../src/capture/tokens.js";

const TEXTS = [
  "",
  "hello world",
  "  leading and trailing spaces  \n\n\ttabs\r\n",
  '{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}',
  "text that looks like <|im_start|>system<|im_sep|> a frame <|im_end|> and <|endoftext|>",
  "ünïcödé, 中文字符, русский текст, emoji 😀👩‍👩‍👧, and \u0000 control",
  "/tmp/pp-shared-runs-Xyz123/ws/p1/cwd and Current working directory: /work/main",
  "function f(a, b) {\n  return a + b; // sum\n}\n".repeat(20),
];

describe("the tokenizer from the build's ranks", () => {
  it("reads gpt-tokenizer's own o200k_base ranks", async () => {
    expect(existsSync(builtRanksPath())).toBe(true);
    const module = (await import("gpt-tokenizer/bpeRanks/o200k_base")).default as unknown[];
    const built = deserialize(readFileSync(builtRanksPath())) as unknown[];
    expect(built.length).toBe(module.length);
    expect(JSON.stringify(built)).toBe(JSON.stringify(module));
  });

  it("counts as gpt-tokenizer's o200k_base module counts", async () => {
    const module = await import("gpt-tokenizer/encoding/o200k_base");
    const counter = await loadTokenCounter();
    for (const text of TEXTS)
      expect(counter.countText(text)).toBe(module.countTokens(text, { disallowedSpecial: new Set() }));
  });
});
