/**
 * The main thread's side of the capture worker (capture-worker.ts) for `mock` and `proxy`. Each
 * finished exchange is handed over as it is — the request's bytes transferred, not copied — and its
 * record comes back by message. The queue between the two is bounded: while it is full, `room()`
 * holds new requests before their bodies are read (the client's upload waits in TCP), says so once
 * on stderr, and drops nothing. Closing gives the worker a bounded time to write what is queued;
 * what it could not write is counted as lost in the run's row, and the process moves on.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { StorageError, UserError } from "../errors.js";
import { PROJECT_ROOT } from "../project-root.js";
import type { WireApi } from "../providers/types.js";
import { decodedLimit, isEncoded } from "./body-encoding.js";
import type { FinishedExchange } from "./capture.js";
import { type CaptureRunOptions, checkRunName, dropRun, takeFolderLock } from "./capture-run.js";
import type { HandedRequest, HandedResponse } from "./handed-exchange.js";
import { beforeDeadline, onWorkerEnd, WorkerCalls } from "./lifecycle.js";
import { swapInRunFolder } from "./run-folder.js";
import { runDatabasePath } from "./run-format.js";
import { RunDatabase, type RunStatus } from "./sqlite.js";
import type { RequestRecord } from "./types.js";

/** The run as the worker opens it: CaptureRunOptions that can cross threads. */
export interface WorkerRunOptions
  extends Pick<
    CaptureRunOptions,
    "name" | "runsDir" | "database" | "markers" | "keepSecrets" | "pathAlias" | "knownTexts"
  > {
  keepRecords: false;
  redactBody: RegExp[];
}

export interface WorkerError {
  name: string;
  message: string;
  stack?: string;
  file?: string;
  field?: string;
}

export type ToWorker =
  | { type: "open"; options: WorkerRunOptions; gate: SharedArrayBuffer }
  | { type: "exchange"; id: number; request: HandedRequest; response: HandedResponse; ts: string; durationMs: number }
  | { type: "count"; id: number; api: WireApi; body: string }
  | { type: "event"; event: string; data: Record<string, unknown>; seq: number }
  | { type: "close"; status: RunStatus; drop: boolean };

export type FromWorker =
  | { type: "opened"; id: string; dir: string; liveDir: string }
  | { type: "finished"; id: number; exchange: FinishedExchange }
  | { type: "counted"; id: number; total: number }
  | { type: "failed"; id: number | null; error: WorkerError }
  | { type: "closed" };

/**
 * The queue's bounds: exchanges handed over and not yet written, and their bodies' size. Capture runs
 * at about 1,000 records a second on a loaded machine, so 512 is half a second of backlog; 64 MiB
 * keeps a few large bodies waiting, never dozens. A compressed body counts as the text it may decode
 * to (`queuedSize`), not its wire size.
 */
export const CAPTURE_QUEUE_LIMIT = { exchanges: 512, bytes: 64 * 1024 * 1024 };
/**
 * Who ends the run, decided once by compare-and-swap on a shared cell (`closeGate`): the worker, when
 * it reaches the close message in time, or the main thread, once the drain time is over. A message
 * would not do: one that arrives while the other side has already begun is a race, and a worker
 * stopped half-way through its close (the folder swapped, its row not finished, or the reverse) left
 * the main thread's own close to fail (issue 35: exit 3 on SIGTERM on a loaded machine).
 */
export const CLOSE_GATE = { open: 0, workerCloses: 1, mainCloses: 2 } as const;

/** How long closing waits for the worker to write what is queued before counting the rest as lost. */
export const CAPTURE_DRAIN_MS = 10_000;
/** A request whose content-length is at most this passes a queue full by bytes (see `hasRoom`). */
export const SMALL_REQUEST_BYTES = 1024 * 1024;

export interface CaptureThreadOptions extends Omit<WorkerRunOptions, "keepRecords" | "redactBody"> {
  folderLock?: CaptureRunOptions["folderLock"];
  /** Keep each record in `records` as it comes back (a probe run on pi reads them). */
  keepRecords?: boolean;
  redactBody?: RegExp[];
  onFinished?: (exchange: FinishedExchange) => void;
  queueLimit?: typeof CAPTURE_QUEUE_LIMIT;
  drainMs?: number;
  /** Where the one line saying capture is behind, and a shutdown's losses, are told (default stderr). */
  notice?: (line: string) => void;
}

/** The worker's entry: the launcher scripts/bundle.mjs writes beside the other dist entries. */
const WORKER_ENTRY = join(PROJECT_ROOT, "dist", "workers", "capture-worker.js");

function fromWorker(error: WorkerError): Error {
  if (error.name === "StorageError") return new StorageError(error.message, error.file!);
  if (error.name === "UserError") return new UserError(error.message, error.file, error.field);
  return Object.assign(new Error(error.message), { stack: error.stack });
}

/** Exact bytes, transferable: a Buffer from Node's shared pool is copied out (a few KiB) rather than detach the pool. */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

/**
 * What a body costs the queue: its bytes, or for a compressed one the most the worker may decode
 * from it (body-encoding.ts), since decoding and counting that text is the worker's work to come.
 */
function queuedSize(bytes: Uint8Array, contentEncoding: string | undefined): number {
  return isEncoded(contentEncoding) ? decodedLimit(bytes.byteLength) : bytes.byteLength;
}

/** What the queue keeps of each call: an exchange in the queue (with its bytes), or a token count. */
interface Queued {
  exchange: boolean;
  bytes: number;
}

/** What the worker sends before it serves: the run it opened, or why it could not. */
function opening(worker: Worker): Promise<{ id: string; dir: string; liveDir: string }> {
  return new Promise((resolve, reject) => {
    onWorkerEnd(worker, "the capture worker", reject);
    worker.once("message", (message: FromWorker) => {
      if (message.type === "opened") resolve(message);
      else if (message.type === "failed") reject(fromWorker(message.error));
    });
  });
}

export class CaptureThread {
  readonly records: RequestRecord[] = [];
  private readonly calls: WorkerCalls<Queued>;
  /** Requests waiting for room, with the size each declared (content-length), if it did. */
  private readonly roomWaiters: { declared: number | undefined; wake: () => void }[] = [];
  private queued = 0;
  private queuedBytes = 0;
  private handed = 0;
  private written = 0;
  private toldBehind = false;
  private closing = false;
  /** Why the worker could not finish the run (its folder was not swapped in), rethrown by `close`. */
  private closeFailure: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly options: CaptureThreadOptions,
    readonly id: string,
    readonly dir: string,
    /** Where the run is written until it closes (src/capture/run-folder.ts). */
    readonly liveDir: string,
    private readonly releaseLock: () => void,
    /** The close gate (CLOSE_GATE), shared with the worker. */
    private readonly gate: Int32Array,
  ) {
    this.calls = new WorkerCalls(worker, "the capture worker");
    // However the worker stops, requests waiting for room go on (and find the capture stopped).
    void this.calls.ended.then(() => this.wakeRoomWaiters());
    worker.on("message", (message: FromWorker) => this.receive(message));
  }

  /** Settles once the worker has stopped, however it stopped (Lifecycle's end). */
  get ended(): Promise<void> {
    return this.calls.ended.then(() => undefined);
  }

  /** Takes the run folder's lock here, then opens the run on a new worker (Capture.ready: the tokenizer, when needed). */
  static async start(options: CaptureThreadOptions): Promise<CaptureThread> {
    checkRunName(options.name);
    const { lock, ownLock } = takeFolderLock(options);
    const releaseLock = () => ownLock && lock.release();
    const worker = new Worker(WORKER_ENTRY);
    const gate = new SharedArrayBuffer(4);
    try {
      const { name, runsDir, database, markers, redactBody = [], keepSecrets, pathAlias, knownTexts } = options;
      const open: ToWorker = {
        type: "open",
        options: {
          name,
          runsDir,
          database,
          markers,
          redactBody,
          keepSecrets,
          pathAlias,
          knownTexts,
          keepRecords: false,
        },
        gate,
      };
      const opened = opening(worker);
      worker.postMessage(open);
      const { id, dir, liveDir } = await opened;
      return new CaptureThread(worker, options, id, dir, liveDir, releaseLock, new Int32Array(gate));
    } catch (error) {
      await worker.terminate();
      releaseLock();
      throw error;
    }
  }

  private receive(message: FromWorker): void {
    if (message.type === "opened" || message.type === "closed") return;
    if (message.type === "failed" && message.id === null) {
      this.closeFailure ??= fromWorker(message.error);
      return;
    }
    if (message.id === null) return;
    if (message.type === "finished") {
      this.written++;
      const { exchange } = message;
      if (this.options.keepRecords && exchange.record) this.records.push(exchange.record);
      this.options.onFinished?.(exchange);
    }
    const reply =
      message.type === "failed"
        ? { error: fromWorker(message.error) }
        : { value: message.type === "counted" ? message.total : message.exchange };
    const settled = this.calls.settle(message.id, reply);
    // An exchange leaves the queue whether it was written or failed (it will not be written).
    if (settled?.extra.exchange) this.dequeue(settled.extra.bytes);
  }

  private dequeue(bytes: number): void {
    this.queued--;
    this.queuedBytes -= bytes;
    for (const waiter of [...this.roomWaiters]) {
      if (!this.hasRoom(waiter.declared)) continue;
      this.roomWaiters.splice(this.roomWaiters.indexOf(waiter), 1);
      waiter.wake();
    }
  }

  /**
   * A request that declares itself small passes a queue whose bytes are full: large bodies waiting
   * for capture are no reason to hold other clients, and what the small ones add is bounded by the
   * count (CAPTURE_QUEUE_LIMIT.exchanges × SMALL_REQUEST_BYTES).
   */
  private hasRoom(declared?: number): boolean {
    const limit = this.options.queueLimit ?? CAPTURE_QUEUE_LIMIT;
    if (this.closing || this.calls.stopped) return true;
    if (this.queued >= limit.exchanges) return false;
    return this.queuedBytes < limit.bytes || (declared !== undefined && declared <= SMALL_REQUEST_BYTES);
  }

  /** Resolves once the queue has room for another exchange; a server awaits it before reading a request body. */
  room(declared?: number): Promise<void> {
    if (this.hasRoom(declared)) return Promise.resolve();
    if (!this.toldBehind) {
      this.toldBehind = true;
      const mib = (this.queuedBytes / 1024 / 1024).toFixed(1);
      this.notice(
        `capture: behind (${this.queued} exchanges, ${mib} MiB waiting to be written); new requests wait until it catches up, none is dropped`,
      );
    }
    return new Promise((resolve) => this.roomWaiters.push({ declared, wake: resolve }));
  }

  /** Hands a finished exchange to the worker, its bytes transferred; resolves with what it became once it is written. */
  hand(request: HandedRequest, response: HandedResponse, ts: string, durationMs: number): Promise<FinishedExchange> {
    this.handed++;
    if (this.calls.stopped) return Promise.reject(this.calls.stopped);
    const sent = ownBuffer(request.bytes);
    const received = ownBuffer(response.bytes);
    const size = queuedSize(sent, request.contentEncoding) + queuedSize(received, response.contentEncoding);
    this.queued++;
    this.queuedBytes += size;
    const message = (id: number): ToWorker => ({
      type: "exchange",
      id,
      request: { ...request, bytes: sent },
      response: { ...response, bytes: received },
      ts,
      durationMs,
    });
    const transfer = [sent.buffer as ArrayBuffer, received.buffer as ArrayBuffer];
    return this.calls.call(message, { exchange: true, bytes: size }, transfer);
  }

  /** `hand` for a server that does not wait for the record (the proxy): a capture that fails is told with its stack. */
  handLater(request: HandedRequest, response: HandedResponse, ts: string, durationMs: number): void {
    this.hand(request, response, ts, durationMs).catch((error: Error) => {
      // Past the drain time every exchange still held fails at once; the shutdown notice counts them.
      if (!this.calls.stopped)
        this.notice(`capture: an exchange could not be written: ${error.stack ?? error.message}`);
    });
  }

  /** The request's token total by our count, counted on the worker (the mock's usage estimate). */
  countRequestTokens(api: WireApi, body: string): Promise<number> {
    const message = (id: number): ToWorker => ({ type: "count", id, api, body });
    return this.calls.call(message, { exchange: false, bytes: 0 });
  }

  /**
   * An agent event into the run (Capture.addEvent), written in its turn among the exchanges; nothing
   * waits for it. A write that fails fails the run's close, as a failed record's write does.
   */
  addEvent(event: string, data: Record<string, unknown>, seq: number): void {
    if (!this.calls.stopped) this.worker.postMessage({ type: "event", event, data, seq } satisfies ToWorker);
  }

  private wakeRoomWaiters(): void {
    for (const waiter of this.roomWaiters.splice(0)) waiter.wake();
  }

  private notice(line: string): void {
    (this.options.notice ?? ((text) => process.stderr.write(`${text}\n`)))(line);
  }

  /**
   * Lets waiting requests in, waits for the server to finish its replies (`served`), then gives the
   * worker until `drainMs` after this call to write the queue and close the run. Past that (or at
   * once when the worker has stopped on its own) the worker is stopped and the run's row is finished
   * here, with what was handed but not written counted as lost; `served` is not waited for past the
   * drain time either, so neither a slow worker nor a reply that never ends holds the close.
   */
  async close(served: Promise<void>, status: RunStatus = "captured", dropIfEmpty = false): Promise<void> {
    const deadline = performance.now() + (this.options.drainMs ?? CAPTURE_DRAIN_MS);
    this.closing = true;
    this.wakeRoomWaiters();
    const closed = new Promise<true>((resolve) =>
      this.worker.on("message", (message: FromWorker) => message.type === "closed" && resolve(true)),
    );
    // Decided once the server has finished: an exchange handed meanwhile keeps the run.
    const drop = () => dropIfEmpty && this.handed === 0;
    const drained = served.then(() => {
      this.worker.postMessage({ type: "close", status, drop: drop() } satisfies ToWorker);
      return closed;
    });
    const ended = this.calls.ended.then(() => false as const);
    let inTime = (await beforeDeadline(Promise.race([drained, ended]), deadline - performance.now())) === true;
    // Too late, unless the worker has begun its close: then it finishes it (a few writes and renames).
    if (!inTime && !this.claimClose()) inTime = await Promise.race([closed, ended]);
    await this.worker.terminate();
    try {
      if (!inTime) await this.finishLate(beforeDeadline(served, deadline - performance.now()), status, drop);
    } finally {
      this.releaseLock();
    }
    if (this.closeFailure) throw this.closeFailure;
  }

  /** True when the main thread takes the run's close, false when the worker already has. */
  private claimClose(): boolean {
    const { open, mainCloses } = CLOSE_GATE;
    return Atomics.compareExchange(this.gate, 0, open, mainCloses) === open;
  }

  private async finishLate(served: Promise<unknown>, status: RunStatus, drop: () => boolean): Promise<void> {
    this.calls.stop(new Error("the capture worker was stopped before it had written this exchange"));
    await served;
    if (drop()) {
      const db = this.options.database === false ? null : new RunDatabase(runDatabasePath(this.options.runsDir));
      try {
        return dropRun(db, this.id, this.options.runsDir, this.liveDir);
      } finally {
        db?.close();
      }
    }
    const lost = this.handed - this.written;
    const ms = this.options.drainMs ?? CAPTURE_DRAIN_MS;
    this.notice(`capture: ${lost} exchange(s) not written within ${ms} ms of stopping; the run counts them as lost`);
    if (this.options.database !== false) {
      const db = new RunDatabase(runDatabasePath(this.options.runsDir));
      try {
        db.finishRun(this.id, status, lost);
      } finally {
        db.close();
      }
    }
    // What the worker wrote before it stopped is this run's capture: it replaces the previous one.
    const kept = swapInRunFolder(this.options.runsDir, this.options.name, this.liveDir);
    if (kept !== null) this.notice(`capture: the previous run, which the database does not hold, is kept as ${kept}`);
  }
}
