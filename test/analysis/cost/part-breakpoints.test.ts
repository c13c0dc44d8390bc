/**
 * Breakpoint tokens worked out part by part (cost/part-breakpoints.ts) are the ones the whole body's
 * dissection gives, for a body stored in parts as the capture stores it and for the same body whole,
 * with markers on a tool, a system block, a message's block and a block inside a tool result,
 * automatic caching, a `system` sent as one string, elements short enough to stay in the skeleton and
 * a skeleton writing the characters a placeholder is made of; and a part met again is not taken apart
 * again.
 */
import { describe, expect, it } from "vitest";
import { bodyElements } from "../../../src/analysis/body-elements.js";
import { breakpointTokens, PartBreakpoints } from "../../../src/analysis/cost/part-breakpoints.js";
import type { PartedBody } from "../../../src/analysis/load-run.js";
import { loadTokenCounter } from "../../../src/capture/tokens.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { partedBody } from "../../fixtures/parted-body.js";

const long = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word}${i % 13}`).join(" ");
const marker = { type: "ephemeral" };

function messages(turns: number, markLast: boolean): unknown[] {
  const list: unknown[] = [{ role: "user", content: "hi" }];
  for (let i = 0; i < turns; i++) {
    list.push({ role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "Read", input: { n: i } }] });
    const last = markLast && i === turns - 1;
    list.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `t${i}`,
          content: [{ type: "text", text: long(`r${i}`, 900), ...(last ? { cache_control: marker } : {}) }],
        },
      ],
    });
  }
  return list;
}

function body(fields: Record<string, unknown>): string {
  return JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 100, ...fields });
}

const tools = [
  { name: "Read", description: long("read", 300), input_schema: { type: "object" } },
  { name: "Bash", description: long("bash", 300), input_schema: { type: "object" }, cache_control: marker },
];
const systemBlocks = [
  { type: "text", text: "short" },
  { type: "text", text: long("sys", 800), cache_control: { type: "ephemeral", ttl: "1h" } },
];

const deferredTools = [
  ...tools,
  { name: "Grep", description: long("grep", 300), input_schema: { type: "object" }, defer_loading: true },
  { name: "Glob", description: long("glob", 300), input_schema: { type: "object" }, defer_loading: true },
];
/** A tool search's result loading Grep (a `tool_reference` inside a tool result). */
const loadsGrep = [
  { role: "assistant", content: [{ type: "tool_use", id: "s1", name: "ToolSearch", input: { query: "grep" } }] },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "s1", content: [{ type: "tool_reference", tool_name: "Grep" }] }],
  },
];

const BODIES: Record<string, string> = {
  "deferred tools, none loaded": body({ tools: deferredTools, system: systemBlocks, messages: messages(4, true) }),
  "deferred tools, one loaded": body({
    tools: deferredTools,
    system: systemBlocks,
    messages: [...messages(4, false), ...loadsGrep, ...messages(1, true).slice(1)],
  }),
  "markers everywhere": body({ tools, system: systemBlocks, messages: messages(6, true) }),
  "automatic caching": body({ tools, system: systemBlocks, messages: messages(5, false), cache_control: marker }),
  "system as one string": body({ tools, system: long("one", 900), messages: messages(4, true) }),
};

const parted = partedBody;

describe("breakpoints part by part", async () => {
  const counter = await loadTokenCounter();
  for (const [name, text] of Object.entries(BODIES)) {
    it(`${name}: as the whole body's dissection, parted or whole`, () => {
      const expected = breakpointTokens(codecFor("anthropic-messages").dissect(text), counter);
      expect(expected.length).toBeGreaterThan(1);
      expect(bodyElements(parted(text))).not.toBeNull();
      expect(new PartBreakpoints(counter).of(parted(text), () => text)).toEqual(expected);
      expect(new PartBreakpoints(counter).of(text, () => text)).toEqual(expected);
    });
  }

  it("takes a part it met before from its memo: the next request reads only its new parts", () => {
    const breakpoints = new PartBreakpoints(counter);
    const first = parted(body({ tools, system: systemBlocks, messages: messages(6, false) }));
    breakpoints.of(first, () => "");
    const next = body({ tools, system: systemBlocks, messages: messages(7, true) });
    const nextParted = parted(next);
    const read: string[] = [];
    const partText = (hash: string) => {
      read.push(hash);
      return nextParted.partText(hash);
    };
    const watched: PartedBody = { ...nextParted, partText };
    expect(breakpoints.of(watched, () => next)).toEqual(
      breakpointTokens(codecFor("anthropic-messages").dissect(next), counter),
    );
    // Tools, system and the first six turns are the first request's parts: only the new turn's two messages are read.
    expect(read.length).toBe(2);
  });

  it("a body whose text around its parts writes U+0000 (or a string reading as a placeholder) is read as any other", () => {
    const text = body({
      note: "\u0000",
      also: ["\u00000", "\u00010"],
      tools,
      system: systemBlocks,
      messages: messages(3, true),
    });
    const elements = bodyElements(parted(text));
    expect(elements?.top.note).toBe("\u0000");
    expect(elements?.arrays.get("also")?.map((e) => e.text())).toEqual(['"\\u00000"', '"\\u00010"']);
    const expected = breakpointTokens(codecFor("anthropic-messages").dissect(text), counter);
    expect(new PartBreakpoints(counter).of(parted(text), () => text)).toEqual(expected);
  });
});
