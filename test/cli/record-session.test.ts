/**
 * Issue 35: `kill -9` of record left its session folder (a pi models.json with the user's key) and the
 * command running, adopted by pid 1, and a daemon the command started kept running from the removed
 * folder. What a session started ends with record however record ends; what a dead session left is
 * cleared by the next record, and nothing else is touched.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { processStart } from "../../src/processes/process-identity.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn, startCliIn } from "./scratch-cli.js";

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  removeTempDirs();
});

/** The kernel's flag on a process that has begun to exit (include/linux/sched.h). */
const PF_EXITING = 0x4;

/**
 * Running: neither a zombie nor on its way to one. A dying process closes its files (the pipes a test
 * waits on) before its state turns Z, but only after the kernel set PF_EXITING (/proc/<pid>/stat
 * field 9): without that flag, a pipe's end could be seen while the state still said R.
 */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] !== "Z" && (Number(fields[9 - 3]) & PF_EXITING) === 0;
  } catch {
    return false;
  }
}

/** A command that starts a daemon (a group of its own, as Codex's app-server) and runs until ended. */
const WITH_DAEMON = `
const { spawn } = require("node:child_process");
const daemon = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)"], { detached: true, stdio: ["ignore", "inherit", "inherit"] });
console.log(JSON.stringify({ session: process.env.PAYLOAD_PROBE_RECORD_SESSION, pids: [process.pid, daemon.pid] }));
setInterval(() => {}, 60000);`;

describe("record's session", () => {
  it("kill -9 of record ends the command and the daemon it started and removes the session folder", async () => {
    const scratch = tempDir("record-session-");
    const record = startCliIn(scratch, [
      "record",
      "--no-db",
      "--runs",
      join(scratch, "runs"),
      "--",
      "node",
      "-e",
      WITH_DAEMON,
    ]);
    const lines = createInterface({ input: record.child.stdout! })[Symbol.asyncIterator]();
    const { session, pids } = JSON.parse((await lines.next()).value as string) as { session: string; pids: number[] };
    started.push(...pids);
    expect(existsSync(session)).toBe(true);
    expect(session.startsWith(join(scratch, "payload-probe-record-"))).toBe(true);

    process.kill(record.child.pid!, "SIGKILL");
    // Its stdout and stderr close once every process holding them has ended: the command, the daemon
    // and the watch that cleans up.
    await record.done;
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(session)).toBe(false);
  });

  it("the next record clears what a dead session left, and only that", () => {
    const scratch = tempDir("record-leftovers-");
    const exited = spawnSync(process.execPath, ["-e", ""]).pid!;
    const session = (name: string, owner: string | null) => {
      const path = join(scratch, name);
      mkdirSync(path);
      writeFileSync(join(path, "models.json"), '{"apiKey":"sk-left-behind"}');
      if (owner !== null) writeFileSync(join(path, "owner"), owner);
      return path;
    };
    session("payload-probe-record-dead01", `${exited} \n`);
    session("payload-probe-record-live01", `${process.pid} ${processStart(process.pid)}\n`);
    session("payload-probe-record-noowner", null);
    const elsewhere = session("elsewhere", `${exited} \n`);
    symlinkSync(elsewhere, join(scratch, "payload-probe-record-link01"));

    const result = cliIn(scratch, "record", "--no-db", "--runs", join(scratch, "runs"), "--", "node", "-e", "");
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(scratch).sort()).toEqual([
      "elsewhere",
      "payload-probe-record-link01",
      "payload-probe-record-live01",
      "payload-probe-record-noowner",
      "runs",
    ]);
    expect(readdirSync(elsewhere).sort()).toEqual(["models.json", "owner"]);
  });
});
