/**
 * Hit rate and write amplification (issue 27): reads over prompt tokens, and written tokens no later
 * request of the same model read back, by the provider's usage where it reported one.
 */
import { describe, expect, it } from "vitest";
import { CacheRateTally, cacheRates, cacheRatesLine } from "../../../src/analysis/cost/cache-rates.js";
import type { RequestCost, RunCost } from "../../../src/analysis/cost/run-cost.js";

const split = (inputTokens: number, cacheRead: number, cacheWrite5m: number) => ({
  inputTokens,
  cacheRead,
  cacheWrite5m,
  cacheWrite1h: 0,
  uncached: inputTokens - cacheRead - cacheWrite5m,
});

/** A request with the cache model's split, and the provider's when `reported` is given. */
function request(seq: number, sent: string, predicted: number[], reported?: number[]): RequestCost {
  const [input, read, write] = predicted as [number, number, number];
  const provider = reported && {
    ...split(...(reported as [number, number, number])),
    outputTokens: 1,
    source: "provider" as const,
  };
  return { seq, sent, predicted: split(input, read, write), reported: provider ?? null } as unknown as RequestCost;
}

const run = (requests: RequestCost[]) => ({ requests }) as unknown as RunCost;

describe("cache rates", () => {
  it("a write a later request reads is not amplification; the last request's write is", () => {
    const rates = cacheRates(run([request(1, "m", [1000, 0, 1000]), request(2, "m", [1200, 1000, 200])]));
    expect(rates).toMatchObject({ basis: "model", input: 2200, read: 1000, written: 1200, unread: 200 });
    expect(rates.hitRate).toBeCloseTo(1000 / 2200);
    expect(rates.writeAmplification).toBeCloseTo(200 / 1200);
    expect(cacheRatesLine(rates)).toBe(
      "cache: hit rate 45.5% (1000 of 2200 prompt tokens read), write amplification 16.7% (200 of 1200 written tokens never read); by our cache model (no provider usage)",
    );
  });

  it("a read by another model does not count, and a prefix read only in part leaves the rest unread", () => {
    const rates = cacheRates(
      run([request(1, "a", [1000, 0, 1000]), request(2, "b", [1000, 1000, 0]), request(3, "a", [900, 600, 300])]),
    );
    expect(rates.requests.map((r) => r.unread)).toEqual([400, 0, 300]);
  });

  it("provider usage is used where it was reported, and the run says it is mixed", () => {
    const rates = cacheRates(run([request(1, "m", [100, 0, 0], [120, 0, 120]), request(2, "m", [100, 90, 0])]));
    expect(rates.requests.map((r) => r.basis)).toEqual(["provider", "model"]);
    expect(rates).toMatchObject({ basis: "mixed", written: 120, read: 90, unread: 30 });
  });

  it("a failed request (no response, an error status) is in neither figure, nor in the run's basis", () => {
    const failed = { ...request(2, "m", [0, 0, 0]), failure: "HTTP 429: Rate limit reached" };
    const rates = cacheRates(run([request(1, "m", [100, 0, 100], [120, 0, 120]), failed]));
    expect(rates.requests.map((r) => r.seq)).toEqual([1]);
    expect(rates).toMatchObject({ basis: "provider", input: 120, written: 120, unread: 120 });
    const tally = new CacheRateTally();
    tally.add(request(1, "m", [100, 0, 100], [120, 0, 120]));
    tally.add(failed);
    expect(tally.totals()).toMatchObject({ basis: "provider", input: 120 });
  });

  it("nothing written: no amplification to speak of", () => {
    const rates = cacheRates(run([request(1, "m", [2000, 0, 0]), request(2, "m", [2100, 1920, 0])]));
    expect(rates.writeAmplification).toBeNull();
    expect(cacheRatesLine(rates)).toContain("no cache writes");
  });

  it("a tally of the requests one at a time comes to the same totals as the whole run's rates", () => {
    const requests = [
      request(1, "a", [1000, 0, 1000], [1100, 0, 1100]),
      request(2, "b", [1000, 1000, 0]),
      request(3, "a", [900, 600, 300]),
      request(4, "b", [1300, 0, 1300]),
    ];
    const tally = new CacheRateTally();
    for (const r of requests) tally.add(r);
    const { requests: _each, ...totals } = cacheRates(run(requests));
    expect(tally.totals()).toEqual(totals);
    expect(totals).toMatchObject({ basis: "mixed", unread: 1100 - 600 + 300 + 1300 });
  });
});
