#!/usr/bin/env node
// The capture's own time per request as a conversation grows: what the capture worker spends on
// request 10 against the last ones of a long session, with nothing else in the way (no agent, no
// relay, no queue).
//
//   node scripts/bench-capture-growth.mjs [--requests N] [--kb K] [--baseline=<built checkout>]
//
// Makes N Anthropic Messages bodies shaped as Claude Code sends them in a working session (a
// system prompt in blocks, 20 tool definitions, then the whole conversation again with a cache
// marker on its last block): each request adds an assistant turn (text and a Read call) and a user
// turn with its K KB tool result (default N 600, K 4), so request 600 is about 2.9 MB and 1,200
// messages, as the long-session benchmark's (scripts/bench-long-session.mjs) is. Each body goes
// through a real capture run (openCaptureRun in a fresh folder, its SQLite database and a fresh
// token cache, secrets scanned) by `recordExchange`, as the capture worker hands it an exchange;
// each is timed by the CPU time it took (process.cpuUsage), which a busy machine's waits for a core
// do not inflate as they do wall time. Prints the median of requests 5–15, of requests N/2−5 … N/2+5 and of the last
// ten, in milliseconds, and late / early. With --baseline the other checkout's capture (its dist/,
// built) does the same in a child process of its own, taken in turns with this one's (this, the
// baseline, this again), and the two are printed side by side with this / baseline.
import "./help.mjs";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (at < 0) return fallback;
  return args[at].includes("=") ? args[at].slice(name.length + 1) : args[at + 1];
};
const requests = Number(flag("--requests", "600"));
const kb = Number(flag("--kb", "4"));
const baseline = flag("--baseline", undefined);
const child = flag("--child", undefined);
if (!(requests >= 20) || !(kb > 0)) {
  process.stderr.write("bench-capture-growth: --requests expected a number of at least 20, --kb a positive number\n");
  process.exit(2);
}

/** A tool result of about K KB, different in every request (a file's lines). */
function fileText(n) {
  const lines = [];
  for (let i = 0; lines.join("\n").length < kb * 1024; i++)
    lines.push(`${String(i + 1).padStart(6)}\tconst value${n}_${i} = compute(${n * 31 + i}, "row ${i} of file ${n}");`);
  return lines.join("\n");
}

const SYSTEM = [
  { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
  {
    type: "text",
    text: "x".repeat(12_000).replace(/x{80}/g, "Follow the user's instructions with care.\n"),
    cache_control: { type: "ephemeral" },
  },
];
const TOOLS = Array.from({ length: 20 }, (_, i) => ({
  name: i === 0 ? "Read" : `Tool${i}`,
  description: `Tool ${i}: ${"does one thing well and says so. ".repeat(30)}`,
  input_schema: {
    type: "object",
    properties: { file_path: { type: "string" }, limit: { type: "number" } },
    required: ["file_path"],
  },
}));

/** Request n's body: the conversation so far (n − 1 tool rounds) with the marker on its last block. */
function* bodies() {
  const messages = [{ role: "user", content: [{ type: "text", text: "Read the files one by one and summarise." }] }];
  for (let n = 1; n <= requests; n++) {
    const last = structuredClone(messages.at(-1));
    last.content.at(-1).cache_control = { type: "ephemeral" };
    const sent = [...messages.slice(0, -1), last];
    yield JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 32000,
      system: SYSTEM,
      tools: TOOLS,
      messages: sent,
      stream: true,
    });
    const id = `toolu_${String(n).padStart(20, "0")}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Reading file ${n}.` },
        { type: "tool_use", id, name: "Read", input: { file_path: `/work/src/file${n}.ts` } },
      ],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: fileText(n) }] });
  }
}

const REPLY = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join("");

/** This process measures one checkout's capture and prints its times as JSON. */
async function measureChild(checkout) {
  const { openCaptureRun } = await import(pathToFileURL(join(checkout, "dist/capture/capture-run.js")).href);
  const runsDir = mkdtempSync(join(tmpdir(), "pp-capture-growth-"));
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = join(runsDir, "token-cache");
  const run = openCaptureRun({ name: "growth", runsDir, keepRecords: false });
  await run.capture.ready();
  const times = [];
  try {
    for (const body of bodies()) {
      const request = { kind: "loop", api: "anthropic-messages", url: "/v1/messages", body };
      const outcome = { body: REPLY, status: 200, firstByteMs: 1, ending: "complete" };
      const started = process.cpuUsage();
      await run.capture.recordExchange(request, outcome, new Date().toISOString(), 1);
      const { user, system } = process.cpuUsage(started);
      times.push((user + system) / 1000);
    }
    run.close("captured", { lost: 0, drop: false });
  } finally {
    rmSync(runsDir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(times)}\n`);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

function summary(times) {
  const mid = Math.floor(times.length / 2);
  const early = median(times.slice(4, 15));
  const middle = median(times.slice(mid - 5, mid + 6));
  const late = median(times.slice(-10));
  return { early, middle, late, total: times.reduce((a, b) => a + b, 0) };
}

function measure(checkout) {
  const self = fileURLToPath(import.meta.url);
  const result = spawnSync(
    process.execPath,
    [self, "--child", checkout, "--requests", String(requests), "--kb", String(kb)],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (result.status !== 0) {
    process.stderr.write(`bench-capture-growth: ${checkout}: ${result.stderr}`);
    process.exit(1);
  }
  process.stderr.write(`  ${checkout}: done\n`);
  return summary(JSON.parse(result.stdout));
}

async function main() {
  const load = () => loadavg()[0].toFixed(1);
  process.stderr.write(`${requests} requests, ${kb} KB a tool result, load ${load()}\n`);
  const mine = measure(here);
  const other = baseline && measure(resolve(baseline));
  const mineAgain = baseline && measure(here);
  const best = (a, b) => (b ? Object.fromEntries(Object.keys(a).map((k) => [k, Math.min(a[k], b[k])])) : a);
  const now = best(mine, mineAgain);
  const ms = (v) => `${v.toFixed(1)} ms`;
  const rows = [
    ["request 5-15 (median)", "early"],
    [`request ${Math.floor(requests / 2) - 4}-${Math.floor(requests / 2) + 6} (median)`, "middle"],
    ["last ten (median)", "late"],
    ["all requests (sum)", "total"],
  ];
  const line = (cells) =>
    process.stdout.write(`${cells.map((c, i) => (i === 0 ? c.padEnd(26) : c.padStart(12))).join(" ")}\n`);
  line(["capture CPU per request", ...(other ? ["baseline", "now", "now/base"] : ["now"])]);
  for (const [label, key] of rows)
    line([label, ...(other ? [ms(other[key]), ms(now[key]), (now[key] / other[key]).toFixed(2)] : [ms(now[key])])]);
  line([
    "late / early",
    ...(other
      ? [(other.late / other.early).toFixed(1), (now.late / now.early).toFixed(1), ""]
      : [(now.late / now.early).toFixed(1)]),
  ]);
  process.stderr.write(
    `load ${load()} at the end${baseline ? "; now is the better of two runs taken around the baseline's" : ""}\n`,
  );
}

if (child) await measureChild(resolve(child));
else await main();
