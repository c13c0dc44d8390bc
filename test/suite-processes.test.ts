/**
 * The end-of-suite check for processes a test left running (test/fixtures/suite-processes.ts), on real
 * leaked children: one still below this worker, and one whose parent exited so that only the run's
 * marker in its environment leads to it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import {
  isRunnerMachinery,
  killProcesses,
  leftoverProcesses,
  SUITE_MARKER_ENV,
  type SuiteProcess,
} from "./fixtures/suite-processes.js";

const started: SuiteProcess[] = [];
afterEach(async () => {
  await killProcesses(started.splice(0));
});

const IDLE = "setInterval(() => {}, 60_000)";

/** A child of this worker that runs until killed, with `marker` as the run's marker. */
function idleChild(marker: string): ChildProcess {
  const child = spawn(process.execPath, ["-e", IDLE], {
    env: { ...process.env, [SUITE_MARKER_ENV]: marker },
    stdio: "ignore",
  });
  started.push({ pid: child.pid!, ppid: process.pid, command: "" });
  return child;
}

/** What the orphan runs: it says so on the stdout it shares with its shell, then idles. */
const SAYS_READY = 'process.stdout.write("ready\\n"); setInterval(() => {}, 60_000)';

/**
 * A grandchild whose parent, a shell, has exited: it is reparented away from this worker. Its pid is
 * the shell's line; its own "ready" says it is Node by now, not a shell's fork still on its way to
 * exec (whose environment and command line a read of /proc can catch in between).
 */
async function orphan(marker: string): Promise<number> {
  const shell = spawn("sh", ["-c", `"${process.execPath}" -e '${SAYS_READY}' 2>/dev/null & echo $!`], {
    env: { ...process.env, [SUITE_MARKER_ENV]: marker },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const lines = createInterface({ input: shell.stdout! });
  const [pid] = await Promise.all([
    new Promise<number>((resolve) => {
      let said: { pid?: number; ready?: boolean } = {};
      lines.on("line", (line) => {
        said = line === "ready" ? { ...said, ready: true } : { ...said, pid: Number(line) };
        if (said.pid !== undefined && said.ready) resolve(said.pid);
      });
    }),
    new Promise((resolve) => shell.once("exit", resolve)),
  ]);
  lines.close();
  shell.stdout!.destroy();
  started.push({ pid, ppid: 0, command: "" });
  return pid;
}

describe("processes left running at the end of the suite", () => {
  it("finds a child still below the root and an orphan carrying the marker, and nothing once they are killed", async () => {
    const marker = randomUUID();
    const child = idleChild(marker);
    const lost = await orphan(marker);
    const leftovers = leftoverProcesses(process.pid, marker);
    expect(leftovers.map((p) => p.pid)).toEqual(expect.arrayContaining([child.pid, lost]));
    expect(leftovers.find((p) => p.pid === lost)!.ppid).not.toBe(process.pid);
    expect(leftovers.find((p) => p.pid === child.pid)!.command).toBe(`${process.execPath} -e ${IDLE}`);

    await killProcesses(leftovers.filter((p) => p.pid === child.pid || p.pid === lost));
    const after = leftoverProcesses(process.pid, marker).map((p) => p.pid);
    expect(after).not.toContain(child.pid);
    expect(after).not.toContain(lost);
  });

  it("an orphan with another run's marker is not this run's", async () => {
    const lost = await orphan(randomUUID());
    expect(leftoverProcesses(process.pid, randomUUID()).map((p) => p.pid)).not.toContain(lost);
  });

  it("takes this very worker for the runner's machinery, and a test's child for not", () => {
    const self = readFileSync("/proc/self/cmdline", "utf8").split("\0").filter(Boolean).join(" ");
    expect(isRunnerMachinery(self)).toBe(true);
    expect(isRunnerMachinery(`${process.execPath} dist/cli/main.js mock probes/p1.yaml`)).toBe(false);
  });
});
