import { availableParallelism } from "node:os";

/**
 * How many probes run at once: most of a run is spent waiting for stub servers and file writes,
 * and their start-up work fills a second core; more than two gains little and loads the machine.
 */
const PROBE_CONCURRENCY = Math.min(2, availableParallelism());

/**
 * Runs `work` on every item, at most `width` at once, and hands each result to `done` in the
 * items' order, one at a time (a result that is ready early waits for the ones before it, and
 * `done` may be async), so output reads as a one-at-a-time run's would. After a failure no further
 * item starts; the ones running finish, then the failure of the earliest item is thrown.
 */
export async function inOrderPool<T, R>(
  items: readonly T[],
  width: number,
  work: (item: T, index: number) => Promise<R>,
  done: (result: R, index: number) => void | Promise<void> = () => undefined,
): Promise<R[]> {
  const results: R[] = [];
  const ready: boolean[] = [];
  let next = 0;
  let handed = 0;
  /** Results are handed over on one chain, so an async `done` never runs twice at once. */
  let handing: Promise<void> = Promise.resolve();
  /** Items whose work failed (an array, so the lanes below can add to it). */
  const failures: { index: number; error: unknown }[] = [];
  const lane = async () => {
    while (failures.length === 0 && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!, index);
      } catch (error) {
        failures.push({ index, error });
        continue;
      }
      ready[index] = true;
      handing = handing.then(async () => {
        while (handed < items.length && ready[handed]) await done(results[handed]!, handed++);
      });
      await handing;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, lane));
  await handing;
  if (failures.length > 0) throw failures.sort((a, b) => a.index - b.index)[0]!.error;
  return results;
}

/**
 * Runs each probe on each of its agents through `inOrderPool`: one pool task per probe, its agents
 * one after the other, since a probe's run on pi shares its workspace with its runtime run and two
 * tasks of one probe side by side would only wait for each other's lock. `work` gets the run's
 * number among all runs (from 1) and their total; `done` gets each result in probe, then agent, order.
 */
export async function poolPerProbe<P, A, R>(
  probes: readonly P[],
  agentsOf: (probe: P) => readonly A[],
  work: (probe: P, agent: A, n: number, total: number) => Promise<R>,
  done: (result: R) => void | Promise<void> = () => undefined,
): Promise<R[]> {
  const firsts: number[] = [];
  let total = 0;
  for (const probe of probes) {
    firsts.push(total + 1);
    total += agentsOf(probe).length;
  }
  const groups = await inOrderPool(
    probes,
    PROBE_CONCURRENCY,
    async (probe, i) => {
      const group: R[] = [];
      for (const [j, agent] of agentsOf(probe).entries()) group.push(await work(probe, agent, firsts[i]! + j, total));
      return group;
    },
    async (group) => {
      for (const result of group) await done(result);
    },
  );
  return groups.flat();
}

/** The progress line of one run: `[3/36] p1 on pi …`. */
export const runProgressLine = (n: number, total: number, probe: string, agent: string | undefined) =>
  `[${n}/${total}] ${probe}${agent === "pi" ? " on pi" : ""} …`;
