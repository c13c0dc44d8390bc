import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { loadTokenCounter } from "../../src/capture/tokens.js";
import type { WireDissection } from "../../src/providers/types.js";
import { dissection } from "./dissection.js";

/** The serialization tokens.ts documents, rendered by gpt-tokenizer's own ChatML chat encoder. */
function chatTokenCount(d: WireDissection): number {
  const chat = [
    ...d.tools.map((t) => ({ role: "tools", content: t.json })),
    ...d.systemParts.map((content) => ({ role: "system", content })),
    ...d.messages.map((m) => ({ role: "messages", content: m.json })),
  ];
  return encodeChat(chat, "gpt-4o", { disallowedSpecial: new Set() }).length;
}

describe("loadTokenCounter", () => {
  it("loads the o200k_base tokenizer once and hands out the same counter", async () => {
    const first = await loadTokenCounter();
    expect(await loadTokenCounter()).toBe(first);
    expect(first.encoding).toBe("o200k_base");
  });
});

describe("countText", () => {
  it("counts fixed strings as the tokenizer does", async () => {
    const counter = await loadTokenCounter();
    // Expected values were obtained once with gpt-tokenizer 4.0.0:
    // countTokens(text, { disallowedSpecial: new Set() }) from "gpt-tokenizer/encoding/o200k_base".
    expect(counter.countText("hello world")).toBe(2);
    expect(counter.countText("Hello, world!")).toBe(4);
    expect(counter.countText("你好，世界")).toBe(3);
    expect(counter.countText("You are a probe.\n")).toBe(5);
    expect(counter.countText('{"type":"function","function":{"name":"read"}}')).toBe(11);
    expect(counter.countText("")).toBe(0);
  });

  it("counts text that looks like a special token as plain text instead of refusing it", async () => {
    const counter = await loadTokenCounter();
    // "<|endoftext|>" is 7 ordinary tokens as text (1 if it were the special token).
    expect(counter.countText("<|endoftext|>")).toBe(7);
    expect(counter.countText("I said <|endoftext|> twice")).toBe(10);
  });

  it("gives the same count when asked again (the memo answers)", async () => {
    const counter = await loadTokenCounter();
    const text = "a repeated history line ".repeat(50);
    const first = counter.countText(text);
    expect(counter.countText(text)).toBe(first);
    expect(first).toBeGreaterThan(50);
  });
});

describe("countRequestTokens", () => {
  it("counts each segment with its frame, and the reply opener once", async () => {
    const counter = await loadTokenCounter();
    const d = dissection(
      ['{"type":"function","function":{"name":"read"}}'],
      ["hello world"],
      [{ role: "user", json: '{"role":"user","content":"Hello, world!"}' }],
    );
    // Text tokens 11, 2 and 12 (see countText), each plus 4 frame tokens:
    // <|im_start|>, the kind word (one token each: tools, system, messages), <|im_sep|>, <|im_end|>.
    // Overhead: <|im_start|> assistant <|im_sep|>.
    expect(counter.countRequestTokens(d)).toEqual({
      encoding: "o200k_base",
      tools: 15,
      system: 6,
      messages: 16,
      total: 40,
      perTool: [15],
      perSystemPart: [6],
      perMessage: [16],
      overhead: 3,
    });
  });

  it("has segments whose marginal counts plus the overhead add up to the total exactly", async () => {
    const counter = await loadTokenCounter();
    // Segment edges that byte-pair merging would join if the segments simply ran together.
    const d = dissection(
      [
        '{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object"}}}',
        '{"type":"function","function":{"name":"bash","description":"Run  ","parameters":{}}}',
      ],
      ["You are a probe.  ", "\n\nCurrent dir: /tmp/проба", ""],
      [
        { role: "user", json: '{"role":"user","content":[{"type":"text","text":"say <|endoftext|> 你好"}]}' },
        {
          role: "assistant",
          json: '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"a\\"}"}}]}',
        },
        { role: "tool", json: '{"role":"tool","content":"   ","tool_call_id":"call_1"}' },
      ],
    );
    const counts = counter.countRequestTokens(d);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

    expect(sum(counts.perTool)).toBe(counts.tools);
    expect(sum(counts.perSystemPart)).toBe(counts.system);
    expect(sum(counts.perMessage)).toBe(counts.messages);
    expect(counts.tools + counts.system + counts.messages + counts.overhead).toBe(counts.total);
    // The total is what the tokenizer's own chat encoder gives for the documented serialization.
    expect(counts.total).toBe(chatTokenCount(d));

    // Marginal: the request with a segment minus the request without it, each tokenized whole.
    const without = (pick: (d: WireDissection) => WireDissection) => counts.total - chatTokenCount(pick(d));
    d.tools.forEach((_, i) => {
      expect(counts.perTool[i]).toBe(without((x) => ({ ...x, tools: x.tools.filter((__, j) => j !== i) })));
    });
    d.systemParts.forEach((_, i) => {
      expect(counts.perSystemPart[i]).toBe(
        without((x) => ({ ...x, systemParts: x.systemParts.filter((__, j) => j !== i) })),
      );
    });
    d.messages.forEach((_, i) => {
      expect(counts.perMessage[i]).toBe(without((x) => ({ ...x, messages: x.messages.filter((__, j) => j !== i) })));
    });
    // Without any segment, only the overhead is left.
    expect(chatTokenCount({ ...d, tools: [], systemParts: [], messages: [] })).toBe(counts.overhead);
  });

  it("counts a request without tools or messages", async () => {
    const counter = await loadTokenCounter();
    const counts = counter.countRequestTokens(dissection([], ["hello world"], []));
    expect(counts).toMatchObject({ tools: 0, system: 6, messages: 0, total: 9, perTool: [], perMessage: [] });
  });
});
