/**
 * A run's DiffRecords, for `diff`. Reading and JSON.parse of the two runs' records is most of a
 * diff's time, so one run — when it is long — is read in a worker thread while the main thread
 * reads the other and aligns and renders: two cores each parse one run. (A worker for each run
 * gains nothing on two cores — the main thread's own work is the third — and costs the packing
 * twice.) Only the projection crosses threads, packed (diff-record-codec.ts): a record copied as
 * an object costs as much as parsing it. The main thread takes batches synchronously
 * (receiveMessageOnPort, Atomics.wait on a shared counter), so the diff stays one sync pipeline.
 * A short run, or a run read from the database, is read on the main thread: starting a worker
 * costs more than it saves there.
 */
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { UserError } from "../errors.js";
import { type DiffRecord, diffRecordProjector } from "./diff-record.js";
import { DiffRecordUnpacker, type PackedBatch } from "./diff-record-codec.js";
import type { RunSource } from "./load-run.js";

/**
 * A requests.jsonl from this size on may be read in a worker (about 25,000 requests of a coding
 * session). Below it the worker's start-up and the packing cost more than parsing on the main
 * thread: a 10,000-request diff took 0.55 s inline and 0.75 s with the worker.
 */
export const WORKER_MIN_BYTES = 32 * 1024 * 1024;
/** Records per message, and how many messages the worker may run ahead of the reader. */
export const BATCH = 128;
export const AHEAD = 16;
/** Slots of the shared counters: messages posted by the worker, taken by the reader; the worker ended. */
export const POSTED = 0;
export const TAKEN = 1;
export const DONE = 2;

export interface WorkerInput {
  path: string;
  port: MessagePort;
  signals: Int32Array;
}

export type SideMessage =
  | { batch: PackedBatch; done: boolean }
  | { error: { message: string; file?: string; field?: string }; user: boolean };

/** The built worker; absent when the sources run unbuilt (tests), where every run is read inline. */
const WORKER_FILE = fileURLToPath(new URL("./diff-record-worker.js", import.meta.url));

/**
 * `offThread`: read a long run folder in a worker, started now — while the caller still counts
 * and opens the other run — rather than when the first record is asked for.
 */
export function diffRecords(source: RunSource, offThread: boolean): Iterable<DiffRecord> {
  const file = source.recordsFile;
  if (offThread && file && existsSync(WORKER_FILE) && existsSync(file) && statSync(file).size >= WORKER_MIN_BYTES)
    return workerRecords(startWorker(file));
  return projected(source);
}

function* projected(source: RunSource): Generator<DiffRecord> {
  const project = diffRecordProjector();
  for (const record of source.records()) yield project(record);
}

interface RunningWorker {
  worker: Worker;
  port: MessagePort;
  signals: Int32Array;
}

function startWorker(path: string): RunningWorker {
  const { port1, port2 } = new MessageChannel();
  const signals = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  const input: WorkerInput = { path, port: port2, signals };
  const worker = new Worker(WORKER_FILE, { workerData: input, transferList: [port2] });
  // A diff that stops early (an error in the other run) must not wait for this thread to end.
  worker.unref();
  return { worker, port: port1, signals };
}

function* workerRecords({ worker, port, signals }: RunningWorker): Generator<DiffRecord> {
  const unpacker = new DiffRecordUnpacker();
  let taken = 0;
  try {
    for (;;) {
      const message = nextMessage(port, signals, taken);
      Atomics.store(signals, TAKEN, ++taken);
      Atomics.notify(signals, TAKEN);
      if ("error" in message) {
        const { message: text, file, field } = message.error;
        throw message.user ? new UserError(text, file, field) : new Error(text);
      }
      yield* unpacker.unpack(message.batch);
      if (message.done) return;
    }
  } finally {
    port.close();
    void worker.terminate();
  }
}

function nextMessage(port: MessagePort, signals: Int32Array, taken: number): SideMessage {
  for (;;) {
    const received = receiveMessageOnPort(port);
    if (received) return received.message as SideMessage;
    if (Atomics.load(signals, DONE) === 1 && Atomics.load(signals, POSTED) === taken) {
      throw new Error("the worker reading a run stopped without a result");
    }
    Atomics.wait(signals, POSTED, taken, 100);
  }
}
