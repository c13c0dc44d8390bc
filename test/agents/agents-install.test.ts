/**
 * `payload-probe agents install`, and pi found on PATH or in the cache. The built CLI runs as a child
 * for the failed installs (exit 2, one line, no stack), usage errors, a hint that names how the CLI
 * was started, and the JSON of agents already there (the smoke test); pi already there, and a run on
 * pi, run in this process (test/fixtures/cli-in-process.ts).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent, NPM_AGENTS } from "../../src/agents/npm-agents.js";
import { findPi, PI_PINS } from "../../src/agents/pi-install.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { closedPort } from "../fixtures/closed-port.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");

function cli(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: PROJECT_ROOT,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** A `pi` on PATH that answers `--version`, inside a package folder named as pi's. */
function stubPiOnPath(version: string): { bin: string; packageDir: string } {
  const base = tempDir("pi-path-");
  const packageDir = join(base, "lib", "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(join(packageDir, "dist"), { recursive: true });
  writeFileSync(join(packageDir, "package.json"), JSON.stringify({ name: "@earendil-works/pi-coding-agent", version }));
  const cli = join(packageDir, "dist", "cli.js");
  writeFileSync(cli, `#!/bin/sh\necho ${version}\n`);
  chmodSync(cli, 0o755);
  mkdirSync(join(base, "bin"));
  symlinkSync(cli, join(base, "bin", "pi"));
  return { bin: join(base, "bin"), packageDir };
}

/** The adapter as an adapter-only install leaves it in the cache (its manifest is what is read). */
function adapterInCache(cacheHome: string, version: string): void {
  const dir = join(cacheHome, "payload-probe", "agents", `pi-mcp-adapter-${PI_PINS.mcpAdapter}`);
  const adapter = join(dir, "node_modules", "pi-mcp-adapter");
  mkdirSync(adapter, { recursive: true });
  writeFileSync(join(adapter, "package.json"), JSON.stringify({ version, pi: { extensions: ["./index.ts"] } }));
  writeFileSync(join(dir, "payload-probe-install.json"), "{}\n");
}

describe("agents install pi", () => {
  it("says the registry could not be reached (exit 2, no stack) and leaves no half-made install", async () => {
    const cacheHome = tempDir("pi-cache-");
    const env = {
      ...process.env,
      PATH: process.env.PATH,
      XDG_CACHE_HOME: cacheHome,
      npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
      npm_config_fetch_retries: "0",
      npm_config_cache: join(cacheHome, "npm"),
    };
    const { code, stderr } = cli(["agents", "install", "pi"], env);
    expect(code).toBe(2);
    expect(stderr).toContain("agents: installing Node");
    expect(stderr).toMatch(/the npm registry could not be reached, so pi was not installed/);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(join(cacheHome, "payload-probe", "agents"))).toEqual([]);
  });

  it("a pi on PATH of the pinned version is used (with the cached adapter); another version is not", () => {
    const cacheHome = tempDir("pi-cache-");
    adapterInCache(cacheHome, PI_PINS.mcpAdapter);
    const good = stubPiOnPath(PI_PINS.pi);
    const found = findPi({ XDG_CACHE_HOME: cacheHome, PATH: `${good.bin}:/usr/bin:/bin` });
    expect(found).toMatchObject({ source: "path", program: join(good.bin, "pi"), programArgs: [] });
    expect(found?.packageDir).toBe(good.packageDir);
    expect(found?.mcpAdapter).toMatch(/pi-mcp-adapter[/\\]index\.ts$/);

    const old = stubPiOnPath("0.84.0");
    expect(findPi({ XDG_CACHE_HOME: cacheHome, PATH: `${old.bin}:/usr/bin:/bin` })).toBeUndefined();
  });

  it("without pi, --agent pi is bad usage naming the install command (exit 2), and nothing runs", () => {
    const runs = tempDir("pi-none-");
    const env = { ...process.env, XDG_CACHE_HOME: tempDir("pi-cache-"), PATH: "/usr/bin:/bin" };
    const { code, stderr } = cli(["run", "p1", "--agent", "pi", "--runs", runs], env);
    expect(code).toBe(2);
    expect(stderr).toContain("the real pi is not installed; install it with 'node dist/cli/main.js agents install pi'");
    expect(readdirSync(runs)).toEqual([]);
  });

  it.skipIf(!findPi())(
    "a probe saying agent.kind: pi runs on pi by default, into <probe>@pi",
    async () => {
      const dir = tempDir("pi-kind-");
      const file = join(dir, "kind-pi.yaml");
      writeFileSync(
        file,
        "name: kind-pi\nagent: { kind: pi, noTools: true, noSkills: true }\nmodel: { script: [ { text: DONE } ] }\nprompts: [hello]\nexpect: { requests: 1 }\n",
      );
      const env = { PAYLOAD_PROBE_WORKSPACE: join(dir, "ws") };
      const { status, stdout } = await runInProcess(env, "run", file, "--runs", join(dir, "runs"), "--no-db");
      expect(status).toBe(0);
      expect(stdout).toContain("kind-pi on pi");
      expect(existsSync(join(dir, "runs", "kind-pi@pi", "requests.jsonl"))).toBe(true);
    },
    120_000,
  );

  it.skipIf(!findPi())("run again with pi installed: nothing to do, exit 0", async () => {
    const { status, stderr, stdout } = await runInProcess({}, "agents", "install", "pi");
    expect(status).toBe(0);
    expect(stderr).toContain(`pi ${PI_PINS.pi} is already there`);
    expect(stdout).toContain(`pi ${PI_PINS.pi}`);
    expect(existsSync(findPi()!.packageDir)).toBe(true);
  });
});

/** An environment whose npm registry is a closed port and whose cache is a fresh folder. */
async function offlineEnv() {
  const cacheHome = tempDir("agents-cache-");
  const env = {
    ...process.env,
    XDG_CACHE_HOME: cacheHome,
    npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
    npm_config_fetch_retries: "0",
    npm_config_cache: join(cacheHome, "npm"),
  };
  return { env, agentsDir: join(cacheHome, "payload-probe", "agents") };
}

describe("agents install claude-code, codex, gemini-cli", () => {
  it("usage: an unknown agent is one line with the nearest name, exit 2, and nothing is installed", async () => {
    const { env, agentsDir } = await offlineEnv();
    const { code, stdout, stderr } = cli(["agents", "install", "codex", "claud-code"], env);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^payload-probe: agents: unknown agent "claud-code" \(expected pi, claude-code, codex, gemini-cli\); did you mean claude-code\? See '.+ agents --help'\.\n$/,
    );
    // Every name is checked first: codex, named before the bad one, was not attempted.
    expect(existsSync(agentsDir)).toBe(false);
    expect(cli(["agents", "install"], env).stderr).toMatch(/agents: missing <agent\.\.\.>/);
  });

  it("no registry: one line naming the agent, exit 2, no half-made install, later agents not tried", async () => {
    const { env, agentsDir } = await offlineEnv();
    const { code, stderr } = cli(["agents", "install", "claude-code", "codex"], env);
    expect(code).toBe(2);
    expect(stderr).toContain(`agents: installing Claude Code ${NPM_AGENTS["claude-code"].version}`);
    expect(stderr).toMatch(/the npm registry could not be reached, so Claude Code was not installed/);
    expect(stderr).not.toContain("Codex");
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(agentsDir)).toEqual([]);
  });

  it("a folder without the stamp written last is an unfinished install and is not used", () => {
    const cacheHome = tempDir("agents-cache-");
    const dir = join(cacheHome, "payload-probe", "agents", `codex-${NPM_AGENTS.codex.version}`);
    const binary = join(dir, "node_modules", ...NPM_AGENTS.codex.program(process.platform, process.arch)!);
    mkdirSync(join(binary, ".."), { recursive: true });
    writeFileSync(binary, "");
    expect(findNpmAgent("codex", { XDG_CACHE_HOME: cacheHome })).toBeUndefined();
    writeFileSync(join(dir, "payload-probe-install.json"), "{}\n");
    expect(findNpmAgent("codex", { XDG_CACHE_HOME: cacheHome })).toMatchObject({ program: binary, dir });
  });

  const all = findNpmAgent("claude-code") && findNpmAgent("codex") && findNpmAgent("gemini-cli");
  it.skipIf(!all)(
    "run again with all three installed: nothing to do, exit 0, each program answers its version",
    () => {
      const names = ["claude-code", "codex", "gemini-cli"];
      const { code, stderr, stdout } = cli(["agents", "install", ...names, "--json"], process.env);
      expect(code).toBe(0);
      expect(stderr).toContain(`Claude Code ${NPM_AGENTS["claude-code"].version} is already there`);
      expect(stderr).toContain(`Codex ${NPM_AGENTS.codex.version} is already there`);
      expect(stderr).toContain(`Gemini CLI ${NPM_AGENTS["gemini-cli"].version} is already there`);
      const found = JSON.parse(stdout) as Record<string, { program: string; version: string }>;
      expect(Object.keys(found)).toEqual(names);
      // The Gemini CLI answers in one process, not starting itself again to raise its heap limit: the
      // same answer at half the CPU (test/agents/real-agents.test.ts has a session through the relaunch).
      const env = { ...process.env, GEMINI_CLI_NO_RELAUNCH: "true" };
      for (const install of Object.values(found)) {
        const version = spawnSync(install.program, ["--version"], { env, encoding: "utf8", timeout: 60_000 });
        expect(version.status).toBe(0);
        expect(version.stdout).toContain(install.version);
      }
    },
    120_000,
  );
});
