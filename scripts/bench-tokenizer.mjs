#!/usr/bin/env node
// Times the capture layer's token counting and cache-prefix diffing on a synthetic run.
// Reads the built code: run `npm run build` (or ./run.sh once) first.
//   node --expose-gc scripts/bench-tokenizer.mjs [requests=100000]
// With --expose-gc the garbage of building each run is collected off the clock.
//   node scripts/bench-tokenizer.mjs --runs
// counts texts of 100k, 200k, 400k and 1M characters instead: runs of one repeated character (a
// base64 image of one colour is a run of `A`s), digits, whitespace, punctuation, mixed-case letters,
// and README.md's ordinary text, printing milliseconds per 100k characters; the last column divides
// that by the 100k figure, so linear growth reads about 1 on every line.
import { readFileSync } from "node:fs";
import "./help.mjs";
import { locatePrefixBreak } from "../dist/capture/prefix.js";
import { loadTokenCounter } from "../dist/capture/tokens.js";

const RUNS_MODE = process.argv[2] === "--runs";
const REQUESTS = RUNS_MODE ? 0 : Number(process.argv[2] ?? 100_000);
/** Requests per synthetic run: a conversation that grows one message per request. */
const RUN_LENGTH = 40;

function tool(i) {
  const name = `tool_${i}`;
  const description = `Does thing ${i} and reports what happened. `.repeat(8);
  const parameters = {
    type: "object",
    properties: { target: { type: "string", description: "What to act on." } },
    required: ["target"],
  };
  return {
    name,
    json: JSON.stringify({ type: "function", function: { name, description, parameters, strict: false } }),
  };
}

function message(i) {
  const role = i % 2 ? "assistant" : "user";
  return {
    role,
    json: JSON.stringify({ role, content: `Step ${i}: a line of conversation — with ünïcode. `.repeat(10) }),
  };
}

/**
 * Request `step` of run `run`, dissected the way a codec would: every JSON segment is a slice of
 * that request's own wire body and the system text is parsed from it, so no two requests share a
 * string and every equal segment has to be compared in full.
 */
function request(run, step) {
  const toolCount = 12 + (step >= RUN_LENGTH / 2 ? 1 : 0); // one tool activated mid-run
  const lines = Array.from({ length: 80 }, (_, i) => `- guideline ${i}: keep edits small and explain them.`);
  if (step >= RUN_LENGTH / 2) lines.splice(3, 0, "- tool_12: newly activated");
  const tools = Array.from({ length: toolCount }, (_, i) => tool(i));
  const system = `Run ${run}.\n${lines.join("\n")}`;
  const messages = Array.from({ length: step + 1 }, (_, i) => message(i));
  const body = JSON.stringify({
    model: "qwen3.8-flash",
    messages: [{ role: "system", content: system }, ...messages.map((m) => JSON.parse(m.json))],
    tools: tools.map((t) => JSON.parse(t.json)),
  });
  let at = 0;
  const slice = (json) => {
    at = body.indexOf(json, at);
    const piece = body.slice(at, at + json.length);
    at += json.length;
    return piece;
  };
  const messageSlices = messages.map((m) => ({ role: m.role, json: slice(m.json), text: "" }));
  return {
    model: "qwen3.8-flash",
    tools: tools.map((t) => ({ name: t.name, json: slice(t.json) })),
    toolsJson: null,
    systemParts: [JSON.parse(body).messages[0].content],
    messages: messageSlices,
    roles: [],
  };
}

const loadStart = performance.now();
const counter = await loadTokenCounter();
console.log(`tokenizer load (o200k_base): ${(performance.now() - loadStart).toFixed(0)} ms`);

const collectGarbage = globalThis.gc ?? (() => {});

/** Texts of `length` characters: runs that gpt-tokenizer merged in quadratic time, and ordinary text. */
const RUN_TEXTS = {
  "A (base64 of a blank image)": (length) => "A".repeat(length),
  a: (length) => "a".repeat(length),
  "7 (digits)": (length) => "7".repeat(length),
  space: (length) => " ".repeat(length),
  newline: (length) => "\n".repeat(length),
  "! (punctuation)": (length) => "!".repeat(length),
  "mixed-case letters": (length) => {
    let seed = 1;
    const letters = [];
    for (let i = 0; i < length; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      letters.push(String.fromCharCode((seed >> 16) % 2 ? 65 + (seed % 26) : 97 + (seed % 26)));
    }
    return letters.join("");
  },
  "ordinary text (README.md)": (length) => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    return readme.repeat(Math.ceil(length / readme.length)).slice(0, length);
  },
};

if (RUNS_MODE) {
  const lengths = [100_000, 200_000, 400_000, 1_000_000];
  console.log(`ms per 100k characters at ${lengths.map((n) => `${n / 1000}k`).join(" / ")}; growth = last / first`);
  for (const [name, make] of Object.entries(RUN_TEXTS)) {
    counter.countText(make(20_000)); // warms the JIT up for this kind of text
    const perHundredK = lengths.map((length) => {
      const text = make(length);
      collectGarbage();
      const start = performance.now();
      counter.countText(text);
      return ((performance.now() - start) * 100_000) / length;
    });
    const figures = perHundredK.map((ms) => ms.toFixed(1).padStart(8)).join(" ");
    console.log(`${name.padEnd(28)} ${figures}   growth ${(perHundredK.at(-1) / perHundredK[0]).toFixed(2)}`);
  }
  process.exit(0);
}

// Runs are built one at a time (holding every request at once would measure the garbage
// collector), and only the diffing and counting are on the clock.
let diffMs = 0;
let countMs = 0;
let chars = 0;
let breaks = 0;
let tokens = 0;
for (let first = 0; first < REQUESTS; first += RUN_LENGTH) {
  const run = Array.from({ length: Math.min(RUN_LENGTH, REQUESTS - first) }, (_, step) =>
    request(first / RUN_LENGTH, step),
  );
  for (const d of run)
    chars +=
      d.tools.reduce((a, t) => a + t.json.length, 0) +
      d.systemParts[0].length +
      d.messages.reduce((a, m) => a + m.json.length, 0);
  collectGarbage();
  let start = performance.now();
  run.forEach((d, step) => {
    if (locatePrefixBreak(step === 0 ? null : run[step - 1], d).breakAt !== null) breaks++;
  });
  diffMs += performance.now() - start;
  start = performance.now();
  for (const d of run) tokens += counter.countRequestTokens(d).total;
  countMs += performance.now() - start;
}

console.log(`${REQUESTS} requests, ${Math.round(chars / REQUESTS)} chars each on average in cache order`);
console.log(
  `prefix diff: ${diffMs.toFixed(0)} ms; breaks found: ${breaks} (one per run of ${RUN_LENGTH}: a tool activated mid-run)`,
);
console.log(`token counts: ${countMs.toFixed(0)} ms; ${tokens} tokens in all`);
