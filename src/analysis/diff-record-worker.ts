/**
 * Worker thread of diff-record-reader.ts: reads one run's requests.jsonl, projects each record to
 * a DiffRecord, and posts them packed, a batch at a time. It stays at most AHEAD batches in front
 * of the reader, so a slow consumer never makes it hold a long run in memory.
 */
import { workerData } from "node:worker_threads";
import { UserError } from "../errors.js";
import { type DiffRecord, diffRecordProjector } from "./diff-record.js";
import { DiffRecordPacker } from "./diff-record-codec.js";
import { AHEAD, BATCH, DONE, POSTED, type SideMessage, TAKEN, type WorkerInput } from "./diff-record-reader.js";
import { recordLines } from "./record-file.js";

const { path, port, signals } = workerData as WorkerInput;

function post(message: SideMessage): void {
  port.postMessage(
    message,
    "batch" in message
      ? [message.batch.numbers.buffer as ArrayBuffer, message.batch.lengths.buffer as ArrayBuffer]
      : [],
  );
  Atomics.add(signals, POSTED, 1);
  Atomics.notify(signals, POSTED);
  for (
    let taken = Atomics.load(signals, TAKEN);
    Atomics.load(signals, POSTED) - taken > AHEAD;
    taken = Atomics.load(signals, TAKEN)
  ) {
    Atomics.wait(signals, TAKEN, taken);
  }
}

// The reader blocks on POSTED; if this thread dies without a last message, DONE wakes it.
process.on("exit", () => {
  Atomics.store(signals, DONE, 1);
  Atomics.notify(signals, POSTED);
});

try {
  const packer = new DiffRecordPacker();
  const project = diffRecordProjector();
  let batch: DiffRecord[] = [];
  for (const record of recordLines(path)) {
    batch.push(project(record));
    if (batch.length === BATCH) {
      post({ batch: packer.pack(batch), done: false });
      batch = [];
    }
  }
  post({ batch: packer.pack(batch), done: true });
} catch (error) {
  post({
    error:
      error instanceof UserError
        ? { message: error.message, file: error.file, field: error.field }
        : { message: String((error as Error).stack ?? error) },
    user: error instanceof UserError,
  });
}
