/**
 * The one lifecycle every worker, server and tunnel of a capture keeps, as the MCP SDK's transports
 * keep theirs (start, close, onclose):
 *
 * - **start**: an async function that resolves once the part serves, or rejects having let go of
 *   everything it took (a port, a worker, a lock);
 * - **close with a deadline**: `close()` resolves within a bound the part owns; what is still open
 *   past it is cut, never waited for (a peer that never answers or never closes cannot hold it);
 *   later calls return the same promise;
 * - **an end that settles whatever waits**: however the part stops (closed, crashed, exited, its peer
 *   gone), everything still waiting on it is settled then, with an error when it was not done.
 *
 * The helpers below are the pieces the parts share to keep it.
 */
import type { Worker } from "node:worker_threads";

/** What a started part offers: its end, and a close that resolves within the part's deadline. */
export interface Lifecycle {
  /** Settles once the part has stopped, however it stopped. */
  readonly ended: Promise<void>;
  close(): Promise<void>;
}

/** What `beforeDeadline` resolves with when the deadline came first. */
export const LATE = Symbol("late");

/** `work`'s value, or LATE once `ms` have passed first; the timer never outlives the race. */
export async function beforeDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), Math.max(0, ms));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls `ended` once, with why a worker thread stopped: its error, or its exit when it left without
 * one (a worker can exit with no `error` event, and a call waiting for its reply would wait forever).
 */
export function onWorkerEnd(worker: Worker, what: string, ended: (error: Error) => void): void {
  let told = false;
  const tell = (error: Error) => {
    if (told) return;
    told = true;
    ended(error);
  };
  worker.on("error", tell);
  worker.on("exit", (code) => tell(new Error(`${what} exited (code ${code}) before it answered`)));
}

/** A call waiting for a worker's reply, with what its caller keeps beside it. */
interface Pending<Extra> {
  resolve(value: unknown): void;
  reject(error: Error): void;
  extra: Extra;
}

/**
 * Calls to a worker thread, each answered by a reply naming its id, in one place that keeps the
 * contract: every call still waiting when the worker stops (an error, an exit, a stop asked for)
 * is rejected then, and a call made after that is rejected at once. `Extra` is what a caller keeps
 * with each call (the capture queue keeps an exchange's size).
 */
export class WorkerCalls<Extra = undefined> {
  private readonly pending = new Map<number, Pending<Extra>>();
  private nextId = 0;
  private why: Error | undefined;
  /** Resolves with why the worker stopped, once it has. */
  readonly ended: Promise<Error>;

  constructor(
    private readonly worker: Worker,
    what: string,
  ) {
    this.ended = new Promise((resolve) =>
      onWorkerEnd(worker, what, (error) => {
        this.stop(error);
        resolve(error);
      }),
    );
  }

  /** Why calls fail now, once the worker has stopped; undefined while it serves. */
  get stopped(): Error | undefined {
    return this.why;
  }

  /** Posts `message(id)` and resolves with the reply `settle` is given for that id. */
  call<T>(message: (id: number) => unknown, extra: Extra, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.why) return Promise.reject(this.why);
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, extra });
      this.worker.postMessage(message(id), transfer);
    });
  }

  /** Settles the call of `id` with the worker's reply (a value, or an Error); returns its Extra, or undefined for an unknown id. */
  settle(id: number, reply: { value: unknown } | { error: Error }): { extra: Extra } | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    if ("error" in reply) pending.reject(reply.error);
    else pending.resolve(reply.value);
    return { extra: pending.extra };
  }

  /** Rejects every call still waiting, and every later one, with `error` (the first stop's reason is kept). */
  stop(error: Error): void {
    this.why ??= error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}
