/**
 * One capture session, as `record`, `proxy` and `mock` run it: a capture that records (the capture
 * proxy or the mock) and the parts that go with it (the live log, `--view`'s live view, the OTel live
 * export), started in one order and closed in one order whatever fails on the way.
 *
 * Start: the capture, then each part in the order given. Close, in a `finally`: the capture first
 * (what is queued is written, and the parts hear of it), then every part started, in reverse order of
 * starting. Each close runs even when one before it threw, and the first error (of the session's
 * work, a start or a close) is rethrown once all have run: a capture whose close fails still has its
 * viewer stopped and its spans sent.
 */
import type { FinishedExchange } from "./capture.js";

/** A capture that is recording: where its run goes, and how it is closed (lifecycle.ts). */
export interface Recording {
  runId: string;
  /** The run folder once the capture has closed. */
  dir: string;
  /** Where the run is written until then. */
  liveDir: string;
  close(): Promise<void>;
}

/** What a session runs beside its capture. */
export interface SessionPart<R extends Recording = Recording> {
  /** Started once the capture records (the live view listens); a part without it is started at once. */
  start?(recording: R): Promise<void>;
  /** Told of each exchange the capture has written. */
  onFinished?(exchange: FinishedExchange): void;
  /** Closed after the capture, so it has heard of every exchange written. */
  close?(recording: R): Promise<void> | void;
}

/**
 * Starts the capture (`start` gets the listener that tells every part of each finished exchange) and
 * its parts, runs `use` with the recording, and closes all of it in the session's order. Resolves
 * with what `use` returned; rejects with the first error of `use`, a start or a close.
 */
export async function runCaptureSession<R extends Recording, T>(
  start: (onFinished: (exchange: FinishedExchange) => void) => Promise<R>,
  parts: SessionPart<NoInfer<R>>[],
  use: (recording: R) => Promise<T>,
): Promise<T> {
  const started: SessionPart<R>[] = [];
  const onFinished = (exchange: FinishedExchange) => {
    for (const part of started) part.onFinished?.(exchange);
  };
  const recording = await start(onFinished);
  let outcome: { value: T } | { error: unknown };
  try {
    await startParts(recording, parts, started);
    outcome = { value: await use(recording) };
  } catch (error) {
    outcome = { error };
  }
  // The first error wins: a close that fails after `use` failed does not hide why it did.
  const closeFailure = await closeInOrder(recording, started);
  if ("error" in outcome) throw outcome.error;
  if (closeFailure) throw closeFailure.error;
  return outcome.value;
}

/** Starts each part in order, adding it to `started` (a part that listens hears of exchanges from its first moment). */
async function startParts<R extends Recording>(recording: R, parts: SessionPart<R>[], started: SessionPart<R>[]) {
  for (const part of parts) {
    started.push(part);
    try {
      await part.start?.(recording);
    } catch (error) {
      started.pop();
      throw error;
    }
  }
}

/** The capture, then each started part in reverse order; every step runs, and the first error is returned. */
async function closeInOrder<R extends Recording>(
  recording: R,
  started: SessionPart<R>[],
): Promise<{ error: unknown } | undefined> {
  const steps = [() => recording.close(), ...[...started].reverse().map((part) => () => part.close?.(recording))];
  let failure: { error: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failure ??= { error };
    }
  }
  return failure;
}
