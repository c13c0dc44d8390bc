import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { asStorageError } from "./storage-error.js";

/**
 * A lock file holding the pid of its owner. It is taken by creating the file exclusively (a hard link
 * of a file already holding the pid, so no reader ever sees it empty) and is stale once that process
 * is gone, so a run killed with SIGKILL never blocks the next one.
 */
export interface PidLock {
  readonly path: string;
  release(): void;
}

/** Locks this process holds; removed on exit, so `process.exit` from a signal handler leaves none behind. */
const held = new Set<string>();
let exitHookInstalled = false;

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function ownerOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function createExclusively(path: string): boolean {
  const staged = `${path}.${process.pid}.tmp`;
  try {
    // On a full disk the file can be created and its write fail: it is removed all the same.
    writeFileSync(staged, `${process.pid}\n`);
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
function breakStaleLock(path: string, deadOwner: number | null): void {
  const guard = `${path}.break`;
  if (!createExclusively(guard)) {
    const breaker = ownerOf(guard);
    if (breaker === null || !isProcessAlive(breaker)) unlinkQuietly(guard);
    return;
  }
  try {
    if (ownerOf(path) === deadOwner) unlinkQuietly(path);
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
    const ownLeftover = owner === process.pid && !held.has(path);
    if (owner !== null && !ownLeftover && isProcessAlive(owner)) return { heldBy: owner };
    breakStaleLock(path, owner);
  }
}

const POLL_MS = 100;

/** Waits until the lock is free and takes it; `onWait` is told once who holds it meanwhile. */
export async function waitForLock(path: string, onWait?: (heldBy: number) => void): Promise<PidLock> {
  let told = false;
  for (;;) {
    const attempt = tryLock(path);
    if ("release" in attempt) return attempt;
    if (!told) onWait?.(attempt.heldBy);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
