/**
 * A benchmark stops what it started whatever happens (scripts/bench/harness.mjs, issue 36): a step
 * that fails after children and a server started, a child whose start fails after it was spawned,
 * SIGINT in the middle, and a child that had exited before it was stopped (stopping it once waited
 * for an 'exit' event that had already passed). Real child processes; none may be left.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";
import { stopAfterTest } from "./fixtures/children.js";
import { removeTempDirs, tempDir } from "./runtime/harness.js";

afterAll(removeTempDirs);

const STEPS = join(PROJECT_ROOT, "test/fixtures/bench-harness-steps.mjs");

/** True while a process of that pid exists (a child the bench left would be adopted and live on). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts node with `args` in its own group (killed after the test if anything of it is left), stdout and stderr read. */
function start(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = stopAfterTest(
    spawn(process.execPath, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] }),
    true,
  );
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const started = new Promise<number[]>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("STARTED ")) resolve(JSON.parse(line.slice("STARTED ".length)) as number[]);
    });
    child.once("exit", () => reject(new Error(`exited before it started everything: ${stderr}`)));
  });
  // A bench that fails before it starts everything is awaited for its exit instead.
  started.catch(() => undefined);
  const exited = once(child, "exit").then(([code, signal]) => ({ code, signal, stderr }));
  return { child, started, exited };
}

/** Pids of processes whose command line names `text` (a bench's temporary folder names its children). */
function processesNaming(text: string, except: ChildProcess): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === except.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

describe("a benchmark's harness", () => {
  it.each([
    ["throws", "a step failed"],
    ["start-fails", "did not start: not listening"],
  ])("a step that %s: the bench exits 1 naming it, and every child it started is gone", async (form, said) => {
    const bench = start([STEPS, form]);
    const pids = await bench.started;
    expect(pids).toHaveLength(form === "start-fails" ? 3 : 2);
    const { code, stderr } = await bench.exited;
    expect(code).toBe(1);
    expect(stderr).toContain(said);
    expect(pids.filter(alive)).toEqual([]);
  });

  it("SIGINT in the middle: the bench stops what it started and exits 130", async () => {
    const bench = start([STEPS, "waits"]);
    const pids = await bench.started;
    expect(pids.filter(alive)).toEqual(pids);
    bench.child.kill("SIGINT");
    const { code, stderr } = await bench.exited;
    expect(code).toBe(130);
    expect(stderr).toContain("bench: SIGINT, stopping what it started");
    expect(pids.filter(alive)).toEqual([]);
  });

  it("bench-proxy whose third process fails to start leaves neither the mock nor the proxy it had started", async () => {
    const scratch = tempDir("bench-fails-");
    const bench = start(
      [
        join(PROJECT_ROOT, "scripts/bench-proxy.mjs"),
        "--rounds",
        "1",
        "--per-round",
        "1",
        `--baseline=${scratch}/no-checkout`,
      ],
      { ...process.env, TMPDIR: scratch },
    );
    const { code, stderr } = await bench.exited;
    expect(code).toBe(1);
    expect(stderr).toMatch(/main\.js proxy exited 1 before it listened/);
    // The mock says what it served when it is stopped: it had started, and was stopped by the harness.
    expect(stderr).toMatch(/^mock: 0 request\(s\)/m);
    expect(processesNaming(scratch, bench.child)).toEqual([]);
  });
});
