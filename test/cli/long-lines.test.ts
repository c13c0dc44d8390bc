/**
 * Issue 21: a run file holding one line longer than the line limit (a 1 GB file without a newline
 * read to exit 3 "Cannot create a string longer than…" after 14-33 s at 2 GB). Every command that
 * reads run files exits 2 with one line naming the file and the line, with the real limit: the
 * over-long file is sparse (MAX_LINE_BYTES + 1 NUL bytes, no newline), so it costs no disk.
 */
import { cpSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../src/files/jsonl.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { closedPort } from "../fixtures/closed-port.js";
import { sharedRun } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn } from "./scratch-cli.js";

let scratch: string;
let runs: string;

/** A copy of p1's run as `runs/<name>`, its `file` replaced by one line one byte over the limit. */
async function runWithLongLine(name: string, file: string): Promise<string> {
  const dir = join(runs, name);
  cpSync((await sharedRun("p1")).dir, dir, { recursive: true });
  writeFileSync(join(dir, file), "");
  truncateSync(join(dir, file), MAX_LINE_BYTES + 1);
  return join(dir, file);
}

beforeAll(() => {
  scratch = tempDir("long-lines-");
  runs = join(scratch, "runs");
});
afterAll(removeTempDirs);

/** The command's one line: exit 2, the file and the line named, the real limit, no stack trace. */
function expectRefusal(result: { code: number | null; stderr: string }, file: string, args: string[]): void {
  expect(result.stderr, args.join(" ")).not.toMatch(/internal error|\n\s+at /);
  expect(result.code, `${args.join(" ")}\n${result.stderr}`).toBe(2);
  expect(result.stderr.trim()).toBe(
    `payload-probe: ${file}: field "line 1": expected a line of at most 256 MiB, but it is longer (reading stopped there)`,
  );
}

/**
 * The command run in this process (test/fixtures/cli-in-process.ts: an error that is not the user's
 * is thrown there, as main.ts would exit 3 with it), its output what main.ts prints.
 */
async function expectRefused(file: string, ...args: string[]): Promise<void> {
  expectRefusal(await cliInScratch(scratch, ...args, "--runs", runs), file, args);
}

describe("a run file with a line over 256 MiB (issue 21)", () => {
  it("in requests.jsonl: report, diff, view, check --run and export otel exit 2 naming file and line", async () => {
    const requests = await runWithLongLine("long-requests", "requests.jsonl");
    cpSync((await sharedRun("p1")).dir, join(runs, "whole"), { recursive: true });
    // The built CLI once, as a child: main.ts's own line and exit code.
    const args = ["report", "long-requests", "--runs", runs];
    expectRefusal(cliIn(scratch, ...args), requests, args);
    await expectRefused(requests, "diff", "whole", "long-requests");
    await expectRefused(requests, "view", "long-requests", "--out", join(scratch, "view.html"));
    const baseline = join(scratch, "baseline.json");
    await expectRefused(requests, "check", "--run", join(runs, "long-requests"), "--baseline", baseline, "--update");
    await expectRefused(
      requests,
      "export",
      "otel",
      "long-requests",
      "--endpoint",
      `http://127.0.0.1:${await closedPort()}`,
    );
  });

  it("in payloads.jsonl: view, report --segments, profile import and export otel --content full", async () => {
    const payloads = await runWithLongLine("long-payloads", "payloads.jsonl");
    await expectRefused(payloads, "view", "long-payloads", "--out", join(scratch, "view.html"));
    await expectRefused(payloads, "report", "long-payloads", "--segments");
    await expectRefused(payloads, "profile", "import", "long-payloads", "--out", join(scratch, "profile.json"));
    const down = `http://127.0.0.1:${await closedPort()}`;
    await expectRefused(payloads, "export", "otel", "long-payloads", "--endpoint", down, "--content", "full");
  });

  it("in events.jsonl and mcp-wire.jsonl: export otel exits 2", async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    for (const file of ["events.jsonl", "mcp-wire.jsonl"]) {
      const path = await runWithLongLine(`long-${file.split(".")[0]}`, file);
      await expectRefused(path, "export", "otel", `long-${file.split(".")[0]}`, "--endpoint", down);
    }
  });
});
