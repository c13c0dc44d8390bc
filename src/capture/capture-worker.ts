/**
 * The capture worker thread of `mock` and `proxy` (started by capture-thread.ts, bundled by
 * scripts/bundle.mjs): it owns the run's Capture — dissection, token counts, prefix, JSONL and SQLite
 * writes — so however long a body takes to count, the thread that relays and answers signals never waits.
 * Messages are handled one at a time, in the order they came: records keep the order of their exchanges.
 */
import { parentPort } from "node:worker_threads";
import { type CaptureRun, openCaptureRun, runFolderLockPath } from "./capture-run.js";
import { CLOSE_GATE, type FromWorker, type ToWorker, type WorkerError } from "./capture-thread.js";
import { loggedRequest, responseOutcome } from "./handed-exchange.js";
import { bodyRedactor } from "./redact.js";

function workerError(error: unknown): WorkerError {
  const { name, message, stack, file, field } = error as Error & { file?: string; field?: string };
  return { name, message, stack, file, field };
}

let run: CaptureRun | undefined;
let gate: Int32Array | undefined;
const post = (message: FromWorker) => parentPort!.postMessage(message);

async function handle(message: ToWorker): Promise<void> {
  if (message.type === "open") {
    const { redactBody, ...options } = message.options;
    gate = new Int32Array(message.gate);
    // The main thread holds the folder's lock for as long as the server runs (and releases it).
    const folderLock = { path: runFolderLockPath(options.runsDir, options.name), release() {} };
    run = openCaptureRun({ ...options, folderLock, redactBody: bodyRedactor(redactBody) });
    await run.capture.ready();
    return post({ type: "opened", id: run.id, dir: run.dir, liveDir: run.liveDir });
  }
  if (message.type === "exchange") {
    const { request, response, ts, durationMs } = message;
    const outcome = await responseOutcome(request.api, response);
    const exchange = await run!.capture.recordExchange(await loggedRequest(request), outcome, ts, durationMs);
    return post({ type: "finished", id: message.id, exchange });
  }
  if (message.type === "event") return run!.capture.addEvent(message.event, message.data, message.seq);
  if (message.type === "count") {
    const total = await run!.capture.countRequestTokens(message.api, message.body);
    return post({ type: "counted", id: message.id, total });
  }
  // The main thread's drain time ran out first: it ends the run, and this worker is about to be stopped.
  if (Atomics.compareExchange(gate!, 0, CLOSE_GATE.open, CLOSE_GATE.workerCloses) !== CLOSE_GATE.open) return;
  try {
    run?.close(message.status, { lost: failedExchanges, drop: message.drop });
  } catch (error) {
    // A close that failed (a StorageError: its folder kept where it is) is told before the end of the run.
    post({ type: "failed", id: null, error: workerError(error) });
  }
  post({ type: "closed" });
  parentPort!.close();
}

let tail = Promise.resolve();
/** Exchanges whose capture failed (a bug, reported with its stack): the run counts them as lost. */
let failedExchanges = 0;
parentPort!.on("message", (message: ToWorker) => {
  tail = tail.then(() =>
    handle(message).catch((error: unknown) => {
      if (message.type === "exchange") failedExchanges++;
      post({ type: "failed", id: "id" in message ? message.id : null, error: workerError(error) });
    }),
  );
});
