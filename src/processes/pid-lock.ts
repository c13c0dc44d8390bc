import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { UserError } from "../errors.js";
import { asStorageError } from "../files/storage-error.js";
import { processCommandLine, processStart } from "./process-identity.js";

/**
 * A lock file holding the pid of its owner and, on its second line, when that process started
 * (process-identity.ts; absent where /proc cannot tell, and in locks older versions wrote). It is
 * taken by creating the file exclusively (a hard link of a file already holding both, so no reader
 * ever sees it empty) and is stale once that process is gone, or once its pid belongs to a process
 * that started at another time, so neither a run killed with SIGKILL nor the pid's next user blocks
 * the next run.
 */
export interface PidLock {
  readonly path: string;
  release(): void;
}

/** Locks this process holds; removed on exit, so `process.exit` from a signal handler leaves none behind. */
const held = new Set<string>();
let exitHookInstalled = false;

/**
 * Whether the process that had this pid (and, when known, this start) still runs: a pid that exists
 * (EPERM: it belongs to another user) and, where both start times are known, started when it did.
 */
export function isProcessAlive(pid: number, started?: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (started === undefined || started === null) return true;
  const now = processStart(pid);
  return now === null || now === started;
}

/** A lock file's owner as written, and the file's text, so a breaker removes only the lock it judged. */
interface LockOwner {
  pid: number;
  started: string | null;
  text: string;
}

function ownerOf(path: string): LockOwner | null {
  try {
    const text = readFileSync(path, "utf8");
    const [pidLine = "", started = ""] = text.split("\n");
    const pid = Number.parseInt(pidLine, 10);
    return Number.isInteger(pid) && pid > 0 ? { pid, started: started.trim() || null, text } : null;
  } catch {
    return null;
  }
}

const ownLockText = () => {
  const started = processStart(process.pid);
  return started === null ? `${process.pid}\n` : `${process.pid}\n${started}\n`;
};

function createExclusively(path: string): boolean {
  const staged = `${path}.${process.pid}.tmp`;
  try {
    // On a full disk the file can be created and its write fail: it is removed all the same.
    writeFileSync(staged, ownLockText());
    linkSync(staged, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    unlinkQuietly(staged);
  }
}

/**
 * Removes a lock whose owner is dead. Breaking it is itself guarded by a second lock, so two waiters
 * that both find it stale cannot both remove it and the first one's fresh lock with it.
 */
function breakStaleLock(path: string, deadOwner: LockOwner | null): void {
  const guard = `${path}.break`;
  if (!createExclusively(guard)) {
    const breaker = ownerOf(guard);
    if (breaker === null || !isProcessAlive(breaker.pid, breaker.started)) unlinkQuietly(guard);
    return;
  }
  try {
    if (ownerOf(path)?.text === deadOwner?.text) unlinkQuietly(path);
  } finally {
    unlinkQuietly(guard);
  }
}

function holdLock(path: string): PidLock {
  held.add(path);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const lock of held) unlinkQuietly(lock);
    });
  }
  return {
    path,
    release() {
      if (held.delete(path)) unlinkQuietly(path);
    },
  };
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

/**
 * Takes the lock now, or reports the live process that holds it. A folder where no lock can be made
 * (read-only, full) is a StorageError naming the lock.
 */
export function tryLock(path: string): PidLock | { heldBy: number } {
  return asStorageError(path, () => takeOrFindOwner(path));
}

function takeOrFindOwner(path: string): PidLock | { heldBy: number } {
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    if (createExclusively(path)) return holdLock(path);
    const owner = ownerOf(path);
    // Our own pid on a lock this process does not hold is a dead process's whose pid was reused.
    const ownLeftover = owner?.pid === process.pid && !held.has(path);
    if (owner !== null && !ownLeftover && isProcessAlive(owner.pid, owner.started)) return { heldBy: owner.pid };
    breakStaleLock(path, owner);
  }
}

/** A lock's holder for a message: its pid and, where /proc shows it, its command line. */
export function describeProcess(pid: number): string {
  const command = processCommandLine(pid);
  return command === null ? `process ${pid}` : `process ${pid} (${command})`;
}

const POLL_MS = 100;
const LOCK_WAIT_VARIABLE = "PAYLOAD_PROBE_LOCK_WAIT";
/** How long a run waits for another run of its probe by default: far longer than any probe run takes. */
export const DEFAULT_LOCK_WAIT_SECONDS = 300;

/**
 * A wait for another process set in seconds by an environment variable (PAYLOAD_PROBE_LOCK_WAIT,
 * PAYLOAD_PROBE_DB_WAIT), in ms; the default when it is unset or empty.
 */
export function waitFromEnvironment(variable: string, defaultSeconds: number): number {
  const value = process.env[variable]?.trim();
  if (value === undefined || value === "") return defaultSeconds * 1000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new UserError(`${variable} "${value}": expected a number of seconds, 0 or more`);
  return seconds * 1000;
}

/** The longest wait for a lock, in ms: PAYLOAD_PROBE_LOCK_WAIT seconds, else the default. */
export const lockWaitMs = (): number => waitFromEnvironment(LOCK_WAIT_VARIABLE, DEFAULT_LOCK_WAIT_SECONDS);

/**
 * Waits until the lock is free and takes it; `onWait` is told once who holds it meanwhile. After
 * `maxWaitMs` (lockWaitMs) it gives up with a UserError naming the lock, its holder and the way out.
 */
export async function waitForLock(
  path: string,
  onWait?: (heldBy: number) => void,
  maxWaitMs = lockWaitMs(),
): Promise<PidLock> {
  const giveUpAt = Date.now() + maxWaitMs;
  let told = false;
  for (;;) {
    const attempt = tryLock(path);
    if ("release" in attempt) return attempt;
    if (Date.now() >= giveUpAt)
      throw new UserError(
        `${path}: still held after ${maxWaitMs / 1000} s by ${describeProcess(attempt.heldBy)}; wait for it to finish (${LOCK_WAIT_VARIABLE} sets how many seconds to wait), stop it, or, if it is not a payload-probe run, remove the lock file`,
        path,
      );
    if (!told) onWait?.(attempt.heldBy);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
