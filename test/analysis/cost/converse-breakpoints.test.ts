/**
 * A Bedrock Converse body's breakpoint tokens worked out part by part (cost/converse-breakpoints.ts,
 * PartBreakpoints) are the ones the whole body's dissection gives: the runtime's bodies as pi sends
 * them (cache points after the tools, the system prompt and the last user message), and cache points
 * that mark the element before their own (a system block of a cache point alone, a message opening
 * with one, a message of cache points alone, none before them at all), stored in parts or whole;
 * and a part met again is not taken apart again.
 */
import { describe, expect, it } from "vitest";
import { breakpointTokens, PartBreakpoints } from "../../../src/analysis/cost/part-breakpoints.js";
import type { PartedBody } from "../../../src/analysis/load-run.js";
import { loadTokenCounter } from "../../../src/capture/tokens.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { baseUrlFor, resolveModel } from "../../../src/providers/models.js";
import { long, toolRoundsContext } from "../../fixtures/api-sessions.js";
import { partedBody } from "../../fixtures/parted-body.js";

const point = { cachePoint: { type: "default" } };
const hourPoint = { cachePoint: { type: "default", ttl: "1h" } };

const model = resolveModel(
  "bedrock/anthropic.claude-sonnet-4-5",
  "bedrock-converse",
  baseUrlFor("bedrock-converse", "http://h:1/v1"),
);
const runtimeBody = (rounds: number) =>
  codecFor("bedrock-converse").buildRequest(model, toolRoundsContext(rounds), "loop").body;

const toolEntry = (name: string) => ({ toolSpec: { name, description: long(name, 200), inputSchema: { json: {} } } });
const userText = (word: string) => ({ role: "user", content: [{ text: long(word, 2000) }] });

const BODIES: Record<string, string> = {
  "pi's body, 3 rounds": runtimeBody(3),
  "pi's body, 6 rounds": runtimeBody(6),
  "cache points marking the element before theirs": JSON.stringify({
    toolConfig: { tools: [toolEntry("read"), point] },
    system: [point, { text: long("sys", 3000) }, hourPoint, { text: long("env", 100) }],
    messages: [
      { role: "user", content: [point, { text: long("first", 400) }] },
      { role: "assistant", content: [{ text: long("answer", 300) }, point] },
      { role: "user", content: [hourPoint] },
      { role: "user", content: [point, { text: long("third", 400) }, point] },
    ],
  }),
  "no tools: the first cache point marks nothing": JSON.stringify({
    system: [point, { text: long("sys", 3000) }],
    messages: [userText("a"), { role: "user", content: [point, { text: long("b", 400) }, hourPoint] }],
  }),
};

describe("Converse breakpoints part by part", async () => {
  const counter = await loadTokenCounter();
  const whole = (text: string) => breakpointTokens(codecFor("bedrock-converse").dissect(text), counter);

  for (const [name, text] of Object.entries(BODIES)) {
    it(`${name}: as the whole body's dissection, parted or whole`, () => {
      const expected = whole(text);
      expect(expected.length).toBeGreaterThan(1);
      expect(new PartBreakpoints(counter).of(partedBody(text), () => text, "bedrock-converse")).toEqual(expected);
      expect(new PartBreakpoints(counter).of(text, () => text, "bedrock-converse")).toEqual(expected);
    });
  }

  it("takes a part it met before from its memo, and never joins a body", () => {
    const breakpoints = new PartBreakpoints(counter);
    const never = () => {
      throw new Error("joined");
    };
    breakpoints.of(partedBody(runtimeBody(5)), never, "bedrock-converse");
    const next = runtimeBody(6);
    const parted = partedBody(next);
    const read: string[] = [];
    const partText = (hash: string) => {
      read.push(hash);
      return parted.partText(hash);
    };
    const watched: PartedBody = { ...parted, partText };
    expect(breakpoints.of(watched, never, "bedrock-converse")).toEqual(whole(next));
    // The system prompt and the first five rounds are the first body's parts; the last user message moved its cache point.
    expect(read.length).toBeLessThanOrEqual(4);
    expect(read.length).toBeGreaterThan(0);
  });
});
