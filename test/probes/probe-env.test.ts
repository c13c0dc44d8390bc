import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { liveRunDir } from "../../src/capture/run-folder.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { probeEnvironment } from "../../src/probes/probe-env.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const CANARY = "PAYLOAD_PROBE_TEST_CANARY";
/** What the SDK's stdio transport adds of the parent's environment to every server it starts. */
const SDK_DEFAULTS = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

afterEach(() => {
  delete process.env[CANARY];
  removeTempDirs();
});

describe("a probe's MCP servers start in the probe environment, not the user's", () => {
  it("hands p1's stub, primed and lazily connected, only the probe environment and its wire log", async () => {
    const base = tempDir("probe-env-");
    const seen = join(base, "env.jsonl");
    const config = join(base, "mcp.json");
    const stub = join(PROJECT_ROOT, "test/fixtures/env-recording-stub.mjs");
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { "probe-stub": { command: "node", args: [stub, seen], lifecycle: "lazy" } } }),
    );
    process.env[CANARY] = "a secret of the user's shell";
    const probe = await loadProbeFile(join(PROJECT_ROOT, "probes/p1.yaml"), PROJECT_ROOT);
    probe.agent.mcp!.config = config;

    const result = await runProbe(probe, { runsDir: join(base, "runs"), workspaceRoot: join(base, "ws") });
    expect(result.failures).toEqual([]);

    const envs = readFileSync(seen, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, string>);
    // Once to prime the cache (no wire log), once for the lazy connection before request 4.
    expect(envs).toHaveLength(2);
    const expected = probeEnvironment(join(base, "ws", "p1", "home"));
    for (const env of envs) {
      expect(env[CANARY]).toBeUndefined();
      expect(env).toMatchObject(expected);
      const allowed = new Set([...Object.keys(expected), ...SDK_DEFAULTS, WIRE_LOG_ENV]);
      expect(Object.keys(env).filter((name) => !allowed.has(name))).toEqual([]);
    }
    expect(envs[0]![WIRE_LOG_ENV]).toBeUndefined();
    // The run writes beside its folder until it closes (src/capture/run-folder.ts).
    expect(envs[1]![WIRE_LOG_ENV]).toBe(join(liveRunDir(dirname(result.dir), "p1"), "mcp-wire.jsonl"));
  });

  it("runs the runtime's tools in it too: a shell command sees it, and ~/ is the workspace's home", async () => {
    const base = tempDir("tool-env-");
    const file = join(base, "tool-env.yaml");
    const command =
      'echo "HOME=$HOME CANARY=${PAYLOAD_PROBE_TEST_CANARY:-none} LANG=$LANG TZ=$TZ"; echo kept > ~/note.txt';
    writeFileSync(
      file,
      [
        "name: tool-env",
        "agent: { tools: [bash, read], noSkills: true }",
        "model:",
        "  script:",
        `    - call: bash`,
        `      args: { command: ${JSON.stringify(command)} }`,
        "    - call: read",
        '      args: { path: "~/note.txt" }',
        "    - text: DONE",
        'prompts: ["go"]',
        "",
      ].join("\n"),
    );
    process.env[CANARY] = "a secret of the user's shell";
    const probe = await loadProbeFile(file, PROJECT_ROOT);
    const result = await runProbe(probe, { runsDir: join(base, "runs"), workspaceRoot: join(base, "ws") });
    expect(result.failures).toEqual([]);

    const home = join(base, "ws", "tool-env", "home");
    const payloads = readFileSync(join(result.dir, "payloads.jsonl"), "utf8").trim().split("\n");
    const last = JSON.parse(JSON.parse(payloads.filter((line) => line.includes('"type":"request"')).at(-1)!).body) as {
      messages: { role: string; content: string }[];
    };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results[0]).toBe(`HOME=${home} CANARY=none LANG=C.UTF-8 TZ=UTC`);
    expect(results[1]).toContain("kept");
    expect(readFileSync(join(home, "note.txt"), "utf8")).toBe("kept\n");
  });
});
