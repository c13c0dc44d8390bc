/**
 * Issue 27 on the seq probes' Anthropic and Responses variants: the provider's verdict beside our
 * prefix on every request after the first, the hit rate and write amplification in report and diff,
 * and the gate failing a run whose hit rate is below the floor, in one line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheAgreement } from "../../src/analysis/cache-agreement.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { copySharedRuns, sharedRecords } from "../fixtures/shared-runs.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-seq-cache-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const runs = join(scratch, "runs");
const VARIANTS = ["seq-namespace-anthropic", "seq-search-anthropic", "seq-namespace-responses", "seq-search-responses"];

describe("seq-namespace vs seq-search on Anthropic Messages and OpenAI Responses (issue 27)", () => {
  it("the provider names each tool activation of seq-search, agreeing with our prefix; seq-namespace keeps its cache", async () => {
    for (const name of VARIANTS) {
      const records = await sharedRecords(name);
      const later = records.slice(1);
      const reasons = later.map((r) => r.cacheDiagnostics?.reason ?? r.cacheDiagnostics?.verdict);
      expect(reasons, name).toEqual(
        name.startsWith("seq-search")
          ? ["tools_changed", "hit", "hit", "tools_changed", "hit"]
          : ["hit", "hit", "hit", "hit", "hit"],
      );
      expect(later.map((r) => cacheAgreement(r))).toEqual(Array(5).fill("agree"));
    }
  });

  it("report and diff show the hit rate and write amplification; check --min-cache-hit fails seq-search in one line", async () => {
    await copySharedRuns(VARIANTS, runs);
    const rate = (text: string, side = "") => Number(new RegExp(`${side}cache: hit rate ([\\d.]+)%`).exec(text)![1]);
    // The commands read the runs in this process (test/fixtures/cli-in-process.ts); check-run.test.ts
    // and report-diff-cli.test.ts run them as children.
    const report = await cliInScratch(scratch, "report", "seq-search-anthropic", "--runs", runs);
    expect(report.code).toBe(0);
    expect(report.stdout).toMatch(/cache: hit rate [\d.]+% \(\d+ of \d+ prompt tokens read\), write amplification/);
    const diff = (
      await cliInScratch(scratch, "diff", "seq-namespace-anthropic", "seq-search-anthropic", "--runs", runs)
    ).stdout;
    // Each activation breaks the prefix in tools: seq-search reads less of its prompt from the cache.
    expect(rate(diff, "A ")).toBeGreaterThan(rate(diff, "B "));
    const responses = (
      await cliInScratch(scratch, "diff", "seq-namespace-responses", "seq-search-responses", "--runs", runs)
    ).stdout;
    expect(responses).toContain("no cache writes");
    // Each run gated against its own baseline (the shared runs ran in another workspace than the committed ones).
    const check = (probe: string, ...flags: string[]) =>
      cliInScratch(
        scratch,
        "check",
        "--run",
        probe,
        "--baseline",
        join(scratch, `${probe}.json`),
        "--runs",
        runs,
        ...flags,
      );
    const gate = async (probe: string, min: string) => {
      expect((await check(probe, "--update")).code).toBe(0);
      return check(probe, "--min-cache-hit", min);
    };
    const floor = String(Math.floor(rate(diff, "A ")) / 100);
    expect((await gate("seq-namespace-anthropic", floor)).code).toBe(0);
    const failed = await gate("seq-search-anthropic", floor);
    expect(failed.code).toBe(1);
    expect(failed.stdout.split("\n")[0]).toBe(
      `seq-search-anthropic: cache hit rate ${rate(diff, "B ")}% is below the minimum ${Number(floor) * 100}% (by our cache model)`,
    );
  });
});
