/**
 * Worked examples of the providers' published cache rules, each with the cached tokens and the
 * dollars worked out by hand from the models' prices in @pydantic/genai-prices (the figures noted
 * beside gpt41 and sonnet4 below, which test/analysis/cost/pricing.test.ts holds to the library).
 */
import { describe, expect, it } from "vitest";
import {
  anthropicMinCacheTokens,
  type CacheInput,
  type CacheSplit,
  cacheModel,
  geminiMinCacheTokens,
} from "../../../src/analysis/cost/cache-model.js";
import { loadPricing, type ModelPrice, priceOf, requestDollars } from "../../../src/analysis/cost/pricing.js";

const table = loadPricing(undefined);
const gpt41 = priceOf(table, "gpt-4.1")!; // $2 input, $0.50 cached
const sonnet4 = priceOf(table, "claude-sonnet-4-0")!; // $3 input, $3.75 5m write, $6 1h write, $0.30 read; minimum 1024
/** A prompt's dollars (no output). */
const inputCost = (split: CacheSplit, price: ModelPrice) => requestDollars(price, split);

const MIN = 60_000;
const loop = (
  atMin: number,
  inputTokens: number,
  sharedTokens: number | null,
  breakpoints?: CacheInput["breakpoints"],
) => ({ seq: 0, kind: "loop", atMs: atMin * MIN, inputTokens, sharedTokens, breakpoints }) as CacheInput;

describe("OpenAI: automatic prefix caching from 1,024 tokens in steps of 128", () => {
  it("below the minimum nothing is cached: 1,000 shared tokens of 1,100 bill in full", () => {
    const model = cacheModel({ provider: "openai" });
    model.next(loop(0, 1000, null));
    const split = model.next(loop(1, 1100, 1000));
    expect(split).toEqual({ inputTokens: 1100, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, uncached: 1100 });
    expect(inputCost(split, gpt41)).toBeCloseTo((1100 * 2) / 1e6, 12); // $0.0022
  });

  it("above the minimum the hit is the shared prefix rounded down to 128: 1,300 shared → 1,280 cached", () => {
    const model = cacheModel({ provider: "openai" });
    model.next(loop(0, 1400, null));
    const split = model.next(loop(1, 1500, 1300));
    expect(split.cacheRead).toBe(1280);
    expect(split.uncached).toBe(220);
    // 220 × $2 + 1,280 × $0.50 per million = $0.00044 + $0.00064
    expect(inputCost(split, gpt41)).toBeCloseTo(0.00108, 12);
  });

  it("the steps: exactly 1,024 caches 1,024; 1,151 still 1,024; 1,152 caches 1,152; 1,023 nothing", () => {
    const cached = (shared: number) => {
      const model = cacheModel({ provider: "openai" });
      model.next(loop(0, 2000, null));
      return model.next(loop(1, 2000, shared)).cacheRead;
    };
    expect([cached(1023), cached(1024), cached(1151), cached(1152), cached(1279)]).toEqual([0, 1024, 1024, 1152, 1152]);
  });

  it("the first request, a request after more than 5 idle minutes, and a sampling request read nothing", () => {
    const model = cacheModel({ provider: "openai" });
    expect(model.next(loop(0, 3000, null)).cacheRead).toBe(0);
    expect(model.next(loop(4, 3100, 3000)).cacheRead).toBe(2944);
    expect(model.next({ ...loop(5, 3200, null), kind: "sampling" }).cacheRead).toBe(0);
    expect(model.next(loop(10, 3300, 3100)).cacheRead).toBe(0);
  });
});

describe("Anthropic: cache_control breakpoints, a minimum length, 5-minute and 1-hour lifetimes", () => {
  const anthropic = () => cacheModel({ provider: "anthropic", minCacheTokens: anthropicMinCacheTokens(sonnet4.model) });

  it("a write then a read within the lifetime: 2,000 tokens written at 1.25×, read 4 minutes later at 0.1×", () => {
    const model = anthropic();
    const first = model.next(loop(0, 2050, null, [{ tokens: 2000, ttl: "5m" }]));
    expect(first).toEqual({ inputTokens: 2050, cacheRead: 0, cacheWrite5m: 2000, cacheWrite1h: 0, uncached: 50 });
    // 2,000 × $3.75 + 50 × $3 per million = $0.0075 + $0.00015
    expect(inputCost(first, sonnet4)).toBeCloseTo(0.00765, 12);
    const second = model.next(loop(4, 2300, 2040, [{ tokens: 2250, ttl: "5m" }]));
    expect(second).toEqual({ inputTokens: 2300, cacheRead: 2000, cacheWrite5m: 250, cacheWrite1h: 0, uncached: 50 });
    // 2,000 × $0.30 + 250 × $3.75 + 50 × $3 per million = $0.0006 + $0.0009375 + $0.00015
    expect(inputCost(second, sonnet4)).toBeCloseTo(0.0016875, 12);
  });

  it("a breakpoint counted a few tokens past the prompt's total writes the whole prompt, no more", () => {
    // The prefix up to a breakpoint is counted apart, and may split into more tokens than inside the prompt.
    const split = anthropic().next(loop(0, 20986, null, [{ tokens: 20992, ttl: "5m" }]));
    expect(split).toEqual({ inputTokens: 20986, cacheRead: 0, cacheWrite5m: 20986, cacheWrite1h: 0, uncached: 0 });
    expect(inputCost(split, sonnet4)).toBeCloseTo((20986 * 3.75) / 1e6, 12);
  });

  it("past the lifetime the entry is gone and written again; a read restarts the lifetime", () => {
    const model = anthropic();
    model.next(loop(0, 2050, null, [{ tokens: 2000, ttl: "5m" }]));
    expect(model.next(loop(4, 2050, 2050, [{ tokens: 2000, ttl: "5m" }])).cacheRead).toBe(2000);
    // 8 minutes after the write but 4 after the read: still alive.
    expect(model.next(loop(8, 2050, 2050, [{ tokens: 2000, ttl: "5m" }])).cacheRead).toBe(2000);
    const late = model.next(loop(14, 2050, 2050, [{ tokens: 2000, ttl: "5m" }]));
    expect(late).toMatchObject({ cacheRead: 0, cacheWrite5m: 2000 });
  });

  it("a 1-hour breakpoint writes at 2× and is still read 30 minutes later", () => {
    const model = anthropic();
    const first = model.next(loop(0, 3000, null, [{ tokens: 3000, ttl: "1h" }]));
    expect(first).toMatchObject({ cacheWrite1h: 3000, cacheWrite5m: 0 });
    expect(inputCost(first, sonnet4)).toBeCloseTo((3000 * 6) / 1e6, 12); // $0.018
    expect(model.next(loop(30, 3100, 3000, [{ tokens: 3100, ttl: "1h" }]))).toMatchObject({
      cacheRead: 3000,
      cacheWrite1h: 100,
    });
  });

  it("below the minimum: a breakpoint at 800 tokens caches nothing, now or on the next request", () => {
    const model = anthropic();
    const first = model.next(loop(0, 900, null, [{ tokens: 800, ttl: "5m" }]));
    expect(first).toEqual({ inputTokens: 900, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, uncached: 900 });
    expect(inputCost(first, sonnet4)).toBeCloseTo((900 * 3) / 1e6, 12);
    expect(model.next(loop(1, 950, 900, [{ tokens: 850, ttl: "5m" }])).cacheRead).toBe(0);
  });

  it("a breakpoint placed before the minimum adds its tokens to the next breakpoint that qualifies", () => {
    const model = anthropic();
    const split = model.next(
      loop(0, 2500, null, [
        { tokens: 600, ttl: "5m" },
        { tokens: 2400, ttl: "5m" },
      ]),
    );
    expect(split).toMatchObject({ cacheWrite5m: 2400, uncached: 100 });
    expect(
      model.next(
        loop(1, 2600, 2500, [
          { tokens: 600, ttl: "5m" },
          { tokens: 2500, ttl: "5m" },
        ]),
      ),
    ).toMatchObject({
      cacheRead: 2400,
      cacheWrite5m: 100,
    });
  });

  it("a prefix broken before an entry loses it but keeps the earlier one: the system entry is read, the rest written", () => {
    const model = anthropic();
    model.next(
      loop(0, 3000, null, [
        { tokens: 1500, ttl: "5m" },
        { tokens: 2900, ttl: "5m" },
      ]),
    );
    // The request changed at token 2,000: the 2,900-token entry no longer matches, the 1,500 one does.
    const split = model.next(
      loop(1, 3200, 2000, [
        { tokens: 1500, ttl: "5m" },
        { tokens: 3100, ttl: "5m" },
      ]),
    );
    expect(split).toEqual({ inputTokens: 3200, cacheRead: 1500, cacheWrite5m: 1600, cacheWrite1h: 0, uncached: 100 });
    // 1,500 × $0.30 + 1,600 × $3.75 + 100 × $3 per million
    expect(inputCost(split, sonnet4)).toBeCloseTo(0.00045 + 0.006 + 0.0003, 12);
  });

  it("no breakpoint, no cache: a request without cache_control bills every token in full", () => {
    const model = anthropic();
    model.next(loop(0, 5000, null, []));
    expect(model.next(loop(1, 5100, 5000, []))).toMatchObject({ cacheRead: 0, cacheWrite5m: 0, uncached: 5100 });
  });
});

describe("no split bills more tokens than the prompt has", () => {
  it("a breakpoint counted a few tokens over the whole prompt (parts counted one by one) writes at most the prompt", () => {
    // Claude Code's fourth turn in a real interactive session: its last breakpoint counted 12,702 of 12,696.
    const model = cacheModel({ provider: "anthropic", minCacheTokens: 1024 });
    model.next(loop(0, 12_338, null, [{ tokens: 12_338, ttl: "5m" }]));
    const split = model.next(loop(1, 12_696, 12_338, [{ tokens: 12_702, ttl: "5m" }]));
    expect(split).toEqual({ inputTokens: 12_696, cacheRead: 12_338, cacheWrite5m: 358, cacheWrite1h: 0, uncached: 0 });
    expect(() => requestDollars(sonnet4, split)).not.toThrow();
  });
});

describe("Gemini: implicit caching from the model's minimum, the whole shared prefix, no write premium", () => {
  const flash = priceOf(table, "gemini-2.5-flash", "google")!; // $0.30 input, $0.03 cached

  it("minimums by model: 2,048 for 2.5 Flash and Pro, 4,096 for 3.1 Pro and 3.5+ Flash, 1,024 for 3 Flash Preview", () => {
    expect(
      [
        "gemini-2.5-flash",
        "gemini-2.5-pro",
        "gemini-3.1-pro-preview",
        "gemini-3.6-flash",
        "gemini-3-flash-preview",
      ].map(geminiMinCacheTokens),
    ).toEqual([2048, 2048, 4096, 4096, 1024]);
  });

  it("5,000 shared of 6,000 read 5,000 (no 128 steps); 2,000 shared under 2,048 read nothing; an explicit cache reads nothing implicitly", () => {
    const model = cacheModel({ provider: "gemini", minCacheTokens: 2048 });
    expect(model.next(loop(0, 5000, null)).cacheRead).toBe(0);
    const hit = model.next(loop(1, 6000, 5000));
    expect(hit).toEqual({ inputTokens: 6000, cacheRead: 5000, cacheWrite5m: 0, cacheWrite1h: 0, uncached: 1000 });
    expect(inputCost(hit, flash)).toBeCloseTo((1000 * 0.3 + 5000 * 0.03) / 1e6, 12);
    expect(model.next(loop(2, 6100, 2000)).cacheRead).toBe(0);
    expect(model.next({ ...loop(3, 6200, 6100), explicitCache: true }).cacheRead).toBe(0);
  });
});

describe("reads follow prefix.from: any earlier request still cached, not only the previous one (issue 34)", () => {
  const at = (seq: number, atMin: number, inputTokens: number, from: number | null, sharedTokens: number) =>
    ({ seq, kind: "loop", atMs: atMin * MIN, inputTokens, sharedTokens, from }) as CacheInput;

  it("OpenAI: A, a side call, A again: the third reads what it shares with the first, in steps of 128 from 1,024", () => {
    const model = cacheModel({ provider: "openai" });
    expect(model.next(at(1, 0, 3000, null, 0)).cacheRead).toBe(0);
    expect(model.next(at(2, 1, 40, null, 0)).cacheRead).toBe(0);
    expect(model.next(at(3, 2, 3200, 1, 3000)).cacheRead).toBe(2944);
    // 1,000 shared tokens are under the minimum: nothing is read.
    expect(model.next(at(4, 3, 1100, 2, 1000)).cacheRead).toBe(0);
  });

  it("Anthropic: the third request reads the entry the first wrote although a side call came between", () => {
    const model = cacheModel({ provider: "anthropic", minCacheTokens: 1024 });
    const bp = (tokens: number, block: number) => [{ tokens, ttl: "5m", block }];
    expect(model.next({ ...at(1, 0, 2050, null, 0), breakpoints: bp(2000, 5) }).cacheWrite5m).toBe(2000);
    expect(model.next({ ...at(2, 1, 1500, null, 0), breakpoints: bp(1500, 2) }).cacheWrite5m).toBe(1500);
    const third = model.next({ ...at(3, 2, 2400, 1, 2040), breakpoints: bp(2350, 8) });
    expect(third).toMatchObject({ cacheRead: 2000, cacheWrite5m: 350 });
  });

  it("Anthropic: an entry more than 20 blocks before every breakpoint is not found (the look-back)", () => {
    const model = cacheModel({ provider: "anthropic", minCacheTokens: 1024 });
    model.next({ ...at(1, 0, 2050, null, 0), breakpoints: [{ tokens: 2000, ttl: "5m", block: 5 }] });
    const far = model.next({ ...at(2, 1, 9000, 1, 2040), breakpoints: [{ tokens: 8900, ttl: "5m", block: 26 }] });
    expect(far.cacheRead).toBe(0);
    const model2 = cacheModel({ provider: "anthropic", minCacheTokens: 1024 });
    model2.next({ ...at(1, 0, 2050, null, 0), breakpoints: [{ tokens: 2000, ttl: "5m", block: 5 }] });
    const near = model2.next({ ...at(2, 1, 9000, 1, 2040), breakpoints: [{ tokens: 8900, ttl: "5m", block: 25 }] });
    expect(near.cacheRead).toBe(2000);
  });
});
