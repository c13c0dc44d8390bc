/**
 * Issue 37, "a pull request that adds a timestamp in the system prompt fails with one line naming
 * it": a team's own agent (the official openai client, a real child process) runs against `mock` of
 * the team's probe, its run is gated by `check --run` against the baseline written before the pull
 * request, and the pull request's real timestamp, a new one in each request's system prompt, fails
 * the gate by default with its first line naming the cache prefix break.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { startCli } from "../capture/http-harness.js";
import { teamFolder } from "../fixtures/team-folder.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn } from "./scratch-cli.js";

afterAll(removeTempDirs);

const AGENT = join(PROJECT_ROOT, "test", "fixtures", "team", "report-agent.mjs");

/** The team's agent against a mock of its probe, from start to the mock's closed run. */
async function agentSession(team: string, runs: string, ...agentArgs: string[]): Promise<void> {
  const mock = await startCli(["mock", join(team, "probes", "team-probe.yaml"), "--runs", runs]);
  try {
    const agent = spawnSync(process.execPath, [AGENT, ...agentArgs], {
      env: { ...process.env, OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "unused" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(agent.status, agent.stderr).toBe(0);
  } finally {
    expect(await mock.stop()).toBe(0);
  }
}

describe("a team's agent gated by check --run", () => {
  it("a pull request that puts the time in the system prompt fails with one line naming the prefix break", async () => {
    const scratch = tempDir("team-agent-");
    const team = teamFolder(scratch, "team");
    const runs = join(scratch, "runs");
    const run = join(runs, "team-probe-mock");
    const gate = ["check", "--run", run, "--baseline", join(team, "baselines", "agent.json")];

    await agentSession(team, runs);
    const updated = cliIn(scratch, ...gate, "--update");
    expect(updated.code, updated.stdout + updated.stderr).toBe(0);
    const held = cliIn(scratch, ...gate);
    expect(held.code, held.stdout + held.stderr).toBe(0);

    await agentSession(team, runs, "--timestamp");
    const failed = cliIn(scratch, ...gate);
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stdout.split("\n")[0]).toMatch(
      /^team-probe-mock: system \+1 line, cache prefix broken in system \(request 2\), \+\d+ tokens per request/,
    );
  });
});
