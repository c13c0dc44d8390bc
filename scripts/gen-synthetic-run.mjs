#!/usr/bin/env node
// Writes a synthetic run folder — requests.jsonl (and with --payloads, payloads.jsonl) — of N
// requests with realistic wire bodies: coding-agent sessions of 24 requests each, eight tools with
// real-sized descriptions and schemas, a 2.5 KB system prompt, tool results of source text. Every
// record is made by the capture's own code (the openai-completions codec, buildRecord, the
// tokenizer, the prefix locator, and the capture's RequestsWriter, which writes the run index beside
// requests.jsonl), so report and diff read exactly what a capture writes.
// Reads the built code: run ./run.sh once (or npx tsc -p tsconfig.json) first.
//
//   node scripts/gen-synthetic-run.mjs <dir> <requests> [--variant a|b] [--payloads]
//
// Variant b is the same sessions with one more tool appended from each session's third request
// on — a configuration change whose cache breaks `diff` must find at every session.
import "./help.mjs";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { PrefixLocator } from "../dist/capture/prefix.js";
import { buildRecord } from "../dist/capture/record.js";
import { RequestsWriter } from "../dist/capture/requests-writer.js";
import { RUN_FOLDER_FILES } from "../dist/capture/run-format.js";
import { loadTokenCounter } from "../dist/capture/tokens.js";
import { JsonlWriter } from "../dist/files/jsonl.js";
import { removeOwnFolder } from "../dist/files/safe-path.js";
import { resolveModel } from "../dist/providers/models.js";
import { openaiCompletions } from "../dist/providers/openai-completions.js";

const [dir, countArg, ...flags] = process.argv.slice(2);
if (!dir || !countArg) {
  console.error("usage: node scripts/gen-synthetic-run.mjs <dir> <requests> [--variant a|b] [--payloads]");
  process.exit(2);
}
const REQUESTS = Number(countArg);
const VARIANT = flags.includes("--variant") ? flags[flags.indexOf("--variant") + 1] : "a";
const PAYLOADS = flags.includes("--payloads");
const SESSION = 24;

const words = "file path line change test build error value return function module import export type const".split(" ");
/** Deterministic filler text: pseudo-random words, so the tokenizer sees varied text. */
function prose(seed, length) {
  let x = (seed * 2654435761) >>> 0;
  const out = [];
  let size = 0;
  while (size < length) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = words[x % words.length];
    out.push(word);
    size += word.length + 1;
  }
  return out.join(" ");
}

function sourceText(seed, lines) {
  const out = [];
  for (let i = 0; i < lines; i++)
    out.push(
      `${i + 1}\texport function ${words[(seed + i) % words.length]}${i}(input: string): number { return input.length + ${seed % 97}; } // ${prose(seed + i, 30)}`,
    );
  return out.join("\n");
}

function toolDefinition(name, i) {
  return {
    name,
    description: `${prose(i + 1, 380)}.`,
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: prose(i + 50, 60) },
        offset: { type: "number", description: prose(i + 70, 40) },
        limit: { type: "number", description: prose(i + 90, 40) },
      },
      required: ["path"],
    },
  };
}

const BASE_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "mcp"].map(toolDefinition);
const EXTRA_TOOL = toolDefinition("a_tool1", 99);
const SYSTEM = `You are a coding agent.\n${prose(7, 2400)}\nCurrent working directory: /tmp/payload-probe/bench/cwd`;
const model = resolveModel("token-plan/qwen3.8-flash", "openai-completions");

// Replaces only a run folder (one this script or a capture wrote), never whatever else <dir> names.
removeOwnFolder(dirname(resolve(dir)), resolve(dir), RUN_FOLDER_FILES, "a run folder");
mkdirSync(dir, { recursive: true });
const requests = new RequestsWriter(dir);
const payloads = PAYLOADS ? new JsonlWriter(join(dir, "payloads.jsonl")) : null;
const counter = await loadTokenCounter();
const run = `synthetic-${VARIANT}`;
const prefixes = new PrefixLocator();
let previous = null;
let messages = [];
const started = performance.now();

for (let seq = 1; seq <= REQUESTS; seq++) {
  const step = (seq - 1) % SESSION;
  if (step === 0) {
    messages = [{ role: "user", content: `Session ${seq}: ${prose(seq, 300)}` }];
    previous = null;
  } else if (step === SESSION / 2) {
    messages.push({ role: "user", content: `Next: ${prose(seq, 200)}` });
  } else {
    const id = `call_${seq}`;
    messages.push({
      role: "assistant",
      text: "",
      toolCalls: [{ id, name: "read", arguments: JSON.stringify({ path: `src/file${seq % 50}.ts` }) }],
    });
    messages.push({
      role: "tool",
      toolCallId: id,
      toolName: "read",
      content: sourceText(seq, 4 + (seq % 12)),
      isError: false,
    });
  }
  const tools = VARIANT === "b" && step >= 2 ? [...BASE_TOOLS, EXTRA_TOOL] : BASE_TOOLS;
  const request = openaiCompletions.buildRequest(model, { systemPrompt: SYSTEM, messages, tools }, "loop");
  const dissection = openaiCompletions.dissect(request.body);
  const prefix = prefixes.locate(previous, dissection, counter);
  previous = dissection;
  const t = counter.countRequestTokens(dissection);
  const record = buildRecord({
    run,
    probe: run,
    seq,
    ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    durationMs: 1,
    request,
    dissection,
    response: {
      message: { role: "assistant", text: "", toolCalls: [{ id: `call_${seq + 1}`, name: "read", arguments: "{}" }] },
    },
    markers: { source: { in: "messages", match: "export function" } },
    prefix,
    tokens: { encoding: counter.encoding, tools: t.tools, system: t.system, messages: t.messages, total: t.total },
  });
  requests.write(record);
  payloads?.write({ type: "request", seq, kind: "loop", api: request.api, url: request.url, body: request.body });
  if (seq % 10_000 === 0)
    process.stderr.write(`${seq} requests (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}
requests.close();
payloads?.close();
console.log(`${dir}: ${REQUESTS} requests, variant ${VARIANT}${PAYLOADS ? ", with payloads" : ""}`);
