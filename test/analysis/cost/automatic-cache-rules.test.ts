/**
 * OpenAI's and Gemini's automatic prompt caches by their documented rules (providers/cache-rules.ts),
 * each on a request sequence recorded by a Capture that counts tokens and writes real files: what
 * `show` says the provider reads of the shared prefix and what the cost model bills as read are the
 * same number, from the same rule. OpenAI: nothing under 1,024 tokens, then 128-token steps
 * (https://developers.openai.com/api/docs/guides/prompt-caching). Gemini: nothing under the model's
 * minimum (2,048 for Gemini 2.5 Flash), then the whole shared prefix
 * (https://ai.google.dev/gemini-api/docs/caching).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheRates } from "../../../src/analysis/cost/cache-rates.js";
import { loadPricing } from "../../../src/analysis/cost/pricing.js";
import { runCost } from "../../../src/analysis/cost/run-cost.js";
import { automaticReadNote } from "../../../src/analysis/format.js";
import { folderSource } from "../../../src/analysis/load-run.js";
import { Capture } from "../../../src/capture/capture.js";
import type { RequestRecord } from "../../../src/capture/types.js";
import { codecFor } from "../../../src/providers/codecs.js";
import type { WireApi } from "../../../src/providers/types.js";
import { jsonlObjects } from "../../fixtures/jsonl-rows.js";
import { removeTempDirs, tempDir } from "../../runtime/harness.js";

afterEach(removeTempDirs);

/** A system text of `words` short words (about two tokens each). */
const systemOf = (words: number) => Array.from({ length: words }, (_, i) => `word${i % 97}`).join(" ");

interface Sent {
  api: WireApi;
  url: string;
  body: string;
}

function chat(system: string, turns: string[]): Sent {
  const messages = [
    { role: "system", content: system },
    ...turns.map((t, i) => ({ role: i % 2 ? "assistant" : "user", content: t })),
  ];
  return {
    api: "openai-completions",
    url: "http://127.0.0.1:8787/v1/chat/completions",
    body: JSON.stringify({ model: "gpt-4.1", messages }),
  };
}

function gemini(system: string, turns: string[]): Sent {
  const contents = turns.map((t, i) => ({ role: i % 2 ? "model" : "user", parts: [{ text: t }] }));
  return {
    api: "google-generative-ai",
    url: "http://127.0.0.1:8787/v1beta/models/gemini-2.5-flash:generateContent",
    body: JSON.stringify({ systemInstruction: { parts: [{ text: system }] }, contents }),
  };
}

/** The sequence recorded a second apart; the records, what `show` notes of each, and the cost model's reads. */
async function recorded(sent: Sent[]) {
  const dir = tempDir("automatic-cache-");
  const capture = new Capture({ run: "r", probe: "r", dir, db: null, markers: {}, codecFor, tokenCache: null });
  await capture.ready();
  for (const [i, s] of sent.entries()) {
    const outcome = { body: "", status: 200, firstByteMs: 0, ending: "complete" } as const;
    await capture.recordExchange(
      { kind: "loop", ...s },
      outcome,
      new Date(Date.UTC(2026, 11, 4, 10, 0, i)).toISOString(),
      1,
    );
  }
  capture.close();
  const records = jsonlObjects<RequestRecord>(join(dir, "requests.jsonl"));
  const cost = await runCost(folderSource(dir, { runsDir: dir }), { pricing: loadPricing() });
  const second = records[1]!;
  return {
    shared: second.prefix!.sharedTokens!,
    note: automaticReadNote(second),
    read: cost.requests[1]!.predicted.cacheRead,
    hitRate: cacheRates(cost).hitRate,
  };
}

const turns = ["Read a.txt", "It says hi.", "And b.txt?"];

describe("OpenAI: from 1,024 tokens, in steps of 128", () => {
  it("a shared prefix under 1,024 tokens: the provider reads none, and none is billed as read", async () => {
    const r = await recorded([chat(systemOf(400), turns.slice(0, 1)), chat(systemOf(400), turns)]);
    expect(r.shared).toBeGreaterThan(0);
    expect(r.shared).toBeLessThan(1024);
    expect(r.note).toBe("; the provider reads none: under its 1024-token minimum");
    expect(r.read).toBe(0);
    expect(r.hitRate).toBe(0);
  });

  it("over 1,024 tokens: the provider reads the shared prefix rounded down to 128, and so does the bill", async () => {
    const r = await recorded([chat(systemOf(1300), turns.slice(0, 1)), chat(systemOf(1300), turns)]);
    expect(r.shared).toBeGreaterThanOrEqual(1024);
    expect(r.shared % 128).not.toBe(0);
    const steps = Math.floor(r.shared / 128) * 128;
    expect(r.note).toBe(`; the provider reads ${steps} tok (128-token steps)`);
    expect(r.read).toBe(steps);
  });
});

describe("Gemini: from the model's minimum (2,048 for 2.5 Flash), the whole shared prefix", () => {
  it("a shared prefix under the minimum: none read, none billed as read", async () => {
    const r = await recorded([gemini(systemOf(700), turns.slice(0, 1)), gemini(systemOf(700), turns)]);
    expect(r.shared).toBeGreaterThanOrEqual(1024);
    expect(r.shared).toBeLessThan(2048);
    expect(r.note).toBe("; the provider reads none: under its 2048-token minimum");
    expect(r.read).toBe(0);
  });

  it("over the minimum: the whole shared prefix is read, no note, and billed as read", async () => {
    const r = await recorded([gemini(systemOf(2500), turns.slice(0, 1)), gemini(systemOf(2500), turns)]);
    expect(r.shared).toBeGreaterThanOrEqual(2048);
    expect(r.note).toBe("");
    expect(r.read).toBe(r.shared);
  });
});
