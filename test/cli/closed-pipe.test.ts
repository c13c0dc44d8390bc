/**
 * A reader that leaves early (`payload-probe report … | head`) must not turn the output it no longer
 * reads into a stack trace and a failure: the command ends with its own exit code, quietly.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { stopAfterTest } from "../fixtures/children.js";
import { sharedRun } from "../fixtures/shared-runs.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "closed-pipe-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The write end of a FIFO whose reader has already closed it: every write a child makes to it fails
 * with EPIPE, whatever the child's timing (no race with a reader that leaves while it writes).
 */
function pipeWithNoReader(name: string): number {
  const path = join(scratch, name);
  expect(spawnSync("mkfifo", [path]).status).toBe(0);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  closeSync(reader);
  return writer;
}

/** The built CLI with `args`, its stdout a pipe nobody reads; its exit code and what it wrote to stderr. */
async function withClosedStdout(name: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const stdout = pipeWithNoReader(name);
  try {
    const child = stopAfterTest(
      spawn(process.execPath, [join(PROJECT_ROOT, "dist", "cli", "main.js"), ...args], {
        stdio: ["ignore", stdout, "pipe"],
      }),
    );
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", (exit) => resolve(exit)));
    return { code, stderr };
  } finally {
    closeSync(stdout);
  }
}

test("report to a pipe whose reader left ends with its own exit code and no stack trace", async () => {
  const run = await sharedRun("p1");
  expect(await withClosedStdout("report", ["report", run.dir])).toEqual({ code: 0, stderr: "" });
});

test("show --json to a pipe whose reader left ends with its own exit code and no stack trace", async () => {
  const run = await sharedRun("p1");
  expect(await withClosedStdout("show", ["show", run.dir, "1", "--json"])).toEqual({ code: 0, stderr: "" });
});
