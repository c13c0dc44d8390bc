/**
 * A team's own folder: a probe, its MCP server, a skill and baselines, none of them in the checkout,
 * run by the built CLI from that folder and through run.sh from elsewhere. Paths inside the probe
 * are taken from its folder, paths on the command line from the cwd, and nothing recorded depends
 * on what the folder is called. The built CLI runs as a child for the first command of each test
 * that depends on the cwd, for run.sh (once), and for the hint that names how the CLI was started;
 * the other commands, the hint's own arguments among them, run in this process
 * (test/fixtures/cli-in-process.ts), those that depend on the cwd with the same cwd as the child
 * would have, the rest with every path absolute.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { cliInScratch, cliInScratchAt } from "../fixtures/cli-in-process.js";
import { teamFolder } from "../fixtures/team-folder.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { type CliResult, MAIN, scratchEnv } from "./scratch-cli.js";

afterAll(removeTempDirs);

function cli(cwd: string, scratch: string, command: string[], ...args: string[]): CliResult {
  const result = spawnSync(command[0]!, [...command.slice(1), ...args], {
    cwd,
    env: scratchEnv(scratch),
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

const node = [process.execPath, MAIN];
const baseline = (team: string) => join(team, "probes", "baselines", "team-probe.json");

describe("a probe kept in a team's own folder", () => {
  it("gives the same baseline in two folders of different names, each checked from its own root", async () => {
    const scratch = tempDir("team-");
    const alpha = teamFolder(scratch, "alpha-team");
    const other = join(scratch, "a-much-longer-folder-name");
    cpSync(alpha, other, { recursive: true });
    for (const team of [alpha, other]) {
      const args = ["check", "--update", "--runs", join(scratch, "runs")];
      const updated = team === alpha ? cli(team, scratch, node, ...args) : await cliInScratchAt(team, scratch, ...args);
      expect(updated.code, updated.stderr).toBe(0);
      expect(existsSync(baseline(team))).toBe(true);
    }
    expect(readFileSync(baseline(other), "utf8")).toBe(readFileSync(baseline(alpha), "utf8"));
    expect(existsSync(join(PROJECT_ROOT, "probes", "baselines", "team-probe.json"))).toBe(false);
    // The staged skill's path, which enters the prompt, names no folder above the probe's.
    const records = readFileSync(join(scratch, "runs", "team-probe", "requests.jsonl"), "utf8");
    for (const name of ["alpha-team", "a-much-longer-folder-name"]) expect(records).not.toContain(name);
    const checked = await cliInScratchAt(other, scratch, "check", "--runs", join(scratch, "runs"));
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    // Priced as the probe's priceAs default though the probe is not among the shipped ones.
    const cost = await cliInScratch(scratch, "report", "team-probe", "--cost", "--runs", join(scratch, "runs"));
    expect(cost.code, cost.stderr).toBe(0);
    expect(cost.stdout).toContain("gpt-4.1");
    expect(cost.stdout + cost.stderr).not.toContain("price unknown");
  });

  it("runs by relative paths from another cwd, through node and through run.sh", async () => {
    const scratch = tempDir("team-cwd-");
    const team = teamFolder(scratch, "team");
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(elsewhere);
    const probe = relative(elsewhere, join(team, "probes", "team-probe.yaml"));
    const runs = ["--runs", "../runs"];
    const updated = cli(elsewhere, scratch, node, "check", probe, "--update", ...runs);
    expect(updated.code, updated.stderr).toBe(0);
    expect(existsSync(baseline(team))).toBe(true);
    const runSh = [join(PROJECT_ROOT, "run.sh")];
    const ran = cli(elsewhere, scratch, runSh, "run", probe, ...runs);
    expect(ran.code, ran.stderr).toBe(0);
    expect(existsSync(join(scratch, "runs", "team-probe", "requests.jsonl"))).toBe(true);
    // run.sh hands the CLI its arguments and cwd as they came: once through it is the proof.
    const checked = await cliInScratchAt(elsewhere, scratch, "check", probe, ...runs);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
  });

  it("the missing-baseline hint repeats --baseline, and following it writes there", async () => {
    const scratch = tempDir("team-hint-");
    teamFolder(scratch, "team");
    const args = ["check", "team/probes/team-probe.yaml", "--baseline", "team/baselines", "--runs", "runs"];
    const missing = cli(scratch, scratch, node, ...args);
    expect(missing.code).toBe(2);
    const hint = /run '([^']+)' to write it/.exec(missing.stdout + missing.stderr)?.[1];
    expect(hint).toBe(
      "node " +
        relative(scratch, MAIN) +
        " check team/probes/team-probe.yaml --baseline team/baselines --runs runs --update",
    );
    // The hint's command after `node <main>`, from the folder it was printed in.
    const followed = await cliInScratchAt(scratch, scratch, ...hint!.split(" ").slice(2));
    expect(followed.code, followed.stderr).toBe(0);
    expect(existsSync(join(scratch, "team", "baselines", "team-probe.json"))).toBe(true);
    expect(existsSync(join(scratch, "team", "probes", "baselines"))).toBe(false);
    expect((await cliInScratchAt(scratch, scratch, ...args)).code).toBe(0);
  });

  it("a probe kept outside probes/ is priced as its priceAs by report --cost, diff and check --run, from the run alone", async () => {
    const scratch = tempDir("team-price-");
    const team = teamFolder(scratch, "team");
    const checks = join(team, "checks");
    mkdirSync(checks);
    const probe = readFileSync(join(team, "probes", "team-probe.yaml"), "utf8").replace(
      "model:\n",
      "model:\n  priceAs: gpt-4.1-mini\n",
    );
    writeFileSync(join(checks, "team-probe.yaml"), probe);
    rmSync(join(team, "probes"), { recursive: true });
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(elsewhere);
    const runs = ["--runs", "../runs"];
    const absoluteRuns = ["--runs", join(scratch, "runs")];
    for (let i = 0; i < 2; i++) {
      const args = ["run", "../team/checks/team-probe.yaml", ...runs];
      const ran = i === 0 ? cli(elsewhere, scratch, node, ...args) : await cliInScratchAt(elsewhere, scratch, ...args);
      expect(ran.code, ran.stderr).toBe(0);
    }
    const priced = (result: { code: number | null; stdout: string; stderr: string }) => {
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout + result.stderr).not.toContain("price unknown");
      return result.stdout;
    };
    const report = priced(await cliInScratch(scratch, "report", "team-probe", "--cost", ...absoluteRuns));
    expect(report).toContain("priced: qwen3.8-flash as gpt-4.1-mini");
    const total = /total: predicted (\$[\d.]+)/.exec(report)![1];
    const diff = priced(await cliInScratch(scratch, "diff", "team-probe@2", "team-probe", "--cost", ...absoluteRuns));
    expect(diff).toContain("A priced as gpt-4.1-mini; B as gpt-4.1-mini");
    expect(diff).toMatch(new RegExp(`total {2}A \\${total} {2}B \\${total}`));
    const gate = ["check", "--run", "team-probe", "--baseline", join(team, "agent.json"), ...absoluteRuns];
    priced(await cliInScratch(scratch, ...gate, "--update"));
    priced(await cliInScratch(scratch, ...gate, "--budget-dollars", "1", "--markdown", join(scratch, "check.md")));
    expect(readFileSync(join(scratch, "check.md"), "utf8")).toContain(`- team-probe: ${total} of $1.00`);
  });
});
