/**
 * The tokenizer loads from the ranks the build wrote (dist/tokenizer/, scripts/bundle.mjs) instead of
 * gpt-tokenizer's o200k_base module: the ranks must be that module's, and the counts the same.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RankValue, readRankTable } from "../../src/capture/rank-table.js";
import { builtRanksPath, loadTokenCounter } from "../../src/capture/tokens.js";
import { PROJECT_ROOT } from "../../src/project-root.js";

const REAL_AGENT_BODIES = join(PROJECT_ROOT, "test", "fixtures", "real-agents");

const TEXTS = [
  "",
  "hello world",
  "  leading and trailing spaces  \n\n\ttabs\r\n",
  '{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}',
  "text that looks like <|im_start|>system<|im_sep|> a frame <|im_end|> and <|endoftext|>",
  "ünïcödé, 中文字符, русский текст, emoji 😀👩‍👩‍👧, and \u0000 control",
  "/tmp/pp-shared-runs-Xyz123/ws/p1/cwd and Current working directory: /work/main",
  "function f(a, b) {\n  return a + b; // sum\n}\n".repeat(20),
  // Prose in two languages' worth of punctuation and a lockfile: 420,000 characters in all.
  readFileSync(join(PROJECT_ROOT, "docs", "decisions.md"), "utf8"),
  readFileSync(join(PROJECT_ROOT, "package-lock.json"), "utf8"),
  // Whole bodies real agents sent (Claude Code, Codex, Gemini CLI): 320 KB of JSON, schemas and prose.
  ...readdirSync(REAL_AGENT_BODIES).map((name) => readFileSync(join(REAL_AGENT_BODIES, name), "utf8")),
];

describe("the tokenizer from the build's ranks", () => {
  it("reads gpt-tokenizer's own o200k_base ranks: each text at its rank, the byte strings in their place", async () => {
    expect(existsSync(builtRanksPath())).toBe(true);
    const module = (await import("gpt-tokenizer/bpeRanks/o200k_base")).default as RankValue[];
    const table = readRankTable(readFileSync(builtRanksPath()));
    const wrong = module.filter((value, rank) =>
      typeof value === "string"
        ? table.byText.get(value) !== rank || rank in table.byteRanks
        : table.byteRanks[rank] === undefined,
    );
    expect(wrong).toEqual([]);
    expect(table.byteRanks.length).toBe(module.length);
    expect(JSON.stringify(table.byteRanks.flatMap((value, rank) => [[rank, value]]))).toBe(
      JSON.stringify(module.flatMap((value, rank) => (typeof value === "string" ? [] : [[rank, value]]))),
    );
    // A few texts more, tokens or not, each answered as the module's array has it.
    for (const text of ["", "not a token at all", " the cat sat on the mat", "\u0000\u0001", "東京都庁"])
      expect(table.byText.get(text)).toBe(module.indexOf(text) >= 0 ? module.indexOf(text) : undefined);
  });

  it("counts as gpt-tokenizer's o200k_base module counts", async () => {
    const module = await import("gpt-tokenizer/encoding/o200k_base");
    const counter = await loadTokenCounter();
    for (const text of TEXTS)
      expect(counter.countText(text)).toBe(module.countTokens(text, { disallowedSpecial: new Set() }));
  });
});
