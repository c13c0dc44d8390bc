/**
 * `record` end to end: the built CLI starts its proxy and runs a real Node script that uses the
 * official openai and Anthropic clients, constructed with no base URL, in front of our mock. Every
 * process is real; nothing waits on a clock.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { MockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { filesContaining, jsonl } from "../capture/http-harness.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { fileTempDir, removeFileTempDirs, removeTempDirs, tempDir } from "../runtime/harness.js";
import { type CliResult, startCliIn } from "./scratch-cli.js";

const FIXTURES = join(PROJECT_ROOT, "test", "fixtures", "record");
const CLIENT = join(FIXTURES, "sdk-client.mjs");
const GEMINI_CLIENT = join(FIXTURES, "gemini-client.mjs");
/** The fake keys the clients send: they must reach the upstream's headers and no file. */
const KEYS = { OPENAI_API_KEY: "sk-record-test-OPENAI-4f1c", ANTHROPIC_API_KEY: "sk-ant-record-test-ANTHROPIC-9b2e" };

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

/** A mock answering as the probe `script` says, its run `runName` in `runs`; the caller closes it. */
const startMock = (runs: string, runName: string, script = "sdk-probe.yaml") =>
  startProbeMock(join(FIXTURES, script), { runsDir: runs, runName });

/** `startMock`, closed after the test. */
async function mockIn(runs: string, runName: string, script = "sdk-probe.yaml"): Promise<MockServer> {
  const mock = await startMock(runs, runName, script);
  closers.push(() => mock.close());
  return mock;
}

/** The mock's origin: record's routes put the SDKs' own `/v1` in front of the API path. */
const originOf = (mock: MockServer) => mock.baseUrl.replace(/\/v1$/, "");

/** `payload-probe record <args>` in its own process group, stdout and stderr piped (no terminal), with the fake keys. */
const startRecord = (scratch: string, args: string[], env: Record<string, string> = {}) =>
  startCliIn(scratch, ["record", ...args], scratch, { ...KEYS, ...env });

const requestBodies = (dir: string) =>
  jsonl<{ type: string; body: string }>(join(dir, "payloads.jsonl"))
    .filter((payload) => payload.type === "request")
    .map((payload) => payload.body);

/** One recorded session of the SDK script: what record said and the request bodies its mock got. */
interface SdkSession {
  result: CliResult;
  atUpstream: string[];
}

// The folders the shared sessions were recorded in.
afterAll(removeFileTempDirs);

let sdkSessions: Promise<{ scratch: string; runs: string; opened: SdkSession; exiting: SdkSession }> | undefined;

/**
 * The same command, `node sdk-client.mjs all`, recorded twice into one runs folder, once for the
 * tests that read it (as test/agents/real-agents.test.ts shares a Codex session): the first session
 * with --open and a stand-in xdg-open first on PATH, the second with the command exiting 3; each
 * sends its own `metadata.user_id` to a mock of its own. Both mocks are closed, and the stand-in has
 * written what it was asked to open, before any test reads them. Each session is a record child, the
 * SDK script's child and a mock.
 */
function recordedTwice() {
  sdkSessions ??= (async () => {
    const scratch = fileTempDir("record-twice-");
    const runs = join(scratch, "runs");
    const bin = join(scratch, "bin");
    mkdirSync(bin);
    const opened = join(scratch, "opened.txt");
    // A stand-in xdg-open: it writes down what it was asked to open.
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho "$1" >> "${opened}"\n`, { mode: 0o755 });
    const session = async (id: string, flags: string[], env: Record<string, string>): Promise<SdkSession> => {
      const mock = await startMock(runs, `upstream-${id}`);
      try {
        // No `--`: the first word that is not one of record's flags starts the command.
        const args = [...flags, "--upstream", originOf(mock), "--runs", runs, "node", CLIENT, "all"];
        const result = await startRecord(scratch, args, { SESSION_ID: id, ...env }).done;
        return { result, atUpstream: requestBodies(mock.liveDir) };
      } finally {
        await mock.close();
      }
    };
    const first = await session("session-a", ["--open"], { PATH: `${bin}:${process.env.PATH}` });
    // xdg-open runs on its own, past record's end: wait for its line when record served a viewer.
    if (first.result.stderr.includes("VIEW http"))
      await untilInFolder(scratch, () => readFileSync(opened, "utf8").endsWith("\n"));
    const second = await session("session-b", [], { EXIT_CODE: "3" });
    return { scratch, runs, opened: first, exiting: second };
  })();
  return sdkSessions;
}

/** No process of the group is left (the group id is the record process's pid). */
function groupGone(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

describe("record", () => {
  // One session serves what record stores and what show then prints of it: the second of the two
  // sessions recorded once for this file (recordedTwice).
  it("captures every request of the SDK clients in full, byte for byte as the upstream got them, and takes the command's exit code; show prints what the model answered each: tool calls with arguments, text, stop reason, status, timing and usage", async () => {
    const { scratch, runs, exiting } = await recordedTwice();
    const { result, atUpstream } = exiting;
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toBe("");

    // The run is named after the program; each record says what was sent.
    const records = jsonl<RequestRecord>(join(runs, "node", "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.kind, r.api, r.model, r.tools])).toEqual([
      [1, "loop", "openai-completions", "mock-model", ["read"]],
      [2, "loop", "openai-responses", "mock-model", ["read"]],
      [3, "loop", "anthropic-messages", "mock-model", ["read"]],
    ]);
    expect(records.map((r) => [r.status, r.ending, r.response?.kind, r.usage?.source])).toEqual([
      [200, "complete", "tool_calls", "estimate"],
      [200, "complete", "text", "estimate"],
      [200, "complete", "text", "estimate"],
    ]);
    expect(atUpstream).toHaveLength(3);
    expect(requestBodies(join(runs, "node"))).toEqual(atUpstream);

    expect(result.stderr).toContain("record: 3 request(s): 3 recorded");
    expect(result.stderr).toContain(`report ${join(runs, "node")} · show ${join(runs, "node")} 1 · view`);

    // show and diff read the run in this process (test/fixtures/cli-in-process.ts): record is the child here.
    const show = (...args: string[]) => cliInScratch(scratch, "show", ...args, "--runs", runs);
    const first = await show("node", "1", "--part", "reply");
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.split("\n");
    expect(lines[4]).toMatch(/^══ reply \(HTTP 200, complete · first byte [\d.]+ ms · took [\d.]+ ms\) ══$/);
    expect(lines.slice(5, 10)).toEqual([
      "stop reason: tool_calls · thinking: none",
      expect.stringMatching(/^── tool call read/),
      "{",
      '  "path": "notes.txt"',
      "}",
    ]);
    expect(first.stdout).toContain("── usage · reported: a mock's estimate · ours: our token count");
    const json = JSON.parse((await show("node", "3", "--json")).stdout) as { reply: Record<string, unknown> };
    expect(json.reply).toMatchObject({
      status: 200,
      ending: "complete",
      text: "messages answered",
      stopReason: "end_turn",
      toolCalls: [],
      usage: records[2]!.usage,
      ourPromptTokens: records[2]!.tokens!.total,
      firstByteMs: records[2]!.firstByteMs,
    });

    // The keys went to the upstream in headers and nowhere else: no byte of any file of either session
    // (their mocks closed), SQLite included.
    for (const key of Object.values(KEYS)) expect(filesContaining(scratch, key)).toEqual([]);
    // Each session's private folder went with it.
    expect(readdirSync(scratch).filter((name) => name.startsWith("payload-probe-record-"))).toEqual([]);
  });

  it("diff of the same command recorded twice names the one body field that differs, and --ignore sets it apart", async () => {
    // The two sessions of recordedTwice: the first exits 0, the second as its command did (3).
    const { scratch, runs, opened, exiting } = await recordedTwice();
    expect(opened.result.code, opened.result.stderr).toBe(0);
    expect(exiting.result.code, exiting.result.stderr).toBe(3);
    const diff = (...args: string[]) => cliInScratch(scratch, "diff", "node@2", "node", ...args, "--runs", runs);
    const plain = await diff();
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain("#1 (turn 1)  identical");
    const at3 = plain.stdout.slice(plain.stdout.indexOf("#3 (turn"));
    expect(at3.split("\n").slice(0, 3)).toEqual([
      "#3 (turn 1)  differs, first in body",
      "  tools    same [read]",
      '  body     metadata.user_id: A "session-a" B "session-b"',
    ]);
    const ignored = await diff("--ignore", "metadata.user_id");
    expect(ignored.stdout).toContain("#3 (turn 1)  identical but for ignored fields: metadata.user_id");
    expect(ignored.stdout).toContain("0 request(s) differ");
    const json = JSON.parse((await diff("--json")).stdout) as { requests: { bodyFields: unknown }[] };
    expect(json.requests[2]!.bodyFields).toEqual([{ path: "metadata.user_id", a: "session-a", b: "session-b" }]);
  });

  it("--open opens the live viewer with xdg-open as it is served, and the summary says its address again", async () => {
    // The first session of recordedTwice, with its stand-in xdg-open.
    const { scratch, runs, opened } = await recordedTwice();
    const { result } = opened;
    expect(result.code, result.stderr).toBe(0);
    const url = /VIEW (http:\/\/127\.0\.0\.1:\d+\/)/.exec(result.stderr)?.[1];
    expect(url, result.stderr).toBeDefined();
    expect(readFileSync(join(scratch, "opened.txt"), "utf8")).toBe(`${url}\n`);
    const summary = result.stderr.slice(result.stderr.indexOf("record: 3 request(s)"));
    expect(summary).toContain(
      `the viewer was at ${url} (stopped with the recording; 'view ${join(runs, "node")}' writes the page)`,
    );
  });

  it("a Gemini session through @google/genai: full records of both turns, countTokens kept as a side payload, no key in any file", async () => {
    const scratch = tempDir("record-gemini-");
    const runs = join(scratch, "runs");
    const mock = await mockIn(runs, "upstream", "gemini-probe.yaml");
    const key = "AIzaSyRECORDTEST00000000000000000000000";
    const args = ["--upstream-gemini", originOf(mock), "--runs", runs, "--name", "gemini", "--", "node", GEMINI_CLIENT];
    const result = await startRecord(scratch, args, { GEMINI_API_KEY: key }).done;
    expect(result.code, result.stderr).toBe(0);

    const records = jsonl<RequestRecord>(join(runs, "gemini", "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.kind, r.api, r.model, r.tools, r.roles])).toEqual([
      [1, "loop", "google-generative-ai", "mock-model", [], ["user"]],
      [2, "loop", "google-generative-ai", "mock-model", ["read"], ["system", "user"]],
    ]);
    expect(records.map((r) => [r.status, r.ending, r.response?.kind, r.usage?.source])).toEqual([
      [200, "complete", "text", "estimate"],
      [200, "complete", "tool_calls", "estimate"],
    ]);
    expect(records[1]!.systemBytes).toBe(Buffer.byteLength("You read files for the user. Ünïcödé stays as it is."));
    const payloads = jsonl<{ type: string; seq: number; kind?: string; url: string }>(
      join(runs, "gemini", "payloads.jsonl"),
    ).filter((p) => p.type === "request");
    expect(payloads.map((p) => [p.kind, new URL(p.url).pathname])).toEqual([
      ["loop", "/v1beta/models/mock-model:generateContent"],
      ["loop", "/v1beta/models/mock-model:streamGenerateContent"],
      ["side", "/v1beta/models/mock-model:countTokens"],
    ]);
    expect(payloads[2]!.url).toContain("key=");
    expect(requestBodies(mock.liveDir)).toEqual(requestBodies(join(runs, "gemini")).slice(0, 2));
    await mock.close();
    expect(filesContaining(scratch, key)).toEqual([]);
  });

  it("--upstream-openai sends the OpenAI route elsewhere than --upstream; a base URL of the user's is replaced", async () => {
    const scratch = tempDir("record-routes-");
    const runs = join(scratch, "runs");
    const [main, openai] = [await mockIn(runs, "main-upstream"), await mockIn(runs, "openai-upstream")];
    const args = ["--upstream", originOf(main), "--upstream-openai", `${originOf(openai)}/v1`, "--runs", runs];
    // A gateway of the user's is replaced for the command, said without its URL (it may hold a key).
    const gateway = { ANTHROPIC_BASE_URL: "https://me:gateway-secret@gateway.example" };
    const result = await startRecord(scratch, [...args, "--name", "routes", "--", "node", CLIENT, "all"], gateway).done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("record: ANTHROPIC_BASE_URL is replaced for the command (to forward to yours");
    expect(result.stderr).not.toContain("gateway-secret");
    const apis = (dir: string) => requestBodies(dir).map((body) => ("max_tokens" in JSON.parse(body) ? "m" : "o"));
    expect(apis(main.liveDir)).toEqual(["m"]);
    expect(apis(openai.liveDir)).toEqual(["o", "o"]);
    expect(jsonl<RequestRecord>(join(runs, "routes", "requests.jsonl")).map((r) => r.api)).toEqual([
      "openai-completions",
      "openai-responses",
      "anthropic-messages",
    ]);
  });

  it("exits 2 when its port is in use, and the command is never started", async () => {
    const scratch = tempDir("record-port-");
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => taken.close(resolve)));
    const port = String((taken.address() as { port: number }).port);
    const marker = join(scratch, "started");
    const result = await startRecord(scratch, [
      "--port",
      port,
      "--runs",
      join(scratch, "runs"),
      "--",
      "node",
      CLIENT,
      "touch",
      marker,
    ]).done;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^payload-probe: cannot listen on 127\\.0\\.0\\.1:${port}: .+\\n$`));
    expect(existsSync(marker)).toBe(false);
  });

  it("exits 127 naming a command that is not found, before anything is started", async () => {
    const scratch = tempDir("record-missing-");
    const result = await startRecord(scratch, ["--runs", join(scratch, "runs"), "--", "no-such-program-4e1f"]).done;
    expect(result.code).toBe(127);
    expect(result.stderr).toBe("record: no-such-program-4e1f: command not found (nothing was started)\n");
    expect(existsSync(join(scratch, "runs"))).toBe(false);
  });

  it("a missing command is a usage error", async () => {
    const scratch = tempDir("record-usage-");
    const result = await startRecord(scratch, ["--no-db"]).done;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^payload-probe: record: missing the command to run after --\. See '.+ record --help'\.\n$/,
    );
  });

  it("on SIGTERM stops the command, finishes the run with what it captured, and leaves no process", async () => {
    const scratch = tempDir("record-term-");
    const runs = join(scratch, "runs");
    const mock = await mockIn(runs, "upstream");
    const ready = join(scratch, "ready");
    const record = startRecord(scratch, [
      "--upstream",
      originOf(mock),
      "--runs",
      runs,
      "--name",
      "term",
      "--",
      "node",
      CLIENT,
      "hang",
      ready,
    ]);
    await untilInFolder(scratch, () => readFileSync(ready, "utf8").endsWith("\n"));
    const commandPid = Number(readFileSync(ready, "utf8"));
    record.child.kill("SIGTERM");
    const result = await record.done;
    expect(result.code, result.stderr).toBe(128 + 15);
    expect(groupGone(record.child.pid!)).toBe(true);
    expect(() => process.kill(commandPid, 0)).toThrow();

    expect(jsonl<RequestRecord>(join(runs, "term", "requests.jsonl")).map((r) => r.api)).toEqual([
      "openai-completions",
    ]);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    const row = db.prepare("SELECT status, request_count FROM runs WHERE probe = 'term'").get();
    db.close();
    expect(row).toEqual({ status: "captured", request_count: 1 });
  });

  it("a second signal kills a command that ignores the first", async () => {
    const scratch = tempDir("record-stubborn-");
    const file = join(scratch, "stubborn");
    const record = startRecord(scratch, [
      "--no-db",
      "--runs",
      join(scratch, "runs"),
      "--",
      "node",
      CLIENT,
      "stubborn",
      file,
    ]);
    await untilInFolder(scratch, () => readFileSync(file, "utf8").endsWith("\n"));
    record.child.kill("SIGTERM");
    await untilInFolder(scratch, () => readFileSync(file, "utf8").includes("ignored\n"));
    record.child.kill("SIGTERM");
    const result = await record.done;
    expect(result.code, result.stderr).toBe(128 + 9);
    expect(groupGone(record.child.pid!)).toBe(true);
  });

  it("started through run.sh from another folder, runs the command in that folder, not run.sh's", () => {
    const scratch = tempDir("record-cwd-");
    const script = "process.stdout.write(process.cwd() + ' ' + process.env.PAYLOAD_PROBE_INVOKED_AS)";
    const args = ["record", "--no-db", "--runs", join(scratch, "runs"), "--", "node", "-e", script];
    const result = spawnSync(join(PROJECT_ROOT, "run.sh"), args, {
      cwd: scratch,
      env: { ...process.env, TMPDIR: scratch },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${scratch} undefined`);
    expect(result.stderr).toContain("no request reached the proxy");
  });
});
