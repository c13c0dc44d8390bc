import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isProcessAlive, tryLock, waitForLock } from "../src/pid-lock.js";
import { removeTempDirs, tempDir } from "./runtime/harness.js";

afterEach(removeTempDirs);

/** The pid of a real process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("pid locks", () => {
  it("hold the owner's pid, refuse a second taker while the owner lives, and vanish on release", () => {
    const path = join(tempDir("lock-"), "nested", "p1.lock");
    const lock = tryLock(path);
    if (!("release" in lock)) throw new Error("expected the lock");
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.pid));
    expect(tryLock(path)).toEqual({ heldBy: process.pid });
    lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it("are stale once their owner is dead, and the next taker breaks them", () => {
    const path = join(tempDir("lock-"), "p1.lock");
    const pid = deadPid();
    expect(isProcessAlive(pid)).toBe(false);
    writeFileSync(path, `${pid}\n`);
    const lock = tryLock(path);
    expect("release" in lock).toBe(true);
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.pid));
    if ("release" in lock) lock.release();
  });

  it("make a waiter wait, tell it once who holds the lock, and let it in on release", async () => {
    const path = join(tempDir("lock-"), "p1.lock");
    const first = tryLock(path);
    if (!("release" in first)) throw new Error("expected the lock");
    const told: number[] = [];
    let acquired = false;
    const waiting = waitForLock(path, (pid) => told.push(pid)).then((lock) => {
      acquired = true;
      return lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(acquired).toBe(false);
    expect(told).toEqual([process.pid]);
    first.release();
    const second = await waiting;
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.pid));
    second.release();
  });

  it("take over a lock naming this process that this process does not hold (a dead run's reused pid)", () => {
    const path = join(tempDir("lock-"), "p1.lock");
    writeFileSync(path, `${process.pid}\n`);
    const lock = tryLock(path);
    expect("release" in lock).toBe(true);
    if ("release" in lock) lock.release();
  });
});
