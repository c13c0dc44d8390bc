/**
 * A server and the capture worker behind it (the capture proxy's, the mock's), started and closed as
 * one part of the lifecycle every worker and server keeps (lifecycle.ts).
 */
import { CAPTURE_DRAIN_MS, CaptureThread, type CaptureThreadOptions } from "./capture-thread.js";
import type { HttpService } from "./http.js";
import type { RunStatus } from "./sqlite.js";

export interface ServedCapture {
  port: number;
  capture: CaptureThread;
  /** Settles once the worker has stopped, however it stopped. */
  ended: Promise<void>;
  /**
   * Stops serving, waits for open replies, then finishes the run (as `captured` unless told how it
   * ended), all within the drain time; later calls return the same promise.
   */
  close(status?: RunStatus): Promise<void>;
  /**
   * Drop the run at close if no exchange reached it by then (its row and folder go, the previous
   * run of its name stays): for a session whose command never ran.
   */
  dropIfEmpty(): void;
}

/**
 * Listens first, then opens the run on a capture worker: a port in use fails before the run folder of
 * a server already on it is replaced, and a worker that cannot start closes the server again.
 * `listen` gets the worker as a promise that settles once it has opened the run: a request that
 * arrives meanwhile waits for it (the server is announced only after that).
 */
export async function serveCapture(
  listen: (opened: Promise<CaptureThread>) => Promise<HttpService>,
  options: CaptureThreadOptions,
): Promise<ServedCapture> {
  let settle!: { resolve(capture: CaptureThread): void; reject(error: unknown): void };
  const opened = new Promise<CaptureThread>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Awaited by requests only: a worker that fails before any came is no unhandled rejection.
  opened.catch(() => undefined);
  const service = await listen(opened);
  let capture: CaptureThread;
  try {
    capture = await CaptureThread.start(options);
  } catch (error) {
    settle.reject(error);
    await service.close();
    throw error;
  }
  settle.resolve(capture);
  const drainMs = options.drainMs ?? CAPTURE_DRAIN_MS;
  let closing: Promise<void> | undefined;
  let dropIfEmpty = false;
  return {
    port: service.port,
    capture,
    ended: capture.ended,
    close(status) {
      closing ??= capture.close(service.close(drainMs), status, dropIfEmpty);
      return closing;
    },
    dropIfEmpty() {
      dropIfEmpty = true;
    },
  };
}
