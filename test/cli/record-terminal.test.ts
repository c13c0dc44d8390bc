/**
 * `record` at a real terminal: util-linux's `script` gives it a pseudo-terminal, as a user's shell
 * has, and the test types into it. The command must see the terminal as its own (stdin, stdout and
 * stderr), record must keep its per-request lines off it, and a Ctrl-C typed there must reach the
 * command from the terminal alone. The terminal sends it to the whole foreground group, record
 * included; record passing it on too would read as a second keypress, and would count as the first
 * signal passed on, so the next one (a SIGTERM) would kill the command outright instead of reaching
 * it. Two copies of one Ctrl-C may merge in the kernel; that SIGTERM tells either way. Nothing waits
 * on a clock: each step waits for what the command writes to a file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { atTerminal, hasScript } from "../fixtures/at-terminal.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { MAIN, scratchEnv } from "./scratch-cli.js";

const CLIENT = join(PROJECT_ROOT, "test", "fixtures", "record", "sdk-client.mjs");
if (!hasScript) console.log("record terminal test skipped: util-linux's script is not on PATH");

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

async function mockIn(runs: string): Promise<MockServer> {
  const script = [{ text: "Scripted answer one." }];
  const mock = await startMockServer({ name: "tty", markers: {}, script }, { runsDir: runs, runName: "upstream" });
  closers.push(() => mock.close());
  return mock;
}

describe("record at a terminal", () => {
  it.skipIf(!hasScript)(
    "hands the terminal to the command, keeps request lines off it, and leaves a typed Ctrl-C to the terminal",
    async () => {
      const scratch = tempDir("record-tty-");
      const runs = join(scratch, "runs");
      const mock = await mockIn(runs);
      const file = join(scratch, "terminal");
      const upstream = mock.baseUrl.replace(/\/v1$/, "");
      const record = [process.execPath, MAIN, "record", "--upstream", upstream, "--runs", runs, "--name", "tty"];
      const env = { ...scratchEnv(scratch), OPENAI_API_KEY: "sk-record-tty-test", ANTHROPIC_API_KEY: "x" };
      const terminal = atTerminal([...record, "--", "node", CLIENT, "terminal", file], scratch, env);
      const written = () => readFileSync(file, "utf8");

      await untilInFolder(scratch, () => written().includes("tty "));
      const [, tty, parent] = /^tty (.*) parent (\d+)\n$/.exec(written())!;
      expect(tty).toBe("true true true");
      terminal.type("\x03");
      await untilInFolder(scratch, () => written().includes("SIGINT\n"));
      // Its parent is record, which passes a SIGTERM on as the first signal it passed.
      process.kill(Number(parent), "SIGTERM");
      const { code, screen } = await terminal.done;
      expect(written().split("\n").slice(1)).toEqual(["SIGINT", "SIGTERM after 1", ""]);
      expect(code, screen).toBe(143);
      // The summary is there, the per-request line (`#1 openai-completions …`) is not.
      expect(screen).toMatch(/record: 1 request\(s\): 1 recorded/);
      expect(screen).not.toMatch(/#1 openai-completions/);
    },
    60_000,
  );
});
