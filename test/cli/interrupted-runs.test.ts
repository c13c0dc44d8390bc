/**
 * Issue 8, "runs that die": a run killed with SIGKILL is found `running` with a dead pid and marked
 * `interrupted` (with the requests it captured) when the database is next opened; a run stopped by
 * SIGTERM marks itself before it exits. Real child processes, stopped while a tool call sleeps.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { liveRunDir } from "../../src/capture/run-folder.js";
import { RunDatabase } from "../../src/capture/sqlite.js";
import { tryLock } from "../../src/pid-lock.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

/** The tool's sleep runs in a process group of its own and outlives a killed run: each test stops it. */
const toolPids: string[] = [];
afterEach(() => {
  for (const file of toolPids.splice(0)) {
    try {
      process.kill(Number(readFileSync(file, "utf8")), "SIGKILL");
    } catch {
      // Never started, or gone already.
    }
  }
  removeTempDirs();
});

/** A probe whose tool call writes its pid to `pidFile` (whole, by a rename) and then sleeps far longer than any test. */
const slowProbe = (pidFile: string) => `name: slow
agent: { tools: bash, noSkills: true }
prompts: ["go"]
model:
  script:
    - call: bash
      args: { command: ${JSON.stringify(`echo $$ > '${pidFile}.part' && mv '${pidFile}.part' '${pidFile}' && exec sleep 300`)} }
    - text: done
`;

type RunRow = { status: string; request_count: number; pid: number; finished_at: string | null };

/**
 * Whether the first request is in requests.jsonl and in the database (written one after the other).
 * An open run writes into its live folder beside `runs/slow` (src/capture/run-folder.ts).
 */
function firstRequestCaptured(runs: string, pid: number): boolean {
  const records = join(liveRunDir(runs, "slow", pid), "requests.jsonl");
  if (!(existsSync(records) && readFileSync(records, "utf8").includes("\n"))) return false;
  const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM requests`).get() as { n: number }).n > 0;
  } finally {
    db.close();
  }
}

/**
 * Starts the slow probe and resolves once its first request is captured and its tool call sleeps.
 * The file's line alone is not enough: a kill landing between it and the database row (a busy machine
 * can pause the run there) would leave a run that captured nothing in the database.
 */
async function startSlowRun(scratch: string) {
  const runs = join(scratch, "runs");
  const probe = join(scratch, "slow.yaml");
  const toolPid = join(runs, "tool.pid");
  toolPids.push(toolPid);
  writeFileSync(probe, slowProbe(toolPid));
  // Made here so that it can be watched from before the run writes anything.
  mkdirSync(runs);
  const started = startCliIn(scratch, ["run", probe, "--runs", runs]);
  await untilInFolder(runs, () => existsSync(toolPid) && firstRequestCaptured(runs, started.child.pid!));
  return { ...started, runs };
}

function readRows(runs: string): RunRow[] {
  const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
  const rows = db.prepare(`SELECT status, request_count, pid, finished_at FROM runs`).all() as RunRow[];
  db.close();
  return rows;
}

describe("runs that die (issue 8)", () => {
  it("a run killed with SIGKILL is marked interrupted, with its captured requests, on the next open", async () => {
    const { child, done, runs } = await startSlowRun(tempDir("killed-run-"));
    process.kill(-child.pid!, "SIGKILL");
    expect((await done).signal).toBe("SIGKILL");
    expect(readRows(runs)).toMatchObject([{ status: "running", request_count: 0, pid: child.pid }]);
    // Killed before it could swap its folder in: what it captured stays in its live folder.
    expect(existsSync(join(liveRunDir(runs, "slow", child.pid), "requests.jsonl"))).toBe(true);
    expect(existsSync(join(runs, "slow"))).toBe(false);

    new RunDatabase(join(runs, "payload-probe.db")).close();
    const [row] = readRows(runs);
    expect(row).toMatchObject({ status: "interrupted", request_count: 1, pid: child.pid });
    expect(row!.finished_at).not.toBeNull();
    // Its locks name a dead process, so they are stale and the next run takes them.
    const lock = tryLock(join(runs, "slow.lock"));
    expect("release" in lock).toBe(true);
    if ("release" in lock) lock.release();
  });

  it("a run stopped by SIGTERM marks itself interrupted and releases its locks before it exits", async () => {
    const scratch = tempDir("terminated-run-");
    const { child, done, runs } = await startSlowRun(scratch);
    process.kill(child.pid!, "SIGTERM");
    const result = await done;
    expect(result.code).toBe(143);
    expect(readRows(runs)).toMatchObject([{ status: "interrupted", request_count: 1, pid: child.pid }]);
    expect(existsSync(join(runs, "slow.lock"))).toBe(false);
    // Closed as interrupted, the run is swapped into its folder like any other.
    expect(
      readFileSync(join(runs, "slow", "requests.jsonl"), "utf8")
        .trim()
        .split("\n"),
    ).toHaveLength(1);
    expect(existsSync(join(scratch, "ws", "root", "slow.lock"))).toBe(false);
    // The tool's sleep, in a process group of its own, was killed with the run.
    await untilGone(Number(readFileSync(join(runs, "tool.pid"), "utf8")));
  });
});

/** Whether a process has ended: no such pid, or a zombie its new parent has not reaped yet. */
function hasEnded(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /s, "")
      .startsWith("Z");
  } catch {
    return true;
  }
}

/** Waits for a process that is not our child to end (no event tells); the test's timeout bounds it. */
async function untilGone(pid: number): Promise<void> {
  while (!hasEnded(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}
