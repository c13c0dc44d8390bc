/**
 * The first minutes with the CLI: a usage error is one line on stderr saying what is wrong and where
 * the help is (exit 2, nothing on stdout), typos get the nearest name, and every hint names the
 * command the user started payload-probe with.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { readInvokedAs } from "../../src/text/invoked-as.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");
/** What works from the checkout when the CLI is started as `node dist/cli/main.js`. */
const NODE_CLI = "node dist/cli/main.js";

function spawnIn(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const scratch = tempDir("usage-");
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, TMPDIR: scratch, PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws"), ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
const cli = (...args: string[]) => spawnIn(PROJECT_ROOT, process.execPath, [MAIN, ...args]);
const runSh = (...args: string[]) => spawnIn(PROJECT_ROOT, "./run.sh", args);

/** A usage error: exit 2, nothing on stdout, exactly `line` on stderr. */
function expectUsageError(result: ReturnType<typeof cli>, line: string): void {
  expect(result.stderr).toBe(`${line}\n`);
  expect(result.stdout).toBe("");
  expect(result.code).toBe(2);
}

describe("a missing or extra positional is one line naming it", () => {
  it.each([
    [["show", "p1"], "show: missing <seq>"],
    [["show"], "show: missing <seq>"],
    [["diff", "p1"], "diff: missing <runB>"],
    [["export", "otel"], "export: missing <run...>"],
    [["mock"], "mock: missing <probe>"],
    [["run"], "run: missing <probe...|all>"],
    [["report", "p1", "p2"], 'report: unexpected "p2" (it takes [<run>])'],
    [["show", "p1", "1", "2"], 'show: unexpected "2" (it takes [<run>] <seq>)'],
    [["proxy", "extra"], 'proxy: unexpected "extra" (it takes no arguments)'],
  ])("%j", (args, problem) => {
    const command = args[0]!;
    expectUsageError(cli(...args), `payload-probe: ${problem}. See '${NODE_CLI} ${command} --help'.`);
  });

  it("no command at all", () => {
    expectUsageError(cli(), `payload-probe: missing <command>. See '${NODE_CLI} --help'.`);
  });
});

describe("flags the command does not take get our own sentence", () => {
  it.each([
    [["report", "p1", "--jsno"], "report: unknown flag --jsno; did you mean --json?"],
    [["report", "p1", "--frobnicate"], "report: unknown flag --frobnicate"],
    [["report", "p1", "-x"], "report: unknown flag -x"],
    [["report", "p1", "--json=yes"], "report: --json takes no value"],
    [["report", "p1", "--model"], "report: --model needs a value"],
    [["report", "p1", "--model", "--json"], 'report: --model needs a value (write --model=--json if "--json" is it)'],
  ])("%j", (args, problem) => {
    // A problem that ends in its own question mark takes no full stop after it.
    const end = problem.endsWith("?") ? "" : ".";
    expectUsageError(cli(...args), `payload-probe: ${problem}${end} See '${NODE_CLI} report --help'.`);
  });
});

describe("an unknown command or probe names the nearest", () => {
  it("a mistyped command", () => {
    expectUsageError(
      cli("reprot", "p1"),
      `payload-probe: unknown command "reprot"; did you mean report? See '${NODE_CLI} --help'.`,
    );
  });

  it("a word near nothing says only that it is unknown", () => {
    expectUsageError(cli("frobnicate"), `payload-probe: unknown command "frobnicate". See '${NODE_CLI} --help'.`);
  });

  it("./run.sh p11 names the probe p1 and how run.sh runs it", () => {
    expectUsageError(
      runSh("p11"),
      `payload-probe: unknown command "p11"; did you mean the probe p1 (./run.sh p1)? See './run.sh --help'.`,
    );
  });

  it("started without run.sh, the probe's command is `run p1`", () => {
    expectUsageError(
      cli("p11"),
      `payload-probe: unknown command "p11"; did you mean the probe p1 (${NODE_CLI} run p1)? See '${NODE_CLI} --help'.`,
    );
  });

  it("run and mock name the nearest probe for a name under probes/ that has no file", () => {
    for (const command of ["run", "mock"]) {
      const result = cli(command, "p11");
      expect(result.stderr).toBe(`payload-probe: ${command}: no probe "p11" in probes/; did you mean p1?\n`);
      expect(result.code).toBe(2);
    }
  });
});

describe("hints name the command the user started payload-probe with", () => {
  const seeIt = (stdout: string) => stdout.trimEnd().split("\n").at(-1);

  it("through ./run.sh from the checkout: ./run.sh report …", () => {
    const runs = tempDir("usage-runs-");
    const result = runSh("p1", "--runs", runs);
    expect(result.code).toBe(0);
    expect(seeIt(result.stdout)).toBe(
      `see it: ./run.sh report ${join(runs, "p1")} · show ${join(runs, "p1")} 1 · view ${join(runs, "p1")}`,
    );
  });

  it("through ./run.sh, --help ends naming ./run.sh", () => {
    const result = runSh("--help");
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\s+/g, " ")).toContain("Run './run.sh <command> --help' for a command's options");
    expect(result.stdout).not.toContain("'payload-probe <command> --help'");
  });

  it("through run.sh from another folder: the path to run.sh from there", () => {
    const parent = dirname(PROJECT_ROOT);
    const result = spawnIn(parent, join(basename(PROJECT_ROOT), "run.sh"), ["show", "p1"]);
    expectUsageError(
      result,
      `payload-probe: show: missing <seq>. See '${relative(parent, join(PROJECT_ROOT, "run.sh"))} show --help'.`,
    );
  });

  it("through node dist/cli/main.js: that command", () => {
    const runs = tempDir("usage-runs-");
    const result = cli("run", "p1", "--runs", runs);
    expect(result.code).toBe(0);
    expect(seeIt(result.stdout)).toMatch(new RegExp(`^see it: ${NODE_CLI} report `));
  });

  it("run.sh's name reaches the CLI only, not what the CLI starts", () => {
    const env: NodeJS.ProcessEnv = { PAYLOAD_PROBE_INVOKED_AS: "../my checkout/run.sh" };
    expect(readInvokedAs(env, MAIN)).toBe("'../my checkout/run.sh'");
    expect(env.PAYLOAD_PROBE_INVOKED_AS).toBeUndefined();
    expect(readInvokedAs({}, "/usr/local/bin/payload-probe")).toBe("payload-probe");
  });
});

describe("installed as payload-probe on PATH", () => {
  it("npm install -g into a prefix links the checkout, offline, and payload-probe answers as itself", () => {
    const prefix = tempDir("usage-prefix-");
    const install = spawnSync("npm", ["install", "-g", "--offline", "--prefix", prefix, PROJECT_ROOT], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(install.status, install.stderr).toBe(0);
    const bin = join(prefix, "bin");
    const onPath = (...args: string[]) =>
      spawnIn(tempDir("usage-cwd-"), "payload-probe", args, { PATH: `${bin}:${process.env.PATH}` });
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    const answer = onPath("--version");
    expect(answer.stdout).toBe(`payload-probe ${version}\n`);
    expect(answer.code).toBe(0);
    expectUsageError(onPath("show", "p1"), "payload-probe: show: missing <seq>. See 'payload-probe show --help'.");
  });
});
