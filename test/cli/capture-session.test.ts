/**
 * The capture session record, proxy and mock share (src/capture/capture-session.ts), end to end with
 * the built CLI: whatever fails, the viewer is stopped and the OTel span sent; and record builds its
 * command's environment before its run opens (issue 36), so an agent's config it cannot read costs
 * neither the command nor an earlier run. A real OTLP receiver and the view's event stream on
 * 127.0.0.1, a scratch HOME, real files; the tests wait for events, not clocks.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { type OtlpReceiver, startOtlpReceiver } from "../analysis/otel/otlp-receiver.js";
import { jsonl, startCli, writeTinyProbe } from "../capture/http-harness.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { fileTempDir, removeFileTempDirs, removeTempDirs, tempDir } from "../runtime/harness.js";
import { type CliResult, startCliIn } from "./scratch-cli.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"])
  delete process.env[name];

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  closers.push(() => started.close());
  return started;
}

/**
 * Opens the viewer's event stream and resolves once its first event has arrived, with `all`: what the
 * stream carried by the time the server ended it.
 */
async function eventStream(viewUrl: string): Promise<{ all: Promise<string> }> {
  let text = "";
  let opened!: () => void;
  const first = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const all = new Promise<string>((resolve) => {
    const request = get(`${viewUrl}events`, (response) => {
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        opened();
      });
      response.on("close", () => resolve(text));
    });
    request.on("error", () => resolve(text));
  });
  await first;
  return { all };
}

describe("a capture whose close fails", () => {
  const commands = {
    proxy: async () => ({ args: ["proxy", "--upstream", "http://127.0.0.1:9/v1"], name: "proxy" }),
    mock: async (runs: string) => ({ args: ["mock", (await writeTinyProbe(runs)).file], name: "tiny-mock" }),
  };
  for (const [command, setUp] of Object.entries(commands)) {
    it(`${command}: still stops its viewer and sends its OTel span, then exits 2 naming why`, async () => {
      const otlp = await receiver();
      const runs = tempDir(`session-${command}-`);
      const { args, name } = await setUp(runs);
      const cli = await startCli([...args, "--runs", runs, "--no-db", "--view", "--otel", otlp.url]);
      const viewUrl = (await cli.line(/^VIEW /)).slice("VIEW ".length);
      const events = await eventStream(viewUrl);
      // A folder of the user's where the run goes: the capture's close cannot swap its run in.
      mkdirSync(join(runs, name));
      writeFileSync(join(runs, name, "mine.txt"), "not a run\n");
      expect(await cli.stop()).toBe(2);
      expect(cli.stderr()).toContain(`"mine.txt"`);
      expect(await events.all).toContain("event: end\n");
      expect(otlp.spans().map((span) => span.name)).toEqual([`invoke_agent ${name}`]);
    });
  }
});

const CLIENT = join(PROJECT_ROOT, "test", "fixtures", "record", "sdk-client.mjs");

/** A scratch HOME whose Codex config is not TOML, a bin folder first on PATH, and the environment naming both. */
function brokenCodexHome(scratch: string) {
  // The fake keys the test's SDK clients need to send anything; they go to the mock alone.
  const keys = { OPENAI_API_KEY: "sk-session-test-OPENAI", ANTHROPIC_API_KEY: "sk-ant-session-test-ANTHROPIC" };
  const home = join(scratch, "home");
  mkdirSync(join(home, ".codex"), { recursive: true });
  const config = join(home, ".codex", "config.toml");
  writeFileSync(config, 'model = "gpt-5"\nmodel_provider = = broken\n');
  const bin = join(scratch, "bin");
  mkdirSync(bin);
  const env = { ...keys, HOME: home, CODEX_HOME: join(home, ".codex"), PATH: `${bin}:${process.env.PATH}` };
  return { config, bin, env };
}

/** The shared session's mock, closed when the file's tests are done; its folder is removed after it. */
const sharedClosers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of sharedClosers.splice(0)) await close();
  removeFileTempDirs();
});

/** The shared session: its folders, record's flags for the run `agent` up to `--`, what record said, the spans sent. */
interface AgentSession extends ReturnType<typeof brokenCodexHome> {
  scratch: string;
  runs: string;
  own: string[];
  result: CliResult;
  spans: string[];
}

let agentSession: Promise<AgentSession> | undefined;

/**
 * The SDK script, `node sdk-client.mjs all`, recorded once as the run `agent` in front of a mock, with
 * a Codex config record cannot read and an OTLP receiver, for the tests below (as
 * test/agents/real-agents.test.ts shares a Codex session): a command that is not Codex, run and
 * captured with its span, whose run must then outlast each later `record` of its name that is
 * refused. The folder and the mock stay until the file's tests are done.
 */
function recordedAgent() {
  agentSession ??= (async () => {
    const scratch = fileTempDir("session-record-agent-");
    const runs = join(scratch, "runs");
    const home = brokenCodexHome(scratch);
    const probeFile = join(PROJECT_ROOT, "test", "fixtures", "record", "sdk-probe.yaml");
    const mock = await startProbeMock(probeFile, { runsDir: runs, runName: "upstream" });
    sharedClosers.push(() => mock.close());
    const own = ["record", "--runs", runs, "--upstream", mock.baseUrl.replace(/\/v1$/, ""), "--name", "agent"];
    const otlp = await startOtlpReceiver();
    try {
      const args = [...own, "--otel", otlp.url, "--", "node", CLIENT, "all"];
      const result = await startCliIn(scratch, args, scratch, home.env).done;
      return { ...home, scratch, runs, own: [...own, "--"], result, spans: otlp.spans().map((span) => span.name) };
    } finally {
      await otlp.close();
    }
  })();
  return agentSession;
}

/** The database's rows of the run `agent`, by status. */
function agentRows(runs: string) {
  const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
  const rows = db.prepare("SELECT status FROM runs WHERE probe = 'agent'").all();
  db.close();
  return rows;
}

describe("record with an agent's config it cannot read", () => {
  it("runs a command that is not that agent, saying so once, and captures it with its OTel span", async () => {
    const { runs, config, result, spans } = await recordedAgent();
    expect(result.code, result.stderr).toBe(0);
    // The command ran: the run holds its requests.
    expect(jsonl<RequestRecord>(join(runs, "agent", "requests.jsonl")).map((r) => r.api)).toEqual([
      "openai-completions",
      "openai-responses",
      "anthropic-messages",
    ]);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("Codex is not pointed"));
    expect(warnings).toHaveLength(1);
    expect(result.stderr).toContain(config);
    // The session's span, beside one span of each of its requests.
    expect(spans.toSorted()).toEqual(["chat mock-model", "chat mock-model", "chat mock-model", "invoke_agent agent"]);
  });

  it("stops before anything starts when the command is that agent, and the earlier run of its name stays", async () => {
    const { scratch, runs, config, bin, env, own, result } = await recordedAgent();
    expect(result.code, result.stderr).toBe(0);
    const earlier = readFileSync(join(runs, "agent", "requests.jsonl"), "utf8");

    const marker = join(scratch, "codex-ran");
    writeFileSync(join(bin, "codex"), `#!/bin/sh\ntouch "${marker}"\n`, { mode: 0o755 });
    const second = await startCliIn(scratch, [...own, "codex"], scratch, env).done;
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`${config}: expected TOML as Codex reads it (line 2`);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(runs, "agent", "requests.jsonl"), "utf8")).toBe(earlier);
    expect(agentRows(runs)).toEqual([{ status: "captured" }]);
  });

  it("a command that cannot be started (its interpreter is missing) leaves the earlier run of its name in place", async () => {
    const { scratch, runs, bin, env, own, result } = await recordedAgent();
    expect(result.code, result.stderr).toBe(0);
    const earlier = readFileSync(join(runs, "agent", "requests.jsonl"), "utf8");

    // Found on PATH and executable, so record starts its proxy; only the kernel's exec then fails.
    writeFileSync(join(bin, "unstartable"), "#!/nonexistent/interpreter\n", { mode: 0o755 });
    const second = await startCliIn(scratch, [...own, "unstartable"], scratch, env).done;
    expect(second.code).toBe(127);
    expect(second.stderr).toContain("record: unstartable: could not be started");
    expect(readFileSync(join(runs, "agent", "requests.jsonl"), "utf8")).toBe(earlier);
    // Nothing of the second run is left beside it (no live folder, no previous-run folder).
    expect(readdirSync(runs).filter((entry) => entry.includes("agent") && !entry.endsWith(".lock"))).toEqual(["agent"]);
    expect(agentRows(runs)).toEqual([{ status: "captured" }]);
  });
});
