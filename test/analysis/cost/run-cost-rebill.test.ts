/**
 * The re-billing of a prefix break, worked by hand on a run of three OpenAI requests: what the
 * break's request would have read had it kept the previous prompt, less what it read, priced as the
 * difference between the full and the cached input price of the model.
 */
import { describe, expect, it } from "vitest";
import { breakSentence } from "../../../src/analysis/cost/cost-render.js";
import { loadPricing } from "../../../src/analysis/cost/pricing.js";
import { runCost } from "../../../src/analysis/cost/run-cost.js";
import type { RunSource } from "../../../src/analysis/load-run.js";
import type { RequestRecord } from "../../../src/capture/types.js";

/** A loop request of `total` prompt tokens sharing `shared` with the one before, `minute` minutes in. */
const record = (seq: number, minute: number, total: number, shared: number | null, breakDetail: string | null) =>
  ({
    seq,
    kind: "loop",
    probe: "hand",
    api: "openai-completions",
    model: "qwen3.8-flash",
    ts: new Date(Date.UTC(2026, 9, 1, 12, minute)).toISOString(),
    tokens: { total },
    prefix: { sharedTokens: shared, breakDetail },
  }) as unknown as RequestRecord;

const source = (records: RequestRecord[]): RunSource => ({
  label: "hand",
  records: () => records,
  summaries: () => records,
  count: () => records.length,
  payloads: () => [],
  lazyPayloads: () => [],
  payload: () => null,
  events: () => [],
  recordsFile: null,
  hasPayloads: false,
});

// 1: 3,000 tokens, nothing cached. 2: 3,200 tokens, all 3,000 kept: reads 2,944 (23 steps of 128).
// 3: 3,400 tokens, the prefix broke after 1,100 tokens: reads 1,024 (8 steps); kept whole, it would
// have read 3,200 (25 steps, the previous prompt). The break re-billed 3,200 − 1,024 = 2,176 tokens.
const RUN = [
  record(1, 0, 3000, null, null),
  record(2, 1, 3200, 3000, null),
  record(3, 2, 3400, 1100, "tools[1] added: b_tool"),
];

describe("a prefix break's re-billing, by hand", () => {
  it.each([
    // gpt-4.1: $2 input, $0.50 cached: 2,176 × $1.50 per million.
    ["gpt-4.1", (2176 * 1.5) / 1e6, "$0.003264"],
    // gpt-4.1-mini: $0.40 input, $0.10 cached: 2,176 × $0.30 per million.
    ["gpt-4.1-mini", (2176 * 0.3) / 1e6, "$0.0006528"],
    // gpt-4o: $2.50 input, $1.25 cached: 2,176 × $1.25 per million.
    ["gpt-4o", (2176 * 1.25) / 1e6, "$0.00272"],
  ])("priced as %s", async (model, byHand, printed) => {
    const cost = await runCost(source(RUN), { pricing: loadPricing(undefined), model });
    expect(cost.requests.map((r) => r.predicted.cacheRead)).toEqual([0, 2944, 1024]);
    expect(cost.requests.slice(0, 2).map((r) => r.rebill)).toEqual([null, null]);
    const rebill = cost.requests[2]!.rebill!;
    expect(rebill.tokens).toBe(2176);
    expect(rebill.requests).toBe(1);
    expect(rebill.dollars).toBeCloseTo(byHand, 12);
    expect(breakSentence(rebill)).toBe(`this break re-billed 2,176 tokens × 1 request = ${printed}`);
  });

  it("after more than five idle minutes nothing was cached to lose: no re-billing", async () => {
    const late = [RUN[0]!, RUN[1]!, record(3, 9, 3400, 1100, "tools[1] added: b_tool")];
    const cost = await runCost(source(late), { pricing: loadPricing(undefined), model: "gpt-4.1" });
    expect(cost.requests[2]!.predicted.cacheRead).toBe(0);
    expect(cost.requests[2]!.rebill).toBeNull();
  });
});
