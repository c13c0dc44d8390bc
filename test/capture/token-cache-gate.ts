/**
 * A gate that holds the capture worker in the middle of an exchange until the test opens it, so a
 * test knows an exchange is still on the worker by construction, not by how long counting a large
 * body takes. The token cache folder (PAYLOAD_PROBE_TOKEN_CACHE) gets a FIFO in place of each of its
 * 64 files (one per first character of a fact's hash, src/capture/token-count-cache.ts). An exchange
 * with a text never counted opens one of them, to read a file not read yet or to append its new fact,
 * and a FIFO's open waits for the other side, however fast the machine is. `open()` becomes that
 * other side, puts empty files in the FIFOs' places (later lookups read those), then lets go: the
 * waiting read ends with nothing read, the waiting append's bytes go nowhere.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, openSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { vi } from "vitest";

/** The first character of a fact's key after its kind: base64url's alphabet. */
const SHARDS = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"].map((c) => `${c}.jsonl`);

export interface TokenCacheGate {
  /** The folder to name in PAYLOAD_PROBE_TOKEN_CACHE. */
  path: string;
  /** Lets the worker go on (a read or append that waits, and every later one); a second call does nothing. */
  open(): void;
}

/**
 * Closes the gate on the token cache folder `dir`: files already there are replaced (a worker keeps
 * the text of those it has read). Made before a proxy starts, it holds the first exchange; made once
 * exchanges were written, it holds the next one with a new text.
 */
export function closeTokenCache(dir: string): TokenCacheGate {
  const paths = SHARDS.map((name) => join(dir, name));
  const made = spawnSync(
    "mkfifo",
    paths.map((path) => `${path}.fifo`),
    { encoding: "utf8" },
  );
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
  for (const path of paths) renameSync(`${path}.fifo`, path);
  let opened = false;
  return {
    path: dir,
    open() {
      if (opened) return;
      opened = true;
      // Opening a FIFO for reading and writing does not wait (Linux); it ends the worker's wait to open.
      const ends = paths.map((path) => openSync(path, constants.O_RDWR));
      for (const path of paths) {
        writeFileSync(`${path}.file`, "");
        renameSync(`${path}.file`, path);
      }
      for (const fd of ends) closeSync(fd);
    },
  };
}

/**
 * Opens `gate` the moment a worker is asked to stop, not before: a worker held by it is ended at its
 * next step of JavaScript after the wait, before it can write what it holds. Undone by
 * `vi.restoreAllMocks()`.
 */
export function openWhenStopped(gate: TokenCacheGate): void {
  const terminate = Worker.prototype.terminate;
  vi.spyOn(Worker.prototype, "terminate").mockImplementation(function (this: Worker) {
    const stopping = terminate.call(this);
    gate.open();
    return stopping;
  });
}
