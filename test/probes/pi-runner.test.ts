import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, afterEach, describe, expect, it, onTestFinished } from "vitest";
import { findPi } from "../../src/agents/pi-install.js";
import type { Baseline } from "../../src/analysis/check/check.js";
import { fidelityRow } from "../../src/analysis/fidelity.js";
import { resolveRun } from "../../src/analysis/load-run.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { modelsJson, piMcpConfig } from "../../src/probes/pi-agent-dir.js";
import { piCannotRun, piExpect, runProbeOnPi } from "../../src/probes/pi-runner.js";
import type { RunResult } from "../../src/probes/run-options.js";
import { runProbe } from "../../src/probes/runner.js";
import { checkoutWorkspaceRoot } from "../../src/probes/workspace.js";
import { importProfile } from "../../src/profile-import/import-run.js";
import { writeImportedProfile } from "../../src/profile-import/write.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { readWireLog } from "../../src/stub-mcp/wire-log.js";
import { defaultWorkspaceRootsOf } from "../cli/scratch-cli.js";
import { runInProcessAt } from "../fixtures/cli-in-process.js";
import { jsonlObjects } from "../fixtures/jsonl-rows.js";
import { sharedRecords } from "../fixtures/shared-runs.js";
import { fileTempDir, removeFileTempDirs, removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const load = (name: string) => loadProbeFile(join(PROJECT_ROOT, "probes", `${name}.yaml`), PROJECT_ROOT);

describe("what pi can run, and the expect block it is held to (no pi needed)", () => {
  it("skips probes the real pi cannot express, saying why", async () => {
    expect(piCannotRun(await load("p1"))).toBeUndefined();
    expect(piCannotRun(await load("p1-anthropic"))).toMatch(/anthropic-messages.*chat completions/);
    expect(piCannotRun(await load("p6"))).toMatch(/load_skill/);
    expect(piCannotRun(await load("p7"))).toMatch(/sampling/);
  });

  it("pi.expect replaces what it states; registry and skill-discovery checks are dropped", async () => {
    const base = await load("seq-search");
    const merged = piExpect(base);
    expect(merged.each.tools).toEqual({ all: ["mcp", "mcp__a", "mcp__b"] });
    expect(merged.each.roles).toEqual(base.expect.each.roles);
    expect(merged.systemDelta.map((d) => d.added)).toEqual([[], [], [], [], []]);
    expect(merged.wire).toEqual({
      a: expect.objectContaining({ silent: true }),
      b: expect.objectContaining({ silent: true }),
    });
    expect(merged.surface).toEqual({});
    expect(piExpect(await load("p5")).skills).toBeUndefined();
    // A probe without a pi section keeps its own expectations.
    expect(piExpect(await load("p1")).toolResults).toEqual((await load("p1")).expect.toolResults);
  });
});

describe("pi's agent dir (no pi needed)", () => {
  it("models.json names the probe's provider and model at the mock, with the runtime's limits", async () => {
    const models = modelsJson(await load("p1"), "http://127.0.0.1:9/v1") as {
      providers: Record<string, { baseUrl: string; api: string; compat?: unknown; models: unknown[] }>;
    };
    const provider = models.providers["token-plan"]!;
    expect(provider).toMatchObject({ baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions" });
    expect(provider.compat).toMatchObject({ supportsDeveloperRole: false, thinkingFormat: "qwen" });
    expect(provider.models).toEqual([
      { id: "qwen3.8-flash", reasoning: true, input: ["text", "image"], contextWindow: 1_000_000, maxTokens: 131_072 },
    ]);
  });

  it("stdio servers start in the config's folder, its path written resolved (the adapter hashes cwd as written)", async () => {
    const config = piMcpConfig(join(PROJECT_ROOT, "fixtures/mcp-proxy.json")) as {
      mcpServers: Record<string, { cwd?: string }>;
    };
    expect(config.mcpServers["probe-stub"]!.cwd).toBe(resolve(PROJECT_ROOT, "fixtures"));
    expect(config.mcpServers["probe-stub"]!.cwd).not.toMatch(/\/$/);
  });
});

const pi = findPi();
if (!pi) console.log(`real pi tests skipped: pi is not installed; install it with './run.sh agents install pi'`);

/** `check` run in this process with the default workspace root: PAYLOAD_PROBE_WORKSPACE unset while it runs. */
const NO_WORKSPACE_ROOT = { PAYLOAD_PROBE_WORKSPACE: undefined };

/**
 * `check p4 --agent both --json` in `base`, in this process (the CLI's exit codes as a child are
 * test/cli/check.test.ts's), with the default workspace root, stored as the root the baselines were
 * made with. pi's baseline says its tool definitions were 100 bytes smaller: pi's run is a regression.
 */
async function checkP4OnBoth(base: string) {
  const baselines = join(base, "baselines");
  mkdirSync(baselines);
  copyFileSync(join(PROJECT_ROOT, "probes/baselines/p4.json"), join(baselines, "p4.json"));
  const piBaseline = JSON.parse(readFileSync(join(PROJECT_ROOT, "probes/baselines/p4@pi.json"), "utf8"));
  piBaseline.requests[0].bytes.tools -= 100;
  writeFileSync(join(baselines, "p4@pi.json"), JSON.stringify(piBaseline));
  const runsDir = join(base, "runs");
  const args = ["check", "p4", "--agent", "both", "--baseline", baselines, "--runs", runsDir, "--json"];
  return { run: await runInProcessAt(PROJECT_ROOT, NO_WORKSPACE_ROOT, ...args), runsDir };
}

describe.skipIf(!pi)("the real pi against the mock", () => {
  const places = () => {
    const base = tempDir("pi-run-");
    return { runsDir: join(base, "runs"), workspaceRoot: join(base, "ws"), database: false };
  };
  // pi's runs of committed probes, made once for the tests that only read them (a pi run costs seconds);
  // their folder outlives each test's temp folders and goes with the last test.
  let sharedBase: string | undefined;
  const shared = () => (sharedBase ??= fileTempDir("pi-shared-"));
  const sharedRuns = new Map<string, Promise<RunResult>>();
  const onPiOnce = (name: string) => {
    const options = { runsDir: join(shared(), "runs"), workspaceRoot: join(shared(), "ws"), database: false };
    if (!sharedRuns.has(name))
      sharedRuns.set(
        name,
        load(name).then((probe) => runProbeOnPi(probe, options, pi)),
      );
    return { options, result: sharedRuns.get(name)! };
  };
  // One check session serves two tests, as the runs above: its test reads the verdicts, and its
  // p4@pi run is pi's p4 for the profile test. Its workspace root goes with the last test.
  let checkOnBoth: ReturnType<typeof checkP4OnBoth> | undefined;
  const checkRoots: (() => void)[] = [];
  const checkOnBothOnce = () => {
    const base = join(shared(), "check");
    if (!checkOnBoth) {
      mkdirSync(base);
      checkRoots.push(defaultWorkspaceRootsOf([join(base, "runs")]).remove);
      checkOnBoth = checkP4OnBoth(base);
    }
    return checkOnBoth;
  };
  afterAll(() => {
    for (const remove of checkRoots) remove();
    removeFileTempDirs();
  });

  it("p1: 4 requests with [read, mcp] each, every expectation holds, and the structure matches the runtime's", async () => {
    const { options, result } = onPiOnce("p1");
    const onPi = await result;
    expect(onPi.failures).toEqual([]);
    expect(onPi.dir).toBe(join(options.runsDir, "p1@pi"));
    const records = jsonlObjects<RequestRecord>(join(onPi.dir, "requests.jsonl"));
    expect(records.map((r) => r.tools)).toEqual(Array(4).fill(["read", "mcp"]));
    // The stub MCP server is a real child process of pi's adapter, logging to the run folder.
    const wire = readWireLog(join(onPi.dir, "mcp-wire.jsonl"));
    expect(wire.map((line) => (line.message as { method: string }).method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
    ]);
    // Tool calls and results from pi's JSON event stream, each with the seq of the request it precedes.
    const events = jsonlObjects<{ seq: number; type: string; content?: string }>(join(onPi.dir, "events.jsonl"));
    expect(events.filter((e) => e.type === "tool_result").map((e) => e.seq)).toEqual([2, 3, 4]);
    // `p1@pi` is a run name the analysis commands find.
    expect(resolveRun("p1@pi", { runsDir: options.runsDir }).count()).toBe(4);

    // The runtime's side is the suite's shared run of p1: the comparison is of structure, not paths.
    const row = fidelityRow("p1", await sharedRecords("p1"), onPi.records);
    expect(row.differs).toEqual([]);
    expect(row.verdict).toBe("match");
  }, 180_000);

  it("pi's environment is scrubbed: a variable of the caller never reaches its tools", async () => {
    const dir = tempDir("pi-env-");
    const file = join(dir, "pi-env.yaml");
    writeFileSync(
      file,
      [
        "name: pi-env",
        "agent: { tools: bash, noSkills: true }",
        "model:",
        "  script:",
        "    - { call: bash, args: { command: env } }",
        "    - { text: done }",
        "prompts: [show the environment]",
      ].join("\n"),
    );
    process.env.PAYLOAD_PROBE_TEST_SECRET = "must-not-leak-4711";
    try {
      const result = await runProbeOnPi(await loadProbeFile(file, PROJECT_ROOT), places(), pi);
      expect(result.failures).toEqual([]);
      const payloads = readFileSync(join(result.dir, "payloads.jsonl"), "utf8");
      expect(payloads).toContain("PI_CODING_AGENT_DIR");
      expect(payloads).not.toContain("must-not-leak-4711");
    } finally {
      delete process.env.PAYLOAD_PROBE_TEST_SECRET;
    }
  }, 180_000);

  it("check --agent both: each probe on each agent against its own baseline, pi's named <probe>@pi, then the fidelity table", async () => {
    const { run } = await checkOnBothOnce();
    expect(run.status).toBe(1);
    const { checks, fidelity } = JSON.parse(run.stdout) as {
      checks: { probe: string; status: string; regressions: { probe: string; metric: string }[] }[];
      fidelity: { probe: string; verdict: string }[];
    };
    expect(checks.map((c) => [c.probe, c.status])).toEqual([
      ["p4", "pass"],
      ["p4@pi", "regression"],
    ]);
    expect(checks[1]!.regressions).toEqual([expect.objectContaining({ probe: "p4@pi", metric: "bytes.tools" })]);
    expect(fidelity.map((row) => [row.probe, row.verdict])).toEqual([["p4", "match"]]);
  }, 180_000);

  it("the @pi baselines keep prefixes, so a cache prefix break pi's baseline did not have fails <probe>@pi", async () => {
    const base = tempDir("pi-prefix-");
    const baselines = join(base, "baselines");
    mkdirSync(baselines);
    const piBaseline = JSON.parse(readFileSync(join(PROJECT_ROOT, "probes/baselines/p0@pi.json"), "utf8")) as Baseline;
    // p0 activates a direct tool before its fourth request: on pi, its prefix breaks in tools there.
    expect(piBaseline.requests.map((r) => r.prefix?.breakAt)).toEqual([null, null, null, "tools"]);
    piBaseline.requests[3]!.prefix!.breakAt = null;
    writeFileSync(join(baselines, "p0@pi.json"), JSON.stringify(piBaseline));
    const roots = defaultWorkspaceRootsOf([join(base, "runs")]);
    onTestFinished(roots.remove);
    const args = ["check", "p0", "--agent", "pi", "--baseline", baselines, "--runs", join(base, "runs")];
    const run = await runInProcessAt(PROJECT_ROOT, NO_WORKSPACE_ROOT, ...args);
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stdout.split("\n")[0]).toMatch(/^p0@pi: cache prefix broken in tools \(request 4\)/);
  }, 180_000);

  it("a probe pi cannot express is skipped with its reason and leaves no run folder", async () => {
    const options = places();
    const result = await runProbeOnPi(await load("p1-anthropic"), options, pi);
    expect(result.skipped).toMatch(/anthropic-messages/);
    expect(result.records).toEqual([]);
    expect(existsSync(join(options.runsDir, "p1-anthropic@pi"))).toBe(false);
  });

  it("a profile imported from pi's own p1, p3 and p4 gives the runtime pi's toolsChars and systemChars, request for request", async () => {
    const { options } = onPiOnce("p1");
    const check = await checkOnBothOnce();
    // Each probe runs again where pi ran it, so the paths in its prompt are as long as pi's: p1 and p3 in
    // the shared root, p4 in the default root of the check's runs folder (given here, it is stored as
    // written; the check stored it as the recorded root, which is as long).
    const p4Root = checkoutWorkspaceRoot(check.runsDir);
    const onPi = [
      { name: "p1", dir: (await onPiOnce("p1").result).dir, options },
      { name: "p3", dir: (await onPiOnce("p3").result).dir, options },
      {
        name: "p4",
        dir: join(check.runsDir, "p4@pi"),
        options: { runsDir: join(shared(), "check", "again"), workspaceRoot: p4Root, database: false },
      },
    ];
    const sources = onPi.map(({ dir }) => resolveRun(dir, { runsDir: dirname(dir) }));
    const file = join(tempDir("pi-profile-"), "pi.json");
    writeImportedProfile(importProfile(sources, "pi").profile, file, true);
    const sizes = (records: RequestRecord[]) => records.map((r) => [r.toolsChars, r.systemChars]);
    for (const { name, dir, options } of onPi) {
      const probe = await load(name);
      const rerun = await runProbe({ ...probe, agent: { ...probe.agent, profile: file } }, options);
      expect(rerun.failures).toEqual([]);
      expect(sizes(rerun.records), name).toEqual(sizes(jsonlObjects<RequestRecord>(join(dir, "requests.jsonl"))));
    }
  }, 180_000);
});
