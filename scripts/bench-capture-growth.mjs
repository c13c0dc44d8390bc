#!/usr/bin/env node
// The capture's own time per request as a conversation grows: what the capture worker spends on
// request 10 against the last ones of a long session, with nothing else in the way (no agent, no
// relay, no queue).
//
//   node scripts/bench-capture-growth.mjs [--requests N] [--kb K] [--baseline=<built checkout>]
//                                         [--api messages|responses|gemini] [--keep DIR] [--variant]
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
//
// --api responses makes the bodies Codex 0.169 sends instead (OpenAI Responses: its tools in an
// additional_tools input item holding a namespace, developer messages, then function_call and
// function_call_output items, each result K KB), --api gemini those of Gemini CLI 0.61 (a
// systemInstruction, one tools element of function declarations, contents growing by a
// functionCall and a functionResponse). --keep DIR keeps this checkout's run as DIR/runs/long (its
// folder and payload-probe.db, DIR fresh): `node scripts/bench-long-session.mjs --session DIR
// --baseline=<ref>` then times report --cost, view and diff on it against another checkout.
// --variant ends every tool's description and the system prompt with a sentence of its own: `diff`
// of a run so made against one made without it compares each pair's tools and system parts.
import "./help.mjs";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
const apiName = flag("--api", "messages");
const keep = flag("--keep", undefined);
const variant = args.includes("--variant") ? " Answer in French." : "";
/** The system prompt's last line: the variant's sentence, when asked for. */
const LAST_LINE = variant ? `${variant.trim()}\n` : "";
const API = { messages: "anthropic-messages", responses: "openai-responses", gemini: "google-generative-ai" }[apiName];
if (!API) {
  process.stderr.write(`bench-capture-growth: --api expected messages, responses or gemini, got "${apiName}"\n`);
  process.exit(2);
}
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
    text: `${"x".repeat(12_000).replace(/x{80}/g, "Follow the user's instructions with care.\n")}${LAST_LINE}`,
    cache_control: { type: "ephemeral" },
  },
];
const TOOLS = Array.from({ length: 20 }, (_, i) => ({
  name: i === 0 ? "Read" : `Tool${i}`,
  description: `Tool ${i}: ${"does one thing well and says so. ".repeat(30)}${variant}`,
  input_schema: {
    type: "object",
    properties: { file_path: { type: "string" }, limit: { type: "number" } },
    required: ["file_path"],
  },
}));

/** Request n's body: the conversation so far (n − 1 tool rounds) with the marker on its last block. */
function* messagesBodies() {
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

const PARAGRAPH = "Follow the user's instructions with care and say what you did.\n";

/** Codex's tools: one namespace of 12 functions, in an additional_tools input item. */
const CODEX_TOOLS = {
  type: "additional_tools",
  role: "developer",
  tools: [
    {
      type: "namespace",
      name: "functions",
      description: "",
      tools: TOOLS.slice(0, 12).map((t) => ({
        type: "function",
        name: t.name === "Read" ? "exec_command" : t.name,
        description: t.description,
        parameters: t.input_schema,
      })),
    },
  ],
};

/** Request n's body as Codex sends it: the same first items, then every call and its output so far. */
function* responsesBodies() {
  const developer = (text) => ({ type: "message", role: "developer", content: [{ type: "input_text", text }] });
  const input = [
    CODEX_TOOLS,
    developer(`You are Codex.\n${PARAGRAPH.repeat(200)}${LAST_LINE}`),
    developer(`<skills_instructions>\n${PARAGRAPH.repeat(40)}</skills_instructions>`),
    {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "<environment_context>cwd: /work</environment_context>" }],
    },
    {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Read the files one by one and summarise." }],
    },
  ];
  for (let n = 1; n <= requests; n++) {
    yield JSON.stringify({
      model: "gpt-5.1-codex",
      stream: true,
      input,
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: { effort: "medium" },
      store: false,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    });
    const call_id = `call_${String(n).padStart(12, "0")}`;
    input.push({
      type: "function_call",
      name: "exec_command",
      arguments: `{"cmd":"cat /work/src/file${n}.ts"}`,
      call_id,
    });
    input.push({ type: "function_call_output", call_id, output: fileText(n) });
  }
}

/** Request n's body as Gemini CLI sends it: its contents grow by a call and its response per request. */
function* geminiBodies() {
  const contents = [{ role: "user", parts: [{ text: "Read the files one by one and summarise." }] }];
  const tools = [
    {
      functionDeclarations: TOOLS.map((t) => ({
        name: t.name === "Read" ? "read_file" : t.name,
        description: t.description,
        parametersJsonSchema: t.input_schema,
      })),
    },
  ];
  for (let n = 1; n <= requests; n++) {
    yield JSON.stringify({
      contents,
      systemInstruction: {
        parts: [{ text: `You are an interactive CLI agent.\n${PARAGRAPH.repeat(200)}${LAST_LINE}` }],
      },
      tools,
      generationConfig: { temperature: 1, topP: 0.95, thinkingConfig: { includeThoughts: true } },
    });
    contents.push({
      role: "model",
      parts: [{ functionCall: { name: "read_file", args: { path: `src/file${n}.ts` } } }],
    });
    contents.push({
      role: "user",
      parts: [{ functionResponse: { name: "read_file", response: { output: fileText(n) } } }],
    });
  }
}

const SHAPES = {
  "anthropic-messages": { url: "/v1/messages", bodies: messagesBodies },
  "openai-responses": { url: "/v1/responses", bodies: responsesBodies },
  "google-generative-ai": { url: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", bodies: geminiBodies },
};

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
  const { codecFor } = await import(pathToFileURL(join(checkout, "dist/providers/codecs.js")).href);
  const runsDir = keep ? join(keep, "runs") : mkdtempSync(join(tmpdir(), "pp-capture-growth-"));
  mkdirSync(runsDir, { recursive: true });
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = join(runsDir, "token-cache");
  const run = openCaptureRun({ name: keep ? "long" : "growth", runsDir, keepRecords: false });
  await run.capture.ready();
  const times = [];
  const { url, bodies } = SHAPES[API];
  try {
    for (const body of bodies()) {
      const request = { kind: "loop", api: API, url, body };
      const reply =
        API === "anthropic-messages"
          ? REPLY
          : codecFor(API)
              .renderReply({ kind: "text", text: "ok", usage: { inputTokens: 10, outputTokens: 2 } }, body, url)
              .chunks.join("");
      const outcome = { body: reply, status: 200, firstByteMs: 1, ending: "complete" };
      const started = process.cpuUsage();
      await run.capture.recordExchange(request, outcome, new Date().toISOString(), 1);
      const { user, system } = process.cpuUsage(started);
      times.push((user + system) / 1000);
    }
    run.close("captured", { lost: 0, drop: false });
  } finally {
    if (!keep) rmSync(runsDir, { recursive: true, force: true });
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
    [
      self,
      ...["--child", checkout, "--requests", String(requests), "--kb", String(kb), "--api", apiName],
      ...(keep && checkout === here ? ["--keep", resolve(keep)] : []),
      ...(variant ? ["--variant"] : []),
    ],
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
  if (keep && existsSync(keep)) {
    process.stderr.write(`bench-capture-growth: --keep: ${keep} exists already\n`);
    process.exit(2);
  }
  if (keep && baseline) {
    process.stderr.write("bench-capture-growth: --keep keeps one checkout's run: give no --baseline with it\n");
    process.exit(2);
  }
  const load = () => loadavg()[0].toFixed(1);
  process.stderr.write(`${requests} ${apiName} requests, ${kb} KB a tool result, load ${load()}\n`);
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
