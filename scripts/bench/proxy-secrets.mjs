#!/usr/bin/env node
/**
 * The secrets scan's cost: each rule's worst inputs, the scanner alone, and the capture through the proxy.
 *
 *   node scripts/bench/proxy-secrets.mjs [--bodies K] [--mb M] [--baseline=<other checkout>]  (24 bodies of 1 MB)
 *   node scripts/bench/proxy-secrets.mjs --adversarial [--mb M]   (the worst inputs alone; 1 MB each)
 *   (or node scripts/bench-proxy.mjs --secrets …)
 *
 * Adversarial (first, in both forms): each rule's worst inputs (test/fixtures/secret-adversaries.ts,
 * a unit repeated to M MB) scanned in this process beside ordinary text of the same size (a typical
 * body, as below), best of three each: CPU milliseconds, MB per CPU second and the ratio to ordinary
 * text, the slowest first. Every rule runs in time linear in its input; the linearity test holds each to 10x.
 * Secrets: the secrets scan's cost. First the scanner alone, in this process (one thread): MB/s of
 * wall time and per CPU second (what one core does, however loaded the machine) on K
 * typical bodies of M MB (chat completions JSON whose tool results are this checkout's source files
 * and README, code and prose as a coding agent sends them, with a few made-up keys), in three rounds
 * taken in turns with the baseline checkout's scanner (its dist/ built) and their ratios; then on
 * one 50 MB body, with this process's RSS before and its peak after. Then the capture's throughput through the
 * built proxy (database on), with the scan and with --keep-secrets: the K bodies sent one after
 * another, MB/s from the first send until the proxy has said each was written. Both proxies share a
 * token cache warmed first, so token counting (the same in both) does not hide the difference.
 */
import "../help.mjs";
import { readdirSync, readFileSync } from "node:fs";
import { Agent } from "node:http";
import { join } from "node:path";
import { withHarness } from "./harness.mjs";
import {
  flag,
  loadLine,
  memoryOf,
  root,
  runIfMain,
  startBenchProxy,
  streamingUpstream,
  timedRequest,
} from "./proxy-kit.mjs";

/** This checkout's source files and README: code and prose, what a coding agent's tool results hold. */
function checkoutTexts() {
  const texts = [readFileSync(join(root, "README.md"), "utf8")];
  for (const entry of readdirSync(join(root, "src"), { withFileTypes: true, recursive: true }))
    if (entry.isFile() && entry.name.endsWith(".ts"))
      texts.push(readFileSync(join(entry.parentPath, entry.name), "utf8"));
  return texts;
}

/** A chat completions body of about `mb` MB: a system prompt, then tool calls whose results are checkout files. */
function typicalBody(texts, mb, n) {
  const keys = `AWS_ACCESS_KEY_ID=AKIA${"Q".repeat(12)}${String(n).padStart(4, "0")}\nGITHUB_TOKEN=ghp_${"x".repeat(32)}${String(n).padStart(4, "0")}`;
  const messages = [
    { role: "system", content: texts[0].slice(0, 8000) },
    { role: "user", content: `fix the build\n${keys}` },
  ];
  let size = 0;
  for (let i = 0; size < mb * 1e6; i++) {
    const text = texts[(i + n) % texts.length];
    const args = JSON.stringify({ path: `src/file${i}.ts` });
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${i}`, type: "function", function: { name: "read", arguments: args } }],
    });
    messages.push({ role: "tool", tool_call_id: `c${i}`, content: text });
    size += text.length;
  }
  return JSON.stringify({ model: "bench", messages, stream: true });
}

/** CPU seconds this process spent since `start` (user and system): a loaded machine slows the wall clock, not this. */
function cpuSecondsSince(start) {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1e6;
}

/** One scanner over the bodies: MB/s of wall time and per CPU second. */
function scanRound(scanner, bodies) {
  let bytes = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (const body of bodies) {
    scanner.redact(body);
    bytes += Buffer.byteLength(body);
  }
  return { wall: bytes / 1e6 / ((performance.now() - started) / 1000), cpu: bytes / 1e6 / cpuSecondsSince(cpu) };
}

/**
 * The scanner of this checkout, and of the `--baseline=<checkout>` one when given, in turns over the
 * same bodies in this process: round 1 is each scanner's first pass (the JIT still compiling), the
 * others what it does warm. Bodies are flat strings decoded from bytes, as the capture has them (a
 * JSON.stringify result is a tree of parts, and whatever reads it first pays for joining them).
 */
async function scannerAlone(bodies) {
  const baseline = process.argv.find((arg) => arg.startsWith("--baseline="))?.slice("--baseline=".length);
  const sides = [{ label: "this", dir: root }, ...(baseline ? [{ label: "baseline", dir: baseline }] : [])];
  for (const side of sides) {
    const { SecretScanner } = await import(join(side.dir, "dist/capture/secrets.js"));
    side.scanner = new SecretScanner();
    side.rounds = [];
  }
  const flat = bodies.map((body) => Buffer.from(body).toString());
  const megabytes = flat.reduce((sum, body) => sum + Buffer.byteLength(body), 0) / 1e6;
  console.log(`scanner alone on ${flat.length} bodies (${megabytes.toFixed(0)} MB), one thread, 3 rounds:`);
  for (let round = 0; round < 3; round++)
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) side.rounds.push(scanRound(side.scanner, flat));
  for (const side of sides) {
    const rounds = side.rounds.map((r) => `${r.cpu.toFixed(1)} (${r.wall.toFixed(1)} wall)`).join(", ");
    console.log(`  ${side.label.padEnd(8)} MB per CPU second: ${rounds}`);
  }
  if (baseline) {
    const ratios = sides[0].rounds.map((r, i) => (r.cpu / sides[1].rounds[i].cpu).toFixed(2)).join(", ");
    console.log(`  this / baseline per CPU second: ${ratios}`);
  }
  const big = Buffer.from(typicalBody(checkoutTexts(), 50, 0)).toString();
  for (const side of sides) {
    const before = memoryOf(process.pid).rss;
    const { cpu, wall } = scanRound(side.scanner, [big]);
    console.log(
      `  ${side.label.padEnd(8)} one ${(big.length / 1e6).toFixed(0)} MB body: ${cpu.toFixed(1)} MB per CPU second (${wall.toFixed(1)} wall); RSS ${before.toFixed(0)} MB before, peak ${memoryOf(process.pid).peak.toFixed(0)} MB (the body is ${((big.length * 2) / 1e6).toFixed(0)} MB as a JS string)`,
    );
  }
  // redact() returns the text and its tally here; a baseline from before issue 36 returns the text.
  const { tally } = sides[0].scanner.redact(flat[0]);
  console.log(`  ${tally.replaced} secrets replaced in the first body by this checkout's scanner`);
}

/** test/fixtures/secret-adversaries.ts, compiled by esbuild (it imports nothing) and loaded from memory. */
async function adversaries() {
  const { transformSync } = await import("esbuild");
  const source = readFileSync(join(root, "test/fixtures/secret-adversaries.ts"), "utf8");
  const { code } = transformSync(source, { loader: "ts", format: "esm" });
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}

/** Best of three scans of one text, in CPU milliseconds (a busy machine takes the core away, adding none). */
function bestScan(scanner, text) {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const started = process.cpuUsage();
    scanner.redact(text);
    best = Math.min(best, cpuSecondsSince(started) * 1000);
  }
  return best;
}

/** Each rule's worst inputs beside ordinary text of the same size: the slowest first. */
async function adversarial(texts, mb) {
  const { ADVERSARIES, repeated } = await adversaries();
  const { SecretScanner } = await import(join(root, "dist/capture/secrets.js"));
  const scanner = new SecretScanner();
  const size = Math.round(mb * 1e6);
  const ordinary = Buffer.from(typicalBody(texts, mb, 0).slice(0, size)).toString();
  // Every input once at an eighth of the size first, so the JIT has compiled what each one runs.
  for (const { unit } of ADVERSARIES) scanner.redact(repeated(unit, size / 8));
  const base = bestScan(scanner, ordinary);
  const rows = ADVERSARIES.map(({ rule, unit }) => ({ rule, unit, ms: bestScan(scanner, repeated(unit, size)) }));
  rows.sort((x, y) => y.ms - x.ms);
  const rate = (ms) => `${(size / 1e3 / ms).toFixed(0).padStart(5)} MB/s`;
  console.log(
    `worst inputs, ${mb} MB each, CPU time, best of 3 (ordinary text: ${base.toFixed(1)} ms, ${rate(base)}):`,
  );
  for (const { rule, unit, ms } of rows) {
    const shown = JSON.stringify(unit.length > 24 ? `${unit.slice(0, 21)}...` : unit);
    console.log(
      `  ${rule.padEnd(27)} ${shown.padEnd(28)} ${ms.toFixed(1).padStart(7)} ms ${rate(ms)} ${(ms / base).toFixed(1).padStart(5)}x`,
    );
  }
}

/**
 * The K bodies through a proxy of its own on the harness, one after another: MB/s from the first send
 * until the proxy said each was written. The proxy is stopped before this returns.
 */
async function captureThroughput(upstreamUrl, bodies, tokens, keep) {
  return withHarness(async (harness) => {
    const runs = harness.tempDir("bench-secrets-");
    const args = keep ? ["--keep-secrets"] : [];
    const proxy = await startBenchProxy(harness, upstreamUrl, runs, { args, tokens });
    const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true }));
    const started = performance.now();
    for (const body of bodies) await timedRequest(agent, `${proxy.url}/chat/completions`, body);
    const ended = await proxy.written(bodies.length);
    const bytes = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
    return bytes / 1e6 / ((ended - started) / 1000);
  });
}

export async function main() {
  const count = flag("bodies", 24);
  const mb = flag("mb", 1);
  const texts = checkoutTexts();
  await adversarial(texts, mb);
  if (process.argv.includes("--adversarial")) return;
  const bodies = Array.from({ length: count }, (_, n) => typicalBody(texts, mb, n));
  await scannerAlone(bodies);
  await withHarness(async (harness) => {
    const upstreamUrl = await streamingUpstream(harness);
    const tokens = join(harness.tempDir("bench-secrets-cache-"), "tokens");
    // The first pass warms the token cache both measured passes share.
    await captureThroughput(upstreamUrl, bodies, tokens, true);
    const kept = await captureThroughput(upstreamUrl, bodies, tokens, true);
    const scanned = await captureThroughput(upstreamUrl, bodies, tokens, false);
    console.log(`capture through the proxy, ${count} bodies of ${mb} MB (token cache warm):`);
    console.log(`  --keep-secrets  ${kept.toFixed(1)} MB/s`);
    console.log(`  scanning        ${scanned.toFixed(1)} MB/s  (${(scanned / kept).toFixed(2)}x)`);
    console.log(loadLine());
  });
}

await runIfMain(import.meta, main);
