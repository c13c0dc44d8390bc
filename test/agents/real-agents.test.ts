/**
 * Real agents, each running one prompt against our mock through `record`: Claude Code, Codex and
 * the Gemini CLI installed in the user's cache ('agents install claude-code codex gemini-cli'), and the real pi
 * ('agents install pi') on two of its built-in providers, each pointed as record points it. Each agent
 * finishes, every request it sent the model is a full record, the body stored is byte for byte the
 * one the mock received, and the fake key it was given reaches no file. Without an install the
 * tests skip with one line.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent, type NpmAgentName } from "../../src/agents/npm-agents.js";
import { findPi } from "../../src/agents/pi-install.js";
import { folderSource } from "../../src/analysis/load-run.js";
import { readBody, sendJson, serveHttp } from "../../src/capture/http.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { filesContaining, jsonl, MAIN } from "../capture/http-harness.js";
import { stopAfterTest } from "../fixtures/children.js";
import { CLAUDE_QUIET } from "../fixtures/claude-quiet.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { type FakeChatgptBackend, startFakeChatgptBackend } from "../fixtures/fake-chatgpt-backend.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const FIXTURES = join(PROJECT_ROOT, "test/fixtures");

/** What `report --context --json` prints, as far as these tests read it. */
interface ContextJson {
  requests: { seq: number; sources: Record<string, number> }[];
  sources: { source: string; last: number; session: number }[];
  unused: { tool: string; source: string }[];
  unusedSkills: { skill: string; requests: number; tokens: number }[];
}

interface Payload {
  seq: number;
  kind?: string;
  api?: string | null;
  body: string;
  sent?: string;
  url: string;
}

/** A run folder's request payload rows, each body whole (a long one is stored in parts: capture/payload-rows.ts). */
const requestRows = (dir: string) => [...folderSource(dir, { runsDir: dir }).payloads()] as Payload[];

type CapturedRecord = Pick<RequestRecord, "bodyBytes" | "hashes" | "status" | "ending" | "agent">;

interface Session {
  agent: { code: number | null; stdout: string; stderr: string };
  /** The capture's run folder and the mock's own, once both have stopped. */
  captured: string;
  upstream: string;
  runs: string;
}

/** The agent as a child in its own process group (its own children die with it), run to its end. */
function runAgent(program: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const child = stopAfterTest(
    spawn(program, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true }),
    true,
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise<Session["agent"]>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * One agent run through `record` in front of the mock: the mock serves the fixture's script, and
 * `record --upstream <mock> -- <agent>` points the agent at its proxy the way it points the user's
 * (the agent pointers), with `env` (a fresh HOME, the fake key) as the user's environment.
 */
async function agentThroughCapture(
  name: string,
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  script = "agent-session",
  recordFlags: string[] = [],
  /** `--upstream` as the mock prints it (`…/v1`) rather than its origin. */
  printedUpstream = false,
  /** A server of the test's in front of the mock, and the record flags that route to it. */
  before?: (mockOrigin: string) => Promise<{ flags: string[]; close(): Promise<void> }>,
  /** The folder the agent runs in (a fresh one by default). */
  work = tempDir(`${name}-work-`),
): Promise<Session> {
  const runs = tempDir(`real-${name}-`);
  // The mock in this process: its subject is the agent and record in front of it, not the mock's CLI.
  const mock = await startProbeMock(join(FIXTURES, `${script}.yaml`), { runsDir: runs });
  const upstream = printedUpstream ? mock.baseUrl : new URL(mock.baseUrl).origin;
  const front = await before?.(upstream);
  const record = [
    MAIN,
    "record",
    "--upstream",
    upstream,
    "--runs",
    runs,
    "--name",
    name,
    "--no-view",
    ...recordFlags,
    ...(front?.flags ?? []),
    "--",
  ];
  let agent: Session["agent"];
  try {
    agent = await runAgent(process.execPath, [...record, program, ...args], env, work);
    await front?.close();
  } finally {
    await mock.close();
  }
  return { agent, captured: join(runs, name), upstream: mock.dir, runs };
}

/**
 * A fresh HOME and TMPDIR (the agents keep scratch files there) and nothing else of the test
 * runner's environment, which may hold real keys.
 */
function isolatedEnv(home: string): NodeJS.ProcessEnv {
  const tmp = join(home, "tmp");
  mkdirSync(tmp, { recursive: true });
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, TMPDIR: tmp, LANG: "C.UTF-8", TZ: "UTC" };
}

/** What every real agent's session must show, whatever the agent. */
function expectFaithfulCapture(session: Session, api: string, secret: string, by: string): void {
  const { agent, captured, upstream, runs } = session;
  expect(agent.code, `the agent's stderr: ${agent.stderr}`).toBe(0);
  // The mock's first scripted answer reached the agent and was printed as its reply.
  expect(agent.stdout).toContain("Scripted answer one.");
  const stored = requestRows(captured);
  const received = requestRows(upstream);
  expect(stored.length).toBeGreaterThan(0);
  for (const row of stored) expect(row).toMatchObject({ kind: "loop", api });
  // Byte for byte what the upstream received, request by request.
  expect(stored.map((row) => row.body)).toEqual(received.map((row) => row.body));
  const records = jsonl<CapturedRecord>(join(captured, "requests.jsonl"));
  expect(records.map(({ status, ending }) => ({ status, ending }))).toEqual(
    stored.map(() => ({ status: 200, ending: "complete" })),
  );
  // The same size in bytes and the same hash of the body's bytes as the mock's own records.
  const bodyOf = ({ bodyBytes, hashes }: CapturedRecord) => ({ bodyBytes, hash: hashes.body });
  expect(records.map(bodyOf)).toEqual(jsonl<CapturedRecord>(join(upstream, "requests.jsonl")).map(bodyOf));
  // Each record names the agent its user-agent header named (what `runs` shows).
  expect(records.map((r) => r.agent)).toEqual(records.map(() => by));
  expect(filesContaining(runs, secret)).toEqual([]);
}

/** A project's instruction file, as a user writes one. */
const INSTRUCTIONS = "# House rules\n\nAlways run `npm test` before you commit, and keep each change small.\n";

/** Every main request inlined the file: its source is there, and each request's sources add up to its total. */
function expectInstructionsAttributed(session: Session, file: string): void {
  const records = jsonl<RequestRecord>(join(session.captured, "requests.jsonl"));
  const main = records.filter((r) => r.conversation?.role === "main");
  expect(main.length).toBeGreaterThan(0);
  for (const record of records)
    expect(Object.values(record.sources!).reduce((a, b) => a + b, 0)).toBe(record.tokens!.total);
  for (const record of main) expect(record.sources![`instructions:${file}`]).toBeGreaterThan(10);
}

const fakeKey = (prefix: string) => `${prefix}-payload-probe-test-${randomBytes(12).toString("hex")}`;

/** The cached install of an agent, or a one-line skip reason. */
function installed(agent: NpmAgentName) {
  const found = findNpmAgent(agent);
  if (!found)
    console.log(`real ${agent} tests skipped: not installed; install it with './run.sh agents install ${agent}'`);
  return found;
}

const claude = installed("claude-code");
const codex = installed("codex");
const geminiCli = installed("gemini-cli");
const pi = findPi();
if (!pi) console.log(`real pi pointer test skipped: pi is not installed; install it with './run.sh agents install pi'`);

/**
 * `gemini -p` with a fresh fake key in `home`, trusting the folder it runs in (a headless run asks for
 * that), in one process: the CLI starts itself again as a child to raise its heap limit unless
 * GEMINI_CLI_NO_RELAUNCH is set (as its own relaunch sets it), which doubles its start (about 1.6
 * against 0.8 s of CPU for `--version`) and changes nothing it sends. The session signed in with
 * Google below runs as a user's does, through the relaunch.
 */
async function geminiCliThroughCapture(home: string, printedUpstream = false, work?: string) {
  const key = fakeKey("AIza");
  const env = { ...isolatedEnv(home), GEMINI_API_KEY: key, GEMINI_CLI_NO_RELAUNCH: "true" };
  const args = ["--skip-trust", "-p", "Say hello."];
  const program = geminiCli!.program;
  const session = await agentThroughCapture(
    "gemini-cli",
    program,
    args,
    env,
    "gemini-cli-session",
    [],
    printedUpstream,
    undefined,
    work,
  );
  return { key, session };
}

/** A HOME where the user chose the API key (without it 0.61 stops at exit 41: gemini-cli-pointer.ts), no usage statistics. */
function geminiApiKeyHome(): string {
  const home = tempDir("gemini-home-");
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
  };
  mkdirSync(join(home, ".gemini"));
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings));
  return home;
}

/** Codex through record on the script with a tool call (test/fixtures/codex-tool-session.yaml): it exits 0 with the answer. */
async function codexToolSession(
  name: string,
  env: NodeJS.ProcessEnv,
  flags: string[],
  before?: Parameters<typeof agentThroughCapture>[7],
): Promise<Session> {
  const args = ["exec", "--skip-git-repo-check", "Run echo, then say hello."];
  const session = await agentThroughCapture(
    name,
    codex!.program,
    args,
    env,
    "codex-tool-session",
    flags,
    false,
    before,
  );
  expect(session.agent.code, `the agent's stderr: ${session.agent.stderr}`).toBe(0);
  expect(session.agent.stdout).toContain("Scripted answer one.");
  return session;
}

const loopTurns = (dir: string) =>
  jsonl<RequestRecord>(join(dir, "requests.jsonl")).filter((record) => record.kind === "loop");

/**
 * Codex with an API key over HTTP (--codex-http) on the tool-call script: its loop turns, and the files
 * of its runs folder that hold its key. Made once for the two tests that compare a session against it
 * (the WebSocket one and the ChatGPT sign-in's): each Codex session costs the suite a record, a mock and
 * Codex. What the tests read is taken before their temp folders are removed.
 */
let keyedHttpTools: Promise<{ turns: RequestRecord[]; keyIn: string[] }> | undefined;
function keyedHttpToolSession() {
  keyedHttpTools ??= (async () => {
    const key = fakeKey("sk");
    const env = { ...isolatedEnv(tempDir("codex-http-home-")), OPENAI_API_KEY: key };
    const session = await codexToolSession("codex-http", env, ["--codex-http"]);
    return { turns: loopTurns(session.captured), keyIn: filesContaining(session.runs, key) };
  })();
  return keyedHttpTools;
}

/** What two sessions of one script must share turn by turn, whatever the transport. */
function turnShape(record: RequestRecord) {
  const { tools, toolsBytes, systemBytes, messagesBytes, roles, response } = record;
  return { tools, toolsBytes, systemBytes, messagesBytes, roles, calls: response?.calls };
}

/** A socket session's turns: the tool's round trip in two turns, the second sending only what is new, rebuilt as the mock did. */
function expectChainedTurns(session: Session, overSocket: RequestRecord[]): void {
  expect(overSocket.map((record) => record.response?.calls)).toEqual([["exec_command"], []]);
  for (const record of overSocket) expect(record.transport).toBe("websocket");
  expect(overSocket[1]!.sentBytes).toBeLessThan(overSocket[1]!.bodyBytes / 4);
  const requests = requestRows(session.captured).filter((row) => row.kind === "loop");
  const sent = JSON.parse(requests[1]!.sent!) as { previous_response_id?: string; input: { type: string }[] };
  expect(sent.previous_response_id).toMatch(/^resp_mock_/);
  expect(sent.input.map((item) => item.type)).toEqual(["function_call_output"]);
  const received = requestRows(session.upstream).filter((row) => row.kind === "loop");
  expect(requests.map((row) => row.body)).toEqual(received.map((row) => row.body));
}

/**
 * A HOME signed in to Codex with ChatGPT as `codex login` leaves it: `.codex/auth.json` with the
 * sign-in's tokens (made up, random), the account id in the tokens' claims (codex-rs
 * login/src/token_data.rs).
 */
function chatgptSignIn(home: string) {
  const account = `acct-${randomBytes(6).toString("hex")}`;
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const jwt = (claims: object) =>
    `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}.${randomBytes(32).toString("base64url")}`;
  const exp = Math.floor(Date.now() / 1000) + 86_400;
  const auth = { chatgpt_account_id: account, chatgpt_plan_type: "plus", chatgpt_user_id: "user-test" };
  const claims = { exp, "https://api.openai.com/auth": auth };
  const tokens = {
    id_token: jwt({ email: "user@example.com", ...claims }),
    access_token: jwt(claims),
    refresh_token: `rt_${randomBytes(24).toString("hex")}`,
    account_id: account,
  };
  const file = join(home, ".codex", "auth.json");
  mkdirSync(join(home, ".codex"));
  const signIn = { auth_mode: "chatgpt", OPENAI_API_KEY: null, tokens, last_refresh: new Date().toISOString() };
  writeFileSync(file, JSON.stringify(signIn, null, 2), { mode: 0o600 });
  return { account, tokens, file };
}

/**
 * A HOME signed in to the Gemini CLI with Google as its browser sign-in leaves it: the cached
 * credentials (`~/.gemini/oauth_creds.json`, made-up tokens valid for an hour), the account it
 * cached (so it asks for no user info), the sign-in selected, no usage statistics.
 */
function googleSignIn(home: string) {
  const tokens = {
    access_token: `ya29.${randomBytes(24).toString("base64url")}`,
    refresh_token: `1//${randomBytes(24).toString("base64url")}`,
  };
  const gemini = join(home, ".gemini");
  mkdirSync(gemini);
  const creds = { ...tokens, token_type: "Bearer", scope: GOOGLE_SCOPES, expiry_date: Date.now() + 3_600_000 };
  writeFileSync(join(gemini, "oauth_creds.json"), JSON.stringify(creds), { mode: 0o600 });
  writeFileSync(join(gemini, "google_accounts.json"), JSON.stringify({ active: "user@example.com", old: [] }));
  const settings = {
    security: { auth: { selectedType: "oauth-personal" } },
    privacy: { usageStatisticsEnabled: false },
  };
  writeFileSync(join(gemini, "settings.json"), JSON.stringify(settings));
  return tokens;
}

const GOOGLE_SCOPES = [
  "https://www.googleapis.com/auth/cloud-platform",
  "https://www.googleapis.com/auth/userinfo.email",
  "https://www.googleapis.com/auth/userinfo.profile",
].join(" ");

/** Google's token-info endpoint as the CLI's check reads it: the token's scopes and lifetime, for `token` alone. */
async function startTokenInfo(token: string) {
  const checked: string[] = [];
  const service = await serveHttp(
    async (request, response) => {
      await readBody(request);
      const known = request.headers.authorization === `Bearer ${token}`;
      checked.push(known ? "known" : "unknown");
      if (!known) return sendJson(response, 400, { error: "invalid_token" });
      sendJson(response, 200, {
        scope: GOOGLE_SCOPES,
        expires_in: 3599,
        email: "user@example.com",
        access_type: "offline",
      });
    },
    () => ({ status: 500, message: "token info" }),
    0,
    "127.0.0.1",
  );
  return { url: `http://127.0.0.1:${service.port}`, checked, close: () => service.close() };
}

/**
 * Claude Code run with "Say hello." in `work` through the capture, the probe stub its one MCP server,
 * its tool search as `toolSearch` says, against the mock serving `script`; it must exit 0.
 */
async function claudeWithProbeStub(work: string, key: string, toolSearch: string, script: string): Promise<Session> {
  const mcpConfig = join(work, "mcp.json");
  const stub = join(PROJECT_ROOT, "dist/stub-mcp/probe-stub.js");
  writeFileSync(
    mcpConfig,
    JSON.stringify({ mcpServers: { "probe-stub": { command: process.execPath, args: [stub] } } }),
  );
  const env = {
    ...isolatedEnv(tempDir("claude-home-")),
    ANTHROPIC_API_KEY: key,
    ...CLAUDE_QUIET,
    ENABLE_TOOL_SEARCH: toolSearch,
  };
  const args = ["-p", "Say hello.", "--mcp-config", mcpConfig, "--strict-mcp-config"];
  const session = await agentThroughCapture(
    "claude-code",
    claude!.program,
    args,
    env,
    script,
    [],
    false,
    undefined,
    work,
  );
  expect(session.agent.code, `the agent's stderr: ${session.agent.stderr}`).toBe(0);
  return session;
}

describe("real agents against the mock through the capture", () => {
  it.skipIf(!claude)(
    "Claude Code (claude -p) with an MCP server, a project CLAUDE.md and a skill: exits 0, every request a full Messages record, bytes as the mock got them, no key in any file; report --context names each, each request's sources add up to its total",
    async () => {
      // One session serves both claims, as for Codex and the Gemini CLI below: the server, the file and
      // the skill change what the prompt holds, not how the request is pointed, relayed or stored.
      const key = fakeKey("sk-ant");
      const work = tempDir("claude-context-work-");
      const claudeMd = "# House rules\n\nAlways run `npm test` before you commit, and keep each change small.\n";
      writeFileSync(join(work, "CLAUDE.md"), claudeMd);
      const skillDir = join(work, ".claude", "skills", "release-notes");
      mkdirSync(skillDir, { recursive: true });
      writeFileSync(
        join(skillDir, "SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes from the merged pull requests since the last tag.\n---\n\n# Release notes\n\nGroup the pull requests by label.\n",
      );
      // Every tool definition sent up front, the MCP server's with them, rather than found by a tool search.
      const session = await claudeWithProbeStub(work, key, "false", "agent-session");
      expectFaithfulCapture(session, "anthropic-messages", key, "claude-code");
      // report reads the run in this process (test/fixtures/cli-in-process.ts): the agent and record are the children here.
      const report = await runInProcess({}, "report", session.captured, "--context", "--json");
      expect(report.status, report.stderr).toBe(0);
      const context = JSON.parse(report.stdout) as ContextJson;
      const records = jsonl<RequestRecord>(join(session.captured, "requests.jsonl"));
      expect(context.requests.map((r) => r.seq)).toEqual(records.map((r) => r.seq));
      for (const request of context.requests) {
        const record = records.find((r) => r.seq === request.seq)!;
        expect(Object.values(request.sources).reduce((a, b) => a + b, 0)).toBe(record.tokens!.total);
      }
      const main = records.filter((r) => r.tools.some((t) => t.startsWith("mcp__probe-stub__")));
      expect(main.length).toBeGreaterThan(0);
      for (const record of main) {
        // The server's tools, as Claude Code names them, are its source and nothing else's.
        const own = record.tools.flatMap((t, i) => (t.startsWith("mcp__probe-stub__") ? [record.toolTokens![i]!] : []));
        expect(record.sources!["mcp:probe-stub"]).toBe(own.reduce((a, b) => a + b, 0));
        expect(record.sources!["instructions:CLAUDE.md"]).toBeGreaterThan(10);
        // The skill is listed (its description in the skills index) and never loaded.
        expect(record.sources!["skill-index:release-notes"]).toBeGreaterThan(5);
        expect(record.sources!["skill:release-notes"]).toBeUndefined();
      }
      expect(context.unusedSkills.map((u) => u.skill)).toContain("release-notes");
      const server = context.sources.find((s) => s.source === "mcp:probe-stub")!;
      expect(server.last).toBe(main.at(-1)!.sources!["mcp:probe-stub"]);
      expect(server.session).toBe(records.reduce((t, r) => t + (r.sources?.["mcp:probe-stub"] ?? 0), 0));
      expect(context.unused.filter((u) => u.source === "mcp:probe-stub").length).toBeGreaterThan(0);
      expect(filesContaining(session.runs, key)).toEqual([]);
    },
    180_000,
  );

  it.skipIf(!claude)(
    "Claude Code with tool search on: the MCP server's deferred tools cost nothing until ToolSearch loads one; its names, the load and the loaded definition are the server's",
    async () => {
      const key = fakeKey("sk-ant");
      const session = await claudeWithProbeStub(
        tempDir("claude-tool-search-work-"),
        key,
        "true",
        "tool-search-session",
      );
      const records = jsonl<RequestRecord>(join(session.captured, "requests.jsonl"));
      const sum = (sources: Record<string, number>) => Object.values(sources).reduce((a, b) => a + b, 0);
      for (const record of records) expect(sum(record.sources!)).toBe(record.tokens!.total);
      // Before the search: the server's tools are names in a message; every deferred tool counts 0.
      const [first] = records;
      expect(first!.tools.some((t) => t.startsWith("mcp__probe-stub__"))).toBe(false);
      expect(first!.sources!["mcp:probe-stub"]).toBeGreaterThan(0);
      for (const name of first!.deferredTools ?? []) expect(first!.toolTokens![first!.tools.indexOf(name)]).toBe(0);
      // After it: stub_echo is sent deferred and loaded by the reference, so its definition counts.
      const after = records.find((r) => r.tools.includes("mcp__probe-stub__stub_echo"))!;
      const echo = after.toolTokens![after.tools.indexOf("mcp__probe-stub__stub_echo")]!;
      expect(after.deferredTools).toContain("mcp__probe-stub__stub_echo");
      expect(echo).toBeGreaterThan(0);
      expect(after.sources!["mcp:probe-stub"]).toBeGreaterThan(first!.sources!["mcp:probe-stub"]! + echo);
      expect(filesContaining(session.runs, key)).toEqual([]);
    },
    180_000,
  );

  it.skipIf(!claude)(
    "Claude Code with a subagent (the Agent tool): no break in its main conversation, the subagent's first request a new conversation",
    async () => {
      const key = fakeKey("sk-ant");
      const session = await agentThroughCapture(
        "claude-code",
        claude!.program,
        ["-p", "Use the Agent tool once, then say hello."],
        {
          ...isolatedEnv(tempDir("claude-home-")),
          ANTHROPIC_API_KEY: key,
          ...CLAUDE_QUIET,
        },
        "subagent-session",
      );
      expect(session.agent.code, `the agent's stderr: ${session.agent.stderr}`).toBe(0);
      const records = jsonl<RequestRecord>(join(session.captured, "requests.jsonl"));
      const main = records.filter((r) => r.conversation?.role === "main");
      const subagents = records.filter((r) => r.conversation?.role === "subagent");
      expect(main.length).toBeGreaterThanOrEqual(2);
      expect(new Set(main.map((r) => r.conversation!.id)).size).toBe(1);
      // Where the provider would read from its cache, the main conversation never breaks.
      expect(main.map((r) => r.prefix?.breakDetail ?? null)).toEqual(main.map(() => null));
      expect(main.slice(1).every((r) => typeof r.prefix?.from === "number")).toBe(true);
      expect(subagents.length).toBeGreaterThanOrEqual(1);
      expect(subagents[0]!.conversation).toMatchObject({ parent: main[0]!.conversation!.id });
      expect(subagents[0]!.prefix).toMatchObject({ newConversation: true, breakAt: null });
      expect(filesContaining(session.runs, key)).toEqual([]);
    },
    180_000,
  );

  it.skipIf(!codex)(
    "Codex with --codex-http (codex exec, our provider selected by record's temporary CODEX_HOME) in a folder with an AGENTS.md: exits 0, every request a full Responses record, bytes as the mock got them, no key in any file; the file a source of its own in every request, sums exact",
    async () => {
      // One session serves both claims (a Codex session costs the suite a record, a mock and Codex):
      // the AGENTS.md changes what the prompt holds, not how the request is pointed, relayed or stored.
      const key = fakeKey("sk");
      const work = tempDir("codex-context-work-");
      writeFileSync(join(work, "AGENTS.md"), INSTRUCTIONS);
      const session = await agentThroughCapture(
        "codex",
        codex!.program,
        ["exec", "--skip-git-repo-check", "Say hello."],
        { ...isolatedEnv(tempDir("codex-home-")), OPENAI_API_KEY: key },
        "agent-session",
        ["--codex-http"],
        false,
        undefined,
        work,
      );
      expectFaithfulCapture(session, "openai-responses", key, "codex");
      // No model in its config: its default model, whose tools come in an additional_tools input item,
      // counted as tools by name (test/capture/real-agent-bodies.test.ts replays such bodies).
      for (const record of jsonl<RequestRecord>(join(session.captured, "requests.jsonl"))) {
        expect(record.model).toBe("gpt-6.1-sol");
        expect(record.tools).toHaveLength(11);
        expect(record.tools).toEqual(
          expect.arrayContaining(["functions.exec", "clock.sleep", "collaboration.spawn_agent"]),
        );
      }
      expectInstructionsAttributed(session, "AGENTS.md");
    },
    180_000,
  );

  it.skipIf(!codex)(
    "Codex on its default WebSocket, a session with a tool call: each turn a full record rebuilt from its chain, equal in tools, system and message sizes to the same session over HTTP, no key in any file",
    async () => {
      const key = fakeKey("sk");
      const env = { ...isolatedEnv(tempDir("codex-sock-home-")), OPENAI_API_KEY: key };
      // Names of one length ("codex-sock", "codex-http"): the work folder's path is in the prompt, and
      // message sizes are compared.
      const socket = await codexToolSession("codex-sock", env, []);
      const http = await keyedHttpToolSession();
      expect(filesContaining(socket.runs, key)).toEqual([]);
      expect(http.keyIn).toEqual([]);
      const overSocket = loopTurns(socket.captured);
      expect(overSocket.map(turnShape)).toEqual(http.turns.map(turnShape));
      expectChainedTurns(socket, overSocket);
    },
    300_000,
  );

  it.skipIf(!codex)(
    "Codex signed in with ChatGPT (no API key), through record's HTTPS listener to a fake ChatGPT backend that checks the sign-in's token: each turn a full record on its WebSocket and over HTTP, equal in tools, system, roles and calls, the backend's calls side requests, no token in any file",
    async () => {
      const run = async (name: string, sockets: boolean) => {
        const home = tempDir(`${name}-home-`);
        const signIn = chatgptSignIn(home);
        const authBefore = readFileSync(signIn.file);
        let backend: FakeChatgptBackend | undefined;
        const front = async (mockOrigin: string) => {
          backend = await startFakeChatgptBackend(mockOrigin, signIn.tokens.access_token, signIn.account, { sockets });
          return { flags: ["--upstream-chatgpt", backend.base], close: () => backend!.close() };
        };
        const session = await codexToolSession(name, isolatedEnv(home), [], front);
        expect(session.agent.stderr).toContain("(for Codex's ChatGPT sign-in)");
        // Every call carried the sign-in's token and account (but the MCP client of the backend's apps,
        // which Codex 0.169 opens without them).
        expect(backend!.refused.filter((line) => line !== "POST /backend-api/ps/mcp")).toEqual([]);
        expect(backend!.seen).toContain("GET /backend-api/wham/accounts/check");
        // Refused, the socket is tried once: Codex takes the refusal as final.
        if (!sockets) expect(backend!.seen.filter((line) => line.startsWith("UPGRADE"))).toHaveLength(1);
        const requests = requestRows(session.captured);
        const urls = (kind: string) => requests.filter((row) => row.kind === kind).map((row) => row.url);
        expect(urls("loop")).toEqual([1, 2].map(() => `${backend!.base}/codex/responses`));
        expect(urls("side")).toContain(`${backend!.base}/wham/accounts/check`);
        // Its model list too, through record's `openai_base_url`: it reaches no chatgpt.com of its own.
        expect(urls("side")).toContain(`${backend!.base}/codex/models?client_version=0.169.0`);
        // The sign-in is read where it is, never copied or written; no token reaches a file or record's output.
        expect(readFileSync(signIn.file)).toEqual(authBefore);
        for (const secret of [signIn.tokens.access_token, signIn.tokens.refresh_token, signIn.tokens.id_token]) {
          expect(filesContaining(session.runs, secret)).toEqual([]);
          expect(session.agent.stderr).not.toContain(secret);
        }
        return session;
      };
      // Names of one length: the work folder's path is in the prompt, and message sizes are compared.
      const socket = await run("codex-chgp", true);
      // The backend refusing the socket (426, as a server without WebSockets answers), Codex falls back
      // to POSTs (zstd-compressed) at its first try, its warm-up, before the first turn. Over HTTP it
      // sends its own copies of earlier items, the call with metadata the server's copy on the
      // socket's chain lacks, and each item's create_time with as many digits as its float has: the
      // messages' sizes differ by those, every other figure is the same.
      const http = await run("codex-chgh", false);
      const overSocket = loopTurns(socket.captured);
      const overHttp = loopTurns(http.captured);
      const withoutMessages = (record: RequestRecord) => {
        const { messagesBytes: _, ...rest } = turnShape(record);
        return rest;
      };
      expect(overSocket.map(withoutMessages)).toEqual(overHttp.map(withoutMessages));
      expectChainedTurns(socket, overSocket);
      for (const record of loopTurns(http.captured)) expect(record.transport).toBeUndefined();
      // Against an API key's session: the same tools, roles and system; Codex signed in with ChatGPT
      // describes more in its exec tool (an image_gen namespace) and tags each input item with
      // metadata, so tools and messages are larger.
      const withKey = (await keyedHttpToolSession()).turns;
      const named = ({ tools, roles, systemBytes }: RequestRecord) => ({ tools, roles, systemBytes });
      expect(overSocket.map(named)).toEqual(withKey.map(named));
    },
    400_000,
  );

  it.skipIf(!geminiCli)(
    "Gemini CLI (gemini -p, the API key selected in its settings) in a folder with a GEMINI.md, --upstream as mock prints it (…/v1): exits 0, its /v1beta requests reach the mock (not /v1/v1beta, issue 35), every request a full Gemini record, bytes as the mock got them, no key in any file; the file a source of its own in every request that inlines it, sums exact",
    async () => {
      // One session serves the three claims, as for Codex above: the file changes what the prompt
      // holds, and the upstream's form where the requests go, not how they are relayed or stored. The
      // origin form is the SDK client's in test/cli/record.test.ts.
      const work = tempDir("gemini-context-work-");
      writeFileSync(join(work, "GEMINI.md"), INSTRUCTIONS);
      const { session, key } = await geminiCliThroughCapture(geminiApiKeyHome(), true, work);
      expectFaithfulCapture(session, "google-generative-ai", key, "gemini-cli");
      expectInstructionsAttributed(session, "GEMINI.md");
    },
    180_000,
  );

  it.skipIf(!geminiCli)(
    "Gemini CLI signed in with Google (a cached sign-in, no key): through record's /code-assist route to the mock, every model request a full Gemini record read from the Code Assist wrapper, no token in any file",
    async () => {
      const home = tempDir("gemini-google-home-");
      const tokens = googleSignIn(home);
      const tokenInfo = await startTokenInfo(tokens.access_token);
      const preload = pathToFileURL(join(FIXTURES, "token-info-double.mjs")).href;
      const env = {
        ...isolatedEnv(home),
        NODE_OPTIONS: `--import=${preload}`,
        PAYLOAD_PROBE_TOKEN_INFO_DOUBLE: tokenInfo.url,
      };
      const args = ["--skip-trust", "-p", "Say hello."];
      let session: Session;
      try {
        session = await agentThroughCapture(
          "gemini-google",
          geminiCli!.program,
          args,
          env,
          "gemini-code-assist-session",
        );
      } finally {
        await tokenInfo.close();
      }
      expect(session.agent.code, `the agent's stderr: ${session.agent.stderr}`).toBe(0);
      expect(session.agent.stdout).toContain("Scripted answer one.");
      // The sign-in was checked, with its own token.
      expect(tokenInfo.checked).toContain("known");
      expect(tokenInfo.checked).not.toContain("unknown");
      const requests = requestRows(session.captured);
      const loops = requests.filter((row) => row.kind === "loop");
      expect(loops.length).toBeGreaterThan(0);
      for (const row of loops) {
        expect(row).toMatchObject({ api: "google-generative-ai" });
        expect(row.url).toMatch(/\/v1internal:(streamGenerateContent\?alt=sse|generateContent)$/);
      }
      expect(requests.map((row) => row.url)).toContainEqual(expect.stringMatching(/\/v1internal:loadCodeAssist$/));
      const received = requestRows(session.upstream);
      expect(loops.map((row) => row.body)).toEqual(received.map((row) => row.body));
      // The classifier's call (no tools, its JSON answer), then the turn, each with its model from the body.
      const [classifier, turn] = loopTurns(session.captured);
      expect(classifier!.tools).toEqual([]);
      expect(classifier!.response?.text).toContain('"model_choice"');
      expect(turn!.tools.length).toBeGreaterThan(0);
      expect(turn!.response?.text).toBe("Scripted answer one.");
      for (const record of [classifier!, turn!]) {
        expect(record.model).toMatch(/^gemini-/);
        expect(record.systemBytes).toBeGreaterThan(0);
        expect(record.tokens?.total).toBeGreaterThan(0);
      }
      expect(session.agent.stderr).not.toContain("ClassifierStrategy failed");
      for (const secret of [tokens.access_token, tokens.refresh_token]) {
        expect(filesContaining(session.runs, secret)).toEqual([]);
        expect(session.agent.stderr).not.toContain(secret);
      }
    },
    180_000,
  );

  it.skipIf(!geminiCli)(
    "Gemini CLI with no auth type selected: record says beforehand that it will stop, and it stops before any request",
    async () => {
      const home = tempDir("gemini-home-");
      const { session } = await geminiCliThroughCapture(home);
      expect(session.agent.code).toBe(41);
      // The caveat is folded to 80 columns at spaces and slashes: compared without white space.
      const flat = (text: string) => text.replace(/\s+/g, "");
      const said = flat(session.agent.stderr);
      expect(said).toContain(flat(`record: the Gemini CLI stops at "Invalid auth method selected"`));
      expect(said).toContain(flat(join(home, ".gemini", "settings.json")));
      expect(session.agent.stderr).toContain("Invalid auth method selected.\n");
      expect(session.agent.stderr).toContain("record: no request reached the proxy");
    },
    180_000,
  );

  it.skipIf(!pi).each([
    { provider: "anthropic", model: "claude-sonnet-5", api: "anthropic-messages", variable: "ANTHROPIC_API_KEY" },
    { provider: "openai", model: "gpt-5.5", api: "openai-responses", variable: "OPENAI_API_KEY" },
  ])(
    "pi, built-in $provider provider pointed by record's temporary models.json: exits 0, full $api records, bytes as the mock got them, no key in any file",
    async ({ provider, model, api, variable }) => {
      const key = fakeKey("sk");
      const home = tempDir("pi-home-");
      const args = ["-p", "--no-session", "--provider", provider, "--model", model, "Say hello."];
      const session = await agentThroughCapture("pi", pi!.program, [...pi!.programArgs, ...args], {
        ...isolatedEnv(home),
        [variable]: key,
        PI_OFFLINE: "1",
      });
      expectFaithfulCapture(session, api, key, "pi");
    },
    180_000,
  );
});
