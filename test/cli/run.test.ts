/**
 * `payload-probe run` and the CLI's help and usage. The built CLI runs as a child where its process is
 * what is checked: p1's run (the smoke test of run's output and of its `see it` hint, which names how
 * the CLI was started), --help, --version and usage errors (main.ts's own), a script that runs out,
 * and the first refusal of each kind of bad probe (exit 2 and one paragraph without a stack, as a
 * process shows it). The other bad probes run in this process (test/fixtures/cli-in-process.ts): the
 * same message and exit code, and an error that is not the user's is thrown there instead of printed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SAFE_NAME_RULE } from "../../src/files/safe-path.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");

/** The view page's browser code is built into its two bundles (scripts/bundle.mjs); the rest file by file by tsc. */
const BROWSER_SOURCES = join(PROJECT_ROOT, "src", "analysis", "view", "browser");
const builtFileOf = (source: string): string =>
  source.startsWith(`${BROWSER_SOURCES}/`)
    ? join(PROJECT_ROOT, "dist", "view", "page.js")
    : join(PROJECT_ROOT, "dist", relative(join(PROJECT_ROOT, "src"), source)).replace(/\.ts$/, ".js");

/** The CLI tests run what users run, the compiled dist/; a source newer than its build makes them meaningless. */
function assertBuildIsCurrent(dir = join(PROJECT_ROOT, "src")): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) assertBuildIsCurrent(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      const built = builtFileOf(path);
      let stale: boolean;
      try {
        stale = statSync(built).mtimeMs < statSync(path).mtimeMs;
      } catch {
        stale = true;
      }
      if (stale)
        throw new Error(
          `${built} is missing or older than ${path}; run \`npx tsc -p tsconfig.json\` (or ./run.sh test) first`,
        );
    }
  }
}

afterEach(removeTempDirs);

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}
/** How a test runs `payload-probe <args>`: as a child (`cli`) or in this process (`inProcess`). */
type Cli = (...args: string[]) => Promise<Result> | Result;

/** `payload-probe <args>` as a child process; its probe workspace and run outputs live in a temp folder. */
function cli(...args: string[]): Result {
  const base = tempDir("cli-test-");
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TMPDIR: base, PAYLOAD_PROBE_WORKSPACE: join(base, "workspace") },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `cli` in this process (test/fixtures/cli-in-process.ts), its workspace and temp folder in a temp
 * folder too: an error that is not the user's is thrown where the child would print its stack.
 */
const inProcess = (...args: string[]): Promise<Result> => cliInScratch(tempDir("cli-test-"), ...args);

/** `run <probe>` into a temp runs folder, by `how` (the built CLI unless told). */
const runProbeCli = (probe: string, how: Cli = cli) => how("run", probe, "--runs", join(tempDir("cli-test-"), "runs"));

/** A copy of p1 with one edit, in a temp folder, passed by path (its MCP config named by its absolute path). */
function p1With(from: string, to: string): string {
  const text = readFileSync(join(PROJECT_ROOT, "probes/p1.yaml"), "utf8").replace(
    "../fixtures/",
    join(PROJECT_ROOT, "fixtures/"),
  );
  if (!text.includes(from)) throw new Error(`p1.yaml no longer contains ${JSON.stringify(from)}`);
  const path = join(tempDir("cli-test-"), "p1-changed.yaml");
  writeFileSync(path, text.replace(from, to));
  return path;
}

/** One paragraph for the user: no blank line inside, no stack frames. */
function expectOneParagraph(stderr: string): void {
  expect(stderr.trim()).not.toBe("");
  expect(stderr.trim()).not.toContain("\n\n");
  expect(stderr).not.toMatch(/\n\s+at /);
}

beforeAll(() => assertBuildIsCurrent());

describe("payload-probe run (issue 2: what it must show)", () => {
  it("run p1 exits 0 and prints one table row per request and that the expect block held", async () => {
    const { code, stdout, stderr } = await runProbeCli("p1");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/seq.*tools.*tokens t\/s\/m = total.*body.*roles.*markers.*prefix/);
    const rows = stdout.split("\n").filter((line) => /^│ +\d+ /.test(line));
    expect(rows).toHaveLength(4);
    expect(rows.every((row) => row.includes("[read, mcp]"))).toBe(true);
    expect(stdout).toContain("expect: held (4 requests)");
    // Priced with no flag: p1's scripted model as gpt-4.1 (its API's default model.priceAs).
    expect(stdout).toMatch(/^cost: \$0\.\d+ predicted as gpt-4\.1 \(@pydantic\/genai-prices 0\.1\.8\)$/m);
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(
      /^see it: node dist\/cli\/main\.js report \S+ · show \S+ 1 · view \S+$/,
    );
  });

  it("a copy of p1 whose expectation disagrees exits 1 and names the request and the field", async () => {
    const { code, stdout } = await runProbeCli(
      p1With("markers.result: [0, 0, 0, 1]", "markers.result: [0, 0, 0, 2]"),
      inProcess,
    );
    expect(code).toBe(1);
    expect(stdout).toContain("expect: FAILED (1)");
    expect(stdout).toContain("request 4: markers.result expected 2, got 1");
  });

  it("a copy of p1 whose script runs out exits 1 and names the request", async () => {
    const { code, stderr } = await runProbeCli(p1With("    - text: DONE\n", ""));
    expect(code).toBe(1);
    expect(stderr).toContain("scripted model: loop request 4 was made but the probe's model.script has only 3 step(s)");
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  for (const [i, [file, field]] of (
    [
      ["bad-yaml.yaml", "expected valid YAML"],
      ["unknown-field.yaml", 'field "agent.tols"'],
      ["wrong-type.yaml", 'field "expect.requests"'],
    ] as const
  ).entries()) {
    it(`a malformed probe (${file}) exits 2 with one paragraph naming the file and the field`, async () => {
      const path = join(PROJECT_ROOT, "fixtures/bad", file);
      const { code, stdout, stderr } = await runProbeCli(path, i === 0 ? cli : inProcess);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expectOneParagraph(stderr);
      expect(stderr).toContain(path);
      expect(stderr).toContain(field);
    });
  }

  for (const [i, [what, probe, config, field]] of (
    [
      [
        "whose MCP config is missing exits 2 naming the config",
        "missing-config.yaml",
        "no-such-mcp-config.json",
        "agent.mcp.config",
      ],
      [
        "whose MCP server command does not exist exits 2 naming the server and the config file",
        "missing-command.yaml",
        "mcp-missing-command.json",
        "mcpServers.ghost.command",
      ],
    ] as const
  ).entries()) {
    it(`a probe ${what}`, async () => {
      const { code, stderr } = await runProbeCli(join(PROJECT_ROOT, "fixtures/bad", probe), i === 0 ? cli : inProcess);
      expect(code).toBe(2);
      expectOneParagraph(stderr);
      expect(stderr).toContain(join(PROJECT_ROOT, "fixtures/bad", config));
      expect(stderr).toContain(`field "${field}"`);
    });
  }
});

/** A probe file with these lines, in a temp folder outside the project. */
function probeFile(name: string, content: string | Buffer): string {
  const path = join(tempDir("cli-test-"), name);
  writeFileSync(path, content);
  return path;
}

const SCRIPT = 'prompts: ["hi"]\nmodel:\n  script: [{text: DONE}]\n';

describe("bad probe files are input errors, exit 2, and never echo what lies outside the project (issue 8)", () => {
  /** Runs `path` in this process, or by `how`, and holds it to exit 2 with one paragraph naming it and `expected`. */
  async function expectInputError(path: string, ...expected: string[]): Promise<string> {
    return expectInputErrorBy(inProcess, path, ...expected);
  }

  async function expectInputErrorBy(how: Cli, path: string, ...expected: string[]): Promise<string> {
    const { code, stdout, stderr } = await runProbeCli(path, how);
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expectOneParagraph(stderr);
    expect(stderr).toContain(path);
    for (const text of expected) expect(stderr).toContain(text);
    return stderr;
  }

  for (const [i, name] of ["../victim", ".", "..", "a/b", "/abs", "a\\0b"].entries()) {
    it(`name ${JSON.stringify(name)} is refused before anything is created or deleted`, async () => {
      const dir = tempDir("cli-test-");
      mkdirSync(join(dir, "victim"));
      writeFileSync(join(dir, "victim", "sentinel"), "keep");
      const path = join(dir, "bad-name.yaml");
      writeFileSync(path, `name: "${name}"\n${SCRIPT}`);
      const how = i === 0 ? cli : inProcess;
      const { code, stdout, stderr } = await how("run", path, "--runs", join(dir, "runs"));
      expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
      expectOneParagraph(stderr);
      expect(stderr).toContain(`${path}: field "name": expected ${SAFE_NAME_RULE}`);
      expect(existsSync(join(dir, "victim", "sentinel"))).toBe(true);
    });
  }

  it("a mapping as a scripted text is refused, not sent as [object Object]", async () => {
    const path = probeFile("text-object.yaml", 'name: obj\nprompts: ["hi"]\nmodel:\n  script: [{text: {a: 1}}]\n');
    await expectInputError(path, 'field "model.script[0].text": expected a string');
  });

  it("a binary file is named as not YAML text, without its bytes", async () => {
    const bytes = Buffer.alloc(1700, 0xff);
    bytes.write("name: x\n\u0000\u0001", 0, "latin1");
    const stderr = await expectInputError(
      probeFile("binary.yaml", bytes),
      "expected YAML text, but the file holds binary data",
    );
    expect(stderr.length).toBeLessThan(300);
  });

  it("a file outside the project that is not a probe is never quoted (run /etc/shadow)", async () => {
    const secret = "root:$6$SECRET-HASH-7731:20228:0:99999:7:::";
    const shadow = probeFile("shadow", `${secret}\nname: x\n${SCRIPT}`);
    const link = join(tempDir("cli-test-"), "link.yaml");
    symlinkSync(shadow, link);
    // The file itself through the built CLI: what a process prints never holds the secret either.
    for (const [how, path] of [
      [cli, shadow],
      [inProcess, link],
    ] as const) {
      const stderr = await expectInputErrorBy(how, path, 'field "<key at line 1>": unknown field');
      expect(stderr).not.toContain("SECRET");
    }
  });

  it("a YAML syntax error outside the project gives reason and position, not the offending line", async () => {
    const stderr = await expectInputError(
      probeFile("syntax.yaml", 'name: x\nprompts: ["hi"\nmodel: SECRET-LINE-7731\n'),
      "expected valid YAML (bad indent at line 3, column 1)",
    );
    expect(stderr).not.toContain("SECRET");
  });
});

describe("help and usage", () => {
  it("payload-probe --help lists the commands and exits 0", () => {
    const { code, stdout } = cli("--help");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: payload-probe <command> [options]");
    // Where to look further names the command as it was started: here `node dist/cli/main.js` (usage.test.ts: ./run.sh).
    expect(stdout).toContain("Run 'node dist/cli/main.js <command> --help' for a command's options");
    expect(stdout).toMatch(/^\s+run\s+run probes/m);
  });

  it("payload-probe run --help shows the run command's options and exits 0", () => {
    const { code, stdout } = cli("run", "--help");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: payload-probe run <probe...|all> [options]");
    expect(stdout).toContain("--no-db");
  });

  it("--version (or -V) prints the package's version and exits 0", () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const result = cli(flag);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`payload-probe ${version}\n`);
    }
  });

  it("no command, an unknown command or an unknown flag is a usage error (exit 2)", () => {
    expect(cli().code).toBe(2);
    const unknown = cli("frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const flag = cli("run", "p1", "--no-such-flag");
    expect(flag.code).toBe(2);
    expectOneParagraph(flag.stderr);
    expect(flag.stderr).toContain("dist/cli/main.js run --help");
  });
});
