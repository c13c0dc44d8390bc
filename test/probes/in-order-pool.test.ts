import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { inOrderPool, poolPerProbe } from "../../src/probes/in-order-pool.js";

describe("inOrderPool", () => {
  it("runs at most `width` at once and hands results over in the items' order", async () => {
    const delays = [40, 5, 30, 1, 20, 2];
    let running = 0;
    let most = 0;
    const finished: number[] = [];
    const handed: number[] = [];
    const results = await inOrderPool(
      delays,
      2,
      async (ms, i) => {
        running++;
        most = Math.max(most, running);
        await sleep(ms);
        running--;
        finished.push(i);
        return ms * 10;
      },
      async (result, i) => {
        await sleep(i === 0 ? 15 : 1); // an async `done` never overlaps itself or breaks the order
        handed.push(i, result);
      },
    );
    expect(most).toBe(2);
    expect(finished).not.toEqual([0, 1, 2, 3, 4, 5]); // they did overlap and finish out of order
    expect(handed).toEqual([0, 400, 1, 50, 2, 300, 3, 10, 4, 200, 5, 20]);
    expect(results).toEqual([400, 50, 300, 10, 200, 20]);
  });

  it("starts nothing after a failure, lets the running item finish, and throws the earliest failure", async () => {
    const started: number[] = [];
    const handed: number[] = [];
    const run = inOrderPool(
      [0, 1, 2, 3],
      2,
      async (_, i) => {
        started.push(i);
        await sleep(i === 0 ? 30 : 5);
        if (i === 1) throw new Error("item 1 failed");
        return i;
      },
      (_, i) => {
        handed.push(i);
      },
    );
    await expect(run).rejects.toThrow("item 1 failed");
    expect(started).toEqual([0, 1]);
    expect(handed).toEqual([0]);
  });
});

describe("poolPerProbe", () => {
  it("never runs two agents of one probe at once, numbers every run and hands results over in order", async () => {
    const probes = ["a", "b", "c"];
    const agentsOf = (probe: string) => (probe === "b" ? ["runtime"] : ["runtime", "pi"]);
    const running = new Set<string>();
    let overlap = false;
    const numbers: string[] = [];
    const handed: string[] = [];
    const results = await poolPerProbe(
      probes,
      agentsOf,
      async (probe, agent, n, total) => {
        if (running.has(probe)) overlap = true;
        running.add(probe);
        numbers.push(`${n}/${total} ${probe} ${agent}`);
        await sleep(probe === "a" ? 20 : 5);
        running.delete(probe);
        return `${probe}@${agent}`;
      },
      (result) => {
        handed.push(result);
      },
    );
    expect(overlap).toBe(false);
    expect(numbers.sort()).toEqual(["1/5 a runtime", "2/5 a pi", "3/5 b runtime", "4/5 c runtime", "5/5 c pi"]);
    expect(results).toEqual(["a@runtime", "a@pi", "b@runtime", "c@runtime", "c@pi"]);
    expect(handed).toEqual(results);
  });
});
