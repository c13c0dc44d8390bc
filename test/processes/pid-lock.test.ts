import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { isProcessAlive, tryLock, waitForLock, waitFromEnvironment } from "../../src/processes/pid-lock.js";
import { processCommandLine, processStart } from "../../src/processes/process-identity.js";
import { escapeRegExp } from "../../src/text/regexp.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  removeTempDirs();
});

/** A live child process that idles until killed, with `args` after its script. */
async function idleChild(...args: string[]): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)", ...args], { stdio: "ignore" });
  children.push(child);
  await once(child, "spawn");
  return child as ChildProcess & { pid: number };
}

/** The pid a lock file names (its first line). */
const lockPid = (path: string) => readFileSync(path, "utf8").split("\n")[0];

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
    expect(lockPid(path)).toBe(String(process.pid));
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
    expect(lockPid(path)).toBe(String(process.pid));
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
    expect(lockPid(path)).toBe(String(process.pid));
    second.release();
  });

  it("take over a lock naming this process that this process does not hold (a dead run's reused pid)", () => {
    const path = join(tempDir("lock-"), "p1.lock");
    writeFileSync(path, `${process.pid}\n`);
    const lock = tryLock(path);
    expect("release" in lock).toBe(true);
    if ("release" in lock) lock.release();
  });

  it("write the owner's start time beside its pid, where /proc tells it", () => {
    const path = join(tempDir("lock-"), "p1.lock");
    const lock = tryLock(path);
    if (!("release" in lock)) throw new Error("expected the lock");
    const started = processStart(process.pid);
    expect(started).toMatch(/^[\w-]*:\d+$/);
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n${started}\n`);
    lock.release();
  });

  it("are stale when their pid is alive but belongs to a process that started at another time", async () => {
    const path = join(tempDir("lock-"), "p1.lock");
    const child = await idleChild();
    writeFileSync(path, `${child.pid}\n${processStart(child.pid)}\n`);
    expect(tryLock(path)).toEqual({ heldBy: child.pid });
    writeFileSync(path, `${child.pid}\nanother-boot:1\n`);
    const lock = tryLock(path);
    if (!("release" in lock)) throw new Error("expected the reused pid's lock to be broken");
    expect(lockPid(path)).toBe(String(process.pid));
    lock.release();
    writeFileSync(path, "1\nanother-boot:1\n");
    const again = tryLock(path);
    expect("release" in again).toBe(true);
    if ("release" in again) again.release();
  });

  it("holding only a live pid (an older version's lock, here pid 1) are waited for at most the limit, then name their holder", async () => {
    const path = join(tempDir("lock-"), "p1.lock");
    writeFileSync(path, "1\n");
    const told: number[] = [];
    const waited = waitForLock(path, (pid) => told.push(pid), 200);
    await expect(waited).rejects.toThrow(UserError);
    await expect(waited).rejects.toThrow(
      new RegExp(`^${escapeRegExp(path)}: still held after 0.2 s by process 1\\b.*remove the lock file$`),
    );
    expect(told).toEqual([1]);
    expect(readFileSync(path, "utf8")).toBe("1\n");
  });

  it("describe a holder by its command line, control characters escaped and cut short in the middle", async () => {
    const child = await idleChild("a\u001b[2Jb", "x".repeat(400), "the-end");
    const line = processCommandLine(child.pid)!;
    // The program by its file name, however long its folder (Node under pi's is 100 characters).
    expect(line).toMatch(/^node -e /);
    expect(line).toContain("setInterval(() => {}, 1 << 30) a\\u001b[2Jb x");
    expect(line).not.toContain("\u001b");
    // What the process is doing, at its end, survives the cut.
    expect(line).toMatch(/x…x+ the-end$/);
    expect(line.length).toBeLessThan(200);
  });
});

describe("a wait set by an environment variable (PAYLOAD_PROBE_LOCK_WAIT, PAYLOAD_PROBE_DB_WAIT)", () => {
  const VARIABLE = "PAYLOAD_PROBE_TEST_WAIT";
  afterEach(() => delete process.env[VARIABLE]);

  it("is the default when unset or empty, else its seconds in ms", () => {
    expect(waitFromEnvironment(VARIABLE, 5)).toBe(5000);
    process.env[VARIABLE] = " ";
    expect(waitFromEnvironment(VARIABLE, 5)).toBe(5000);
    process.env[VARIABLE] = "0.25";
    expect(waitFromEnvironment(VARIABLE, 5)).toBe(250);
    process.env[VARIABLE] = "0";
    expect(waitFromEnvironment(VARIABLE, 5)).toBe(0);
  });

  it("refuses what is not a number of seconds, naming the variable and the value", () => {
    for (const value of ["-1", "soon", "Infinity"]) {
      process.env[VARIABLE] = value;
      expect(() => waitFromEnvironment(VARIABLE, 5)).toThrow(
        new UserError(`${VARIABLE} "${value}": expected a number of seconds, 0 or more`),
      );
    }
  });
});
