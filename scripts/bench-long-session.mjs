#!/usr/bin/env node
/**
 * A long coding session, made for real: Claude Code under `record`, kept working by a scripted
 * upstream, and what storing and reading it back costs.
 *
 *   node scripts/bench-long-session.mjs [--requests N] [--kb K] [--replays R] [--keep DIR]
 *                                       [--baseline=<checkout or git ref>] [--session DIR]
 *
 * The upstream (an Anthropic Messages server in this process) answers every request that carries
 * Claude Code's tools with a call of its Read tool on a file of its own (K KB, default 4, each file
 * different), so the conversation grows by one tool call and its result per request, until N such
 * requests (default 300); then it answers a text and Claude Code ends. Requests without the tools (a
 * small-model call) get a text. Its reported usage stays small (and auto-compaction is off), so the
 * context grows whatever N is. Claude Code 2.1.328 comes from the user's cache (`agents install
 * claude-code`), with a fresh HOME and a fake key, as test/agents/real-agents.test.ts runs it.
 *
 * Prints, for this checkout and (with --baseline) for the other one, each in its own fresh runs folder:
 * - requests and request bodies sent (the bytes the upstream received) against what the capture
 *   stored: the run folder and payload-probe.db, and their ratio to the bodies;
 * - the session's wall time and record's peak RSS (VmHWM of its process);
 * - the capture lag (the upstream's reply ended → record's line saying the request was written),
 *   median over requests 5–15 against the last ten: what the capture worker (context sources, tokens,
 *   prefix, SQLite) spends on a request as the body grows;
 * - the latency the relay adds to an early body and to the last one: a fresh `proxy` in front of the
 *   same upstream, each body sent R times straight to the upstream and through the
 *   proxy, in turns, median of each (default R 20);
 * - wall time, CPU time (user + system, which waiting for a busy core does not add to) and peak
 *   RSS (GNU time) of `report`, `report --cost`, `view`, `diff` of the run against itself and `show`
 *   of its last request, each run once with output discarded.
 * With --baseline the two checkouts' figures are printed side by side with their ratios (this /
 * baseline). A git ref is checked out into a temporary worktree and built there (`./run.sh --version`,
 * with a copy of this checkout's node_modules), removed afterwards; a folder is taken as a built
 * checkout. The session is made once per checkout, so the upstream's script is the same for both.
 * --keep DIR keeps each checkout's runs folder under DIR (a fresh folder named after the checkout).
 * --session DIR makes no session: it times the commands alone on the run a --keep kept in DIR (say
 * DIR/this), this checkout's and the baseline's in turns (this, baseline, this again; the better of
 * this checkout's two), so both read the same run under the same load.
 */
import "./help.mjs";
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { arch, homedir, loadavg, platform, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(flag("requests", 300));
const KB = Number(flag("kb", 4));
const REPLAYS = Number(flag("replays", 20));
const keepDir = flag("keep", undefined);
const baselineArg = option("baseline") ?? flag("baseline", undefined);
const sessionDir = flag("session", undefined);

function fail(message) {
  process.stderr.write(`bench-long-session: ${message}\n`);
  process.exit(2);
}

/** A failure once folders or processes exist: thrown, so each `finally` removes what it made. */
class BenchFailure extends Error {}
const stop = (message) => {
  throw new BenchFailure(message);
};
if (!Number.isInteger(N) || N < 20) fail("--requests: expected a whole number of at least 20");
if (!(KB > 0)) fail("--kb: expected a positive number");

function claudeProgram() {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  const agents = join(cache, "payload-probe", "agents");
  const install = existsSync(agents) ? readdirSync(agents).find((d) => d.startsWith("claude-code-")) : undefined;
  const program = install
    ? join(agents, install, "node_modules", "@anthropic-ai", `claude-code-${platform()}-${arch()}`, "claude")
    : undefined;
  if (!program || !existsSync(program))
    fail("Claude Code is not installed; install it with './run.sh agents install claude-code'");
  return program;
}

/** The workspace: one file per scripted Read, each different text of about KB kilobytes. */
function makeWorkspace(dir) {
  mkdirSync(dir, { recursive: true });
  for (let i = 1; i <= N; i++) {
    const lines = [];
    for (let line = 0; lines.join("\n").length < KB * 1024; line++)
      lines.push(
        `export function step${i}_${line}(input) { return input * ${i + line} + ${(i * 7919 + line) % 1000}; }`,
      );
    writeFileSync(join(dir, `module-${i}.js`), `${lines.join("\n")}\n`);
  }
}

/** Looked up before anything is made, so a missing install leaves nothing behind. */
const CLAUDE = claudeProgram();

const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The Messages reply: a Read call of the workspace's `file`, or a text; streamed or one JSON body. */
function reply(body, block, stream) {
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  const usage = { input_tokens: 12, output_tokens: 8 };
  const message = { id: `msg_${Date.now()}`, type: "message", role: "assistant", model: body.model ?? "claude" };
  if (!stream)
    return {
      type: "application/json",
      text: JSON.stringify({ ...message, content: [block], stop_reason: stop, usage }),
    };
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta =
    block.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
      : { type: "text_delta", text: block.text };
  const text =
    sse("message_start", { message: { ...message, content: [], stop_reason: null, usage } }) +
    sse("content_block_start", { index: 0, content_block: start }) +
    sse("content_block_delta", { index: 0, delta }) +
    sse("content_block_stop", { index: 0 }) +
    sse("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 8 } }) +
    sse("message_stop", {});
  return { type: "text/event-stream", text };
}

/**
 * The scripted upstream. Keeps per request its arrival, body size and reply end, and the bodies of
 * the 10th and the last request with tools (for the replay).
 */
async function startUpstream(workspace) {
  const state = { requests: [], bodyBytes: 0, loop: 0, early: null, late: null, replaying: false };
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (c) => chunks.push(c));
    request.on("end", () => {
      const raw = Buffer.concat(chunks);
      const arrived = performance.now();
      if (request.url.includes("count_tokens")) {
        response.writeHead(200, { "content-type": "application/json" });
        return response.end('{"input_tokens":12}');
      }
      if (request.method !== "POST" || !request.url.includes("/messages")) {
        response.writeHead(404);
        return response.end();
      }
      let body = {};
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {}
      const withTools = Array.isArray(body.tools) && body.tools.some((t) => t?.name === "Read");
      let block = { type: "text", text: "ok" };
      if (withTools && !state.replaying) {
        state.loop++;
        if (state.loop === 10) state.early = raw;
        state.late = raw;
        block =
          state.loop < N
            ? {
                type: "tool_use",
                id: `toolu_${state.loop}`,
                name: "Read",
                input: { file_path: join(workspace, `module-${state.loop}.js`) },
              }
            : { type: "text", text: "Done." };
      }
      const { type, text } = reply(body, block, body.stream === true);
      response.writeHead(200, { "content-type": type });
      response.end(text, () => {
        if (!state.replaying)
          state.requests.push({ arrived, ended: performance.now(), bytes: raw.length, loop: withTools });
      });
      if (!state.replaying) state.bodyBytes += raw.length;
    });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { server, state, url: `http://127.0.0.1:${server.address().port}` };
}

/** Peak RSS of a live process, from /proc (0 once it is gone). */
function vmHwmKb(pid) {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Claude Code under `record` of `checkout`; resolves with the session's figures. */
async function recordSession(checkout, runs, upstream, workspace) {
  const home = join(runs, "..", "home");
  mkdirSync(join(home, "tmp"), { recursive: true });
  const env = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    TMPDIR: join(home, "tmp"),
    LANG: "C.UTF-8",
    TZ: "UTC",
    ANTHROPIC_API_KEY: "sk-ant-payload-probe-bench-not-a-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_AUTO_COMPACT: "1",
  };
  const prompt = "Read the files module-1.js, module-2.js and so on, one at a time, until told to stop.";
  const argv = [
    join(checkout, "dist/cli/main.js"),
    "record",
    "--upstream",
    upstream.url,
    "--runs",
    runs,
    "--name",
    "long",
    "--no-view",
    "--",
    CLAUDE,
    "-p",
    prompt,
    "--allowedTools",
    "Read",
  ];
  const started = performance.now();
  const child = spawn(process.execPath, argv, { cwd: workspace, env, stdio: ["ignore", "ignore", "pipe"] });
  const written = [];
  let peakKb = 0;
  let pending = "";
  let tail = "";
  child.stderr.on("data", (chunk) => {
    const now = performance.now();
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) {
      const seq = /^#(\d+) /.exec(line);
      if (seq) written[Number(seq[1])] = now;
      else tail = `${tail}${line}\n`.slice(-2000);
      if (seq && Number(seq[1]) % 50 === 0) process.stderr.write(`  … ${seq[1]} requests recorded\n`);
    }
  });
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, vmHwmKb(child.pid))), 250);
  const code = await new Promise((done) => child.once("close", done));
  clearInterval(sampler);
  if (code !== 0) stop(`record exited ${code}; its stderr ended:\n${tail}`);
  return { seconds: (performance.now() - started) / 1000, peakKb, written };
}

const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : Number.NaN;
};

/** Median lag from the reply's end to record's line, over the requests (1-based) from..to. */
function captureLag(state, written, from, to) {
  const lags = [];
  for (let seq = from; seq <= to; seq++) {
    const request = state.requests[seq - 1];
    if (request && written[seq] !== undefined) lags.push(written[seq] - request.ended);
  }
  return median(lags);
}

function folderBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}

/** Starts `proxy` of `checkout` in front of the upstream; resolves with its URL and a stop. */
async function startProxy(checkout, upstreamUrl, runs) {
  const child = spawn(
    process.execPath,
    [
      join(checkout, "dist/cli/main.js"),
      "proxy",
      "--upstream",
      upstreamUrl,
      "--runs",
      runs,
      "--name",
      "replay",
      "--port",
      "0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr.resume();
  const url = await new Promise((done, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const found = /LISTENING (\S+)/.exec(out);
      if (found) done(new URL(found[1]).origin);
    });
    child.once("close", (code) => reject(new Error(`proxy exited ${code} before listening`)));
  });
  return {
    url,
    stop: () =>
      new Promise((done) => {
        child.once("close", done);
        child.kill("SIGINT");
      }),
  };
}

async function timeOne(url, body) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "not-a-key", "anthropic-version": "2023-06-01" },
    body,
  });
  await response.arrayBuffer();
  return performance.now() - started;
}

/** Added latency of the relay for the early and the late body: R sends each, direct and proxied in turns. */
async function replayLatency(checkout, upstream, runs) {
  upstream.state.replaying = true;
  const proxy = await startProxy(checkout, upstream.url, runs);
  const result = {};
  try {
    for (const [name, body] of [
      ["early", upstream.state.early],
      ["late", upstream.state.late],
    ]) {
      const direct = [];
      const proxied = [];
      await timeOne(proxy.url, body);
      for (let i = 0; i < REPLAYS; i++) {
        direct.push(await timeOne(upstream.url, body));
        proxied.push(await timeOne(proxy.url, body));
      }
      result[name] = { bytes: body.length, added: median(proxied) - median(direct) };
    }
  } finally {
    await proxy.stop();
    upstream.state.replaying = false;
  }
  return result;
}

/** Runs one analysis command of `checkout` on the run; wall and CPU seconds (user + system) and peak RSS in MB. */
function timedCommand(checkout, runs, argv) {
  const started = performance.now();
  const child = spawnSync(
    "/usr/bin/time",
    ["-f", "%M %U %S", process.execPath, join(checkout, "dist/cli/main.js"), ...argv, "--runs", runs],
    { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", maxBuffer: 1 << 26 },
  );
  const seconds = (performance.now() - started) / 1000;
  const lines = child.stderr.trim().split("\n");
  const [kb, user, system] = lines.at(-1).split(" ").map(Number);
  const mb = kb / 1024;
  if (child.status === 0) return { seconds, cpu: user + system, mb };
  // A command that fails is a finding too: said here, and its row reads "exit N".
  const error = lines.find((line) => /Error|error:/.test(line)) ?? lines.at(-3);
  process.stderr.write(
    `  ${argv[0]} exited ${child.status} after ${seconds.toFixed(1)} s, peak ${mb.toFixed(0)} MB: ${error}\n`,
  );
  return { seconds: `exit ${child.status}`, cpu: Number.NaN, mb };
}

/** The analysis commands timed on a session's run of `count` requests; the view's page goes to `page`. */
function analysisCommands(count, page) {
  return {
    report: ["report", "long", "--plain"],
    "report --cost": ["report", "long", "--cost"],
    view: ["view", "long", "--out", page],
    "diff (itself)": ["diff", "long", "long"],
    "show (last)": ["show", "long", String(count)],
  };
}

/** Each analysis command of `checkout` on the run in `runs`, its figures added to `figures`. */
function timeCommands(checkout, label, runs, count, page, figures) {
  for (const [name, argv] of Object.entries(analysisCommands(count, page))) {
    process.stderr.write(`${label}: ${name} …\n`);
    const { seconds, cpu, mb } = timedCommand(checkout, runs, argv);
    figures[`${name} s`] = seconds;
    figures[`${name} cpu`] = cpu;
    figures[`${name} MB`] = mb;
  }
  figures.viewPageMb = existsSync(page) ? statSync(page).size / 1e6 : Number.NaN;
  return figures;
}

async function measure(checkout, label) {
  const base = keepDir ? join(resolve(keepDir), label) : mkdtempSync(join(tmpdir(), "pp-long-"));
  if (keepDir) {
    if (existsSync(base)) stop(`--keep: ${base} exists already`);
    mkdirSync(base, { recursive: true });
  }
  const runs = join(base, "runs");
  const workspace = join(base, "work");
  mkdirSync(runs);
  makeWorkspace(workspace);
  const upstream = await startUpstream(workspace);
  try {
    process.stderr.write(`${label}: Claude Code under record for ${N} requests with tools …\n`);
    const session = await recordSession(checkout, runs, upstream, workspace);
    const { state } = upstream;
    const stored =
      folderBytes(join(runs, "long")) +
      ["payload-probe.db", "payload-probe.db-wal"]
        .map((f) => join(runs, f))
        .filter(existsSync)
        .reduce((sum, f) => sum + statSync(f).size, 0);
    const count = state.requests.length;
    const figures = {
      requests: count,
      sentMb: state.bodyBytes / 1e6,
      storedMb: stored / 1e6,
      storedPct: (100 * stored) / state.bodyBytes,
      sessionS: session.seconds,
      recordMb: session.peakKb / 1024,
      lagEarlyMs: captureLag(state, session.written, 5, 15),
      lagLateMs: captureLag(state, session.written, count - 9, count),
    };
    process.stderr.write(`${label}: replaying an early and the last body through a fresh proxy …\n`);
    const replay = await replayLatency(checkout, upstream, join(base, "replay-runs"));
    figures.earlyKb = replay.early.bytes / 1024;
    figures.lateKb = replay.late.bytes / 1024;
    figures.addedEarlyMs = replay.early.added;
    figures.addedLateMs = replay.late.added;
    timeCommands(checkout, label, runs, count, join(base, "view.html"), figures);
    // Said as soon as known, so a baseline that fails later leaves this checkout's figures behind.
    process.stderr.write(`${label}: ${JSON.stringify(figures)}\n`);
    return figures;
  } finally {
    upstream.server.close();
    if (!keepDir) rmSync(base, { recursive: true, force: true });
  }
}

/** A built checkout for the baseline: a folder as it is, or a git ref built in a temporary worktree. */
function baselineCheckout(ref) {
  if (existsSync(join(ref, "dist/cli/main.js")))
    return { dir: resolve(ref), label: basename(resolve(ref)), remove: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "pp-long-baseline-"));
  const git = (...a) => spawnSync("git", ["-C", root, ...a], { stdio: "inherit" });
  if (git("worktree", "add", "--quiet", "--detach", dir, ref).status !== 0) stop(`--baseline: cannot check out ${ref}`);
  const remove = () => {
    git("worktree", "remove", "--force", dir);
  };
  process.stderr.write(`baseline: building ${ref} in ${dir} …\n`);
  cpSync(join(root, "node_modules"), join(dir, "node_modules"), { recursive: true, verbatimSymlinks: true });
  if (spawnSync("./run.sh", ["--version"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] }).status !== 0) {
    remove();
    stop(`--baseline: ${ref} did not build`);
  }
  return { dir, label: ref, remove };
}

const ROWS = [
  ["requests", "requests", 0],
  ["sentMb", "request bodies sent (MB)", 1],
  ["storedMb", "stored: folder + database (MB)", 1],
  ["storedPct", "stored / sent (%)", 1],
  ["sessionS", "session wall time (s)", 1],
  ["recordMb", "record's peak RSS (MB)", 0],
  ["lagEarlyMs", "capture lag, requests 5-15 (ms)", 1],
  ["lagLateMs", "capture lag, last 10 (ms)", 1],
  ["earlyKb", "replayed early body (KB)", 0],
  ["lateKb", "replayed last body (KB)", 0],
  ["addedEarlyMs", "relay added, early body (ms)", 2],
  ["addedLateMs", "relay added, last body (ms)", 2],
  ...["report", "report --cost", "view", "diff (itself)", "show (last)"].flatMap((name) => [
    [`${name} s`, `${name} (s)`, 2],
    [`${name} cpu`, `${name} CPU (s)`, 2],
    [`${name} MB`, `${name} peak RSS (MB)`, 0],
  ]),
  ["viewPageMb", "view page (MB)", 1],
];

function printTable(columns) {
  const names = Object.keys(columns);
  const header = ["", ...names, ...(names.length === 2 ? ["ratio"] : [])];
  // A session made before (--session) has no figures of its making: those rows are left out.
  const rows = ROWS.filter(([key]) => names.some((n) => key in columns[n])).map(([key, label, digits]) => {
    const values = names.map((n) => columns[n][key]);
    const cells = values.map((v) => (typeof v === "string" ? v : Number.isFinite(v) ? v.toFixed(digits) : "-"));
    const ratio = values[0] / values[1];
    if (names.length === 2) cells.push(Number.isFinite(ratio) ? ratio.toFixed(2) : "-");
    return [label, ...cells];
  });
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => String(r[i]).length)));
  for (const row of [header, ...rows])
    console.log(
      row.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join("  "),
    );
}

/**
 * --session: the commands of this checkout and the baseline's on one run made before (--keep), in
 * turns (this, baseline, this; the better of this checkout's two), so both meet the same run and
 * a changing load falls on both.
 */
function measureSession(dir, baseline) {
  const runs = join(resolve(dir), "runs");
  if (!existsSync(join(runs, "long", "requests.jsonl"))) stop(`--session: ${runs}/long/requests.jsonl is missing`);
  const count = readFileSync(join(runs, "long", "requests.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean).length;
  const pages = mkdtempSync(join(tmpdir(), "pp-long-pages-"));
  try {
    const turn = (checkout, label) =>
      timeCommands(checkout, label, runs, count, join(pages, `${label}.html`), { requests: count });
    const first = turn(root, "this");
    const other = baseline ? turn(baseline.dir, "baseline") : null;
    const second = baseline ? turn(root, "this (again)") : null;
    const best = second ? bestOf(first, second) : first;
    return other ? { this: best, [`baseline ${baseline.label}`]: other } : { this: best };
  } finally {
    rmSync(pages, { recursive: true, force: true });
  }
}

/** Per figure, the smaller of two turns' (a number the load made larger is the less true one). */
function bestOf(a, b) {
  return Object.fromEntries(
    Object.entries(a).map(([key, value]) => [
      key,
      typeof value === "number" && typeof b[key] === "number" ? Math.min(value, b[key]) : value,
    ]),
  );
}

const loadBefore = loadavg()[0];
const columns = {};
try {
  if (sessionDir) {
    const baseline = baselineArg ? baselineCheckout(baselineArg) : null;
    try {
      Object.assign(columns, measureSession(sessionDir, baseline));
    } finally {
      baseline?.remove();
    }
  } else columns.this = await measure(root, "this");
  if (baselineArg && !sessionDir) {
    const baseline = baselineCheckout(baselineArg);
    try {
      columns[`baseline ${baseline.label}`] = await measure(baseline.dir, "baseline");
    } finally {
      baseline.remove();
    }
  }
} catch (error) {
  if (!(error instanceof BenchFailure)) throw error;
  fail(error.message);
}
const made = sessionDir
  ? `A session made before (${columns.this.requests} requests)`
  : `${N} requests with tools, ${KB} KB a tool result`;
const agent = sessionDir ? "" : "Claude Code, ";
console.log(`${agent}${made}; load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`);
printTable(columns);
