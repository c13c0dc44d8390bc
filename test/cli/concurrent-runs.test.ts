/**
 * Issue 8, "two runs of the same probe at once": two `run` processes of the same probes, with one runs
 * folder and one workspace root, both finish with the records they would have alone, and the shared
 * database stays whole. A run that finds a probe's lock held waits for it and says so, and two runs of
 * one probe take turns.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it, onTestFinished } from "vitest";
import { liveRunDir } from "../../src/capture/run-folder.js";
import { tryLock } from "../../src/processes/pid-lock.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { stopAfterTest } from "../fixtures/children.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import {
  type CliResult,
  cliIn,
  defaultWorkspaceRootsOf,
  MAIN,
  startCliIn,
  withoutWorkspaceRoot,
} from "./scratch-cli.js";

afterAll(removeTempDirs);

/** Processes a test started, stopped after it even when it timed out waiting for one of them. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);

/** Resolves once the run's stderr holds `text`; fails if the run ends first. */
function saysWaiting(run: ReturnType<typeof startCliIn>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = "";
    run.child.stderr!.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes(text)) resolve();
    });
    void run.done.then((result) => reject(new Error(`the run ended without "${text}": ${result.stderr}`)));
  });
}

describe("two runs of one probe at once (issue 8)", () => {
  it("both exit 0 with whole run folders and a consistent database", async () => {
    const scratch = tempDir("concurrent-runs-");
    const runs = join(scratch, "runs");
    // Held here until both runs wait for it, so they run at once however the machine schedules them:
    // started one after the other, the first could be done before the second took a lock.
    const held = tryLock(join(scratch, "ws", "root", "p1.lock"));
    if (!("release" in held)) throw new Error(`p1's lock is held by ${held.heldBy}`);
    const both = [0, 1].map(() => startCliIn(scratch, ["run", "p1", "p6", "--runs", runs], PROJECT_ROOT));
    try {
      await Promise.all(both.map((run) => saysWaiting(run, "waiting for p1:")));
    } finally {
      held.release();
    }
    const results = await Promise.all(both.map((run) => run.done));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(
        new RegExp(`waiting for p1: process ${process.pid} \\(.*node.*\\) holds .*p1\\.lock`),
      );
    }

    // p1's stub server gets one connection per run: a log shared by both runs would hold it twice.
    const wire = lines(join(runs, "p1", "mcp-wire.jsonl")).map((line) => JSON.parse(line));
    expect(wire.filter((line) => line.message.method === "initialize")).toHaveLength(1);
    expect(new Set(lines(join(runs, "p1", "mcp-wire.jsonl"))).size).toBe(wire.length);
    expect(lines(join(runs, "p1", "requests.jsonl"))).toHaveLength(4);
    expect(lines(join(runs, "p6", "requests.jsonl"))).toHaveLength(8);

    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    const rows = db
      .prepare(
        `SELECT probe, status, request_count, (SELECT count(*) FROM requests WHERE run_id = runs.id) AS stored
         FROM runs ORDER BY probe`,
      )
      .all() as { probe: string; status: string; request_count: number; stored: number }[];
    // The two runs of p1 took turns at its lock: the later one began once the earlier had finished.
    const p1Runs = db
      .prepare(
        "SELECT pid, started_at AS startedAt, finished_at AS finishedAt FROM runs WHERE probe = 'p1' ORDER BY started_at",
      )
      .all() as { pid: number; startedAt: string; finishedAt: string }[];
    db.close();
    expect(p1Runs.map((run) => run.pid).sort()).toEqual(both.map((run) => run.child.pid).sort());
    expect(p1Runs[0]!.finishedAt <= p1Runs[1]!.startedAt, JSON.stringify(p1Runs)).toBe(true);
    expect(rows).toEqual([
      { probe: "p1", status: "passed", request_count: 4, stored: 4 },
      { probe: "p1", status: "passed", request_count: 4, stored: 4 },
      { probe: "p6", status: "passed", request_count: 8, stored: 8 },
      { probe: "p6", status: "passed", request_count: 8, stored: 8 },
    ]);
  });

  it("two checks at once, as from two clones, both give the verdict they give alone", async () => {
    // Each check has its own runs folder, as each clone has, and so its own default workspace root;
    // every root is stored as the one the committed baselines were made with.
    const scratch = tempDir("concurrent-checks-");
    const env = withoutWorkspaceRoot();
    const roots = defaultWorkspaceRootsOf([join(scratch, "a"), join(scratch, "b")]);
    onTestFinished(roots.remove);
    const checkInto = (runs: string) =>
      new Promise<CliResult>((resolve) => {
        const child = stopAfterTest(
          spawn(process.execPath, [MAIN, "check", "p0", "p0-cold", "p1", "--runs", runs], { cwd: PROJECT_ROOT, env }),
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
    const results = await Promise.all([checkInto(join(scratch, "a")), checkInto(join(scratch, "b"))]);
    for (const result of results) {
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout.match(/│ pass /g)).toHaveLength(3);
    }
    for (const clone of ["a", "b"]) {
      const db = new Database(join(scratch, clone, "payload-probe.db"), { readonly: true });
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      const runs = db.prepare("SELECT probe, status FROM runs ORDER BY probe").all();
      db.close();
      expect(runs).toEqual(["p0", "p0-cold", "p1"].map((probe) => ({ probe, status: "passed" })));
    }
  });

  it("a second proxy on a run folder a live proxy is writing exits 2 and leaves the folder as it is", async () => {
    const scratch = tempDir("concurrent-proxies-");
    const runs = join(scratch, "runs");
    const args = ["proxy", "--upstream", "http://127.0.0.1:9", "--runs", runs];
    const first = startCliIn(scratch, args);
    await new Promise<void>((resolve) =>
      first.child.stdout!.on("data", (chunk) => /LISTENING/.test(chunk) && resolve()),
    );
    // The first proxy writes beside runs/proxy while it serves; this stands for what it captured.
    const live = liveRunDir(runs, "proxy", first.child.pid!);
    writeFileSync(join(live, "requests.jsonl"), "{}\n");

    const second = cliIn(scratch, ...args);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/process \d+ \(.*dist\/cli\/main\.js proxy .*\) is capturing into it/);
    expect(readFileSync(join(live, "requests.jsonl"), "utf8")).toBe("{}\n");
    first.child.kill("SIGINT");
    expect((await first.done).code).toBe(0);
  });

  it("a lock another live process holds: run says whose once, waits PAYLOAD_PROBE_LOCK_WAIT seconds, then exits 2 naming it", async () => {
    const scratch = tempDir("held-lock-");
    const lockPath = join(scratch, "ws", "root", "p1.lock");
    // A real holder: another process that took the lock through the built pid-lock module.
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { tryLock } = await import(${JSON.stringify(pathToFileURL(join(PROJECT_ROOT, "dist/processes/pid-lock.js")).href)});
         if (!("release" in tryLock(process.argv[1]))) process.exit(1);
         process.stdout.write("held\\n");
         setInterval(() => {}, 1 << 30);`,
        lockPath,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    started.push(holder);
    try {
      const [chunk] = (await once(holder.stdout!, "data")) as [Buffer];
      expect(chunk.toString()).toBe("held\n");
      // As short as shows the wait and its end: the holder never lets go, so any limit ends it.
      process.env.PAYLOAD_PROBE_LOCK_WAIT = "0.2";
      const run = startCliIn(scratch, ["run", "p1", "--runs", join(scratch, "runs")], PROJECT_ROOT);
      delete process.env.PAYLOAD_PROBE_LOCK_WAIT;
      started.push(run.child);
      const result = await run.done;
      expect(result.code).toBe(2);
      const holderLine = `process ${holder.pid} (${basename(process.execPath)} --input-type=module -e`;
      const waiting = result.stderr.split("\n").filter((line) => line.includes("waiting for p1"));
      expect(waiting).toHaveLength(1);
      expect(waiting[0]).toContain(holderLine);
      expect(waiting[0]).toContain(`holds ${lockPath} (giving up after 0.2 s)`);
      expect(result.stderr).toContain(`payload-probe: ${lockPath}: still held after 0.2 s by ${holderLine}`);
      expect(result.stderr).toMatch(/PAYLOAD_PROBE_LOCK_WAIT sets how many seconds to wait.*remove the lock file\n$/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(lockPath, "utf8").split("\n")[0]).toBe(String(holder.pid));
    } finally {
      holder.kill("SIGKILL");
    }
  });
});
