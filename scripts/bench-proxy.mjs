#!/usr/bin/env node
/**
 * The capture proxy against a direct connection, in two measures.
 *
 *   node scripts/bench-proxy.mjs [--rounds R] [--per-round N] [--rate Q] [--busy N]   (latency; defaults 10, 100, 200/s)
 *   node scripts/bench-proxy.mjs --large [--responses N] [--mb M]        (memory; defaults 8 responses of 50 MB)
 *
 * Latency: starts the built `mock` (a probe of enough text steps, no database) and the built `proxy`
 * in front of it (database on, as a user runs it), then sends small chat completions requests at Q
 * per second, streamed and not, straight to the mock and through the proxy; with
 * `--baseline=<checkout>` (once or more) through that checkout's built proxy too, in the same rounds.
 * Prints the CPU per request of each proxy's relay thread (its main thread, from /proc) and of its
 * whole process; `--cpu-prof=<dir>` writes each relay's CPU profiles there. The floor takes its turn
 * too: a relay of
 * node:http and undici with nothing of ours (scripts/bench-floor-relay.mjs), so what it adds is what
 * Node alone costs on this machine. The kinds take turns in every round, so a busy machine slows all
 * alike. Prints per kind the median of the round medians and the p99, each relay's added time, and the
 * very first request through a fresh proxy. `--busy N` then runs the rounds again while N processes
 * spin on a core each (stopped afterwards, whatever happens), and prints the same beside it.
 *
 * Large: starts an SSE upstream in this process and the built proxy (database on) as a child, then
 * fetches N chat completions responses of M MB each, first straight from the upstream, then through
 * the proxy. Prints, side by side with ratios: the time until each stream has fully arrived and until
 * it ended (direct vs proxy), and the proxy's resident memory when idle, after the first response,
 * after the last, and at its peak (Linux /proc VmHWM). Flat memory means the last-response figure
 * stays near the first-response one however large N is.
 *
 *   node scripts/bench-proxy.mjs --sustained [--clients N] [--seconds S] [--kb B]   (defaults 32, 60, 16)
 *   node scripts/bench-proxy.mjs --sustained --rate Q [--seconds S]                (open loop at Q/s)
 *   node scripts/bench-proxy.mjs --large-bodies [--bodies K] [--mb M]              (defaults 16 bodies of 50 MB)
 *
 * Sustained at a rate: small streamed requests, each with a text of its own, started Q a second
 * whatever the replies do, for S seconds. Prints the latency, the relay thread's CPU per request
 * (/proc's figure for the proxy's main thread), RSS at the start and end, and the records dropped
 * (sent less the lines of requests.jsonl once the proxy has exited on SIGINT): 0 is the target.
 *
 * Sustained: N clients each send streamed chat completions requests of B KB of fresh words (no token
 * cache answers them) one after another, through the built proxy (database on) to an upstream in this
 * process, for S seconds. The proxy's RSS (/proc VmRSS) is sampled every second. Then the proxy gets
 * SIGINT. Prints RSS at the start, its maximum and at the end, max/start, requests sent and recorded
 * (lines of requests.jsonl once the proxy has exited), how long SIGINT took, and whether the proxy
 * said capture was behind (its back-pressure notice). A bounded queue keeps max/start flat however long S is.
 *
 * Large bodies: K clients at once each send one M MB request body of a single letter (the tokenizer's
 * slowest input), while one more client sends small requests one after another. Prints when each large
 * request completed, the proxy's max RSS against the queue bound plus the bodies in flight, the small
 * client's latency before and while the large bodies are captured, and then the same shutdown figures.
 *
 *   node scripts/bench-proxy.mjs --secrets [--bodies K] [--mb M] [--baseline=<other checkout>]  (24 bodies of 1 MB)
 *   node scripts/bench-proxy.mjs --secrets --adversarial [--mb M]   (the worst inputs alone; 1 MB each)
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
import "./help.mjs";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request as httpRequest } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const flag = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const responses = flag("responses", 8);
const megabytes = flag("mb", 50);

/** One SSE event per ~1 KB of text, then the finish chunk and [DONE], as OpenAI streams them. */
function sseBody(bytes) {
  const text = "x".repeat(1000);
  const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
  const count = Math.ceil(bytes / event.length);
  const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
  return Buffer.from(event.repeat(count) + finish);
}

async function startUpstream(body) {
  const server = createServer(async (request, response) => {
    for await (const _ of request) {
      // Read the request body so the exchange completes.
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    // 64 KiB writes, as a provider's stream arrives in many pieces.
    for (let at = 0; at < body.length; at += 65536) {
      if (!response.write(body.subarray(at, at + 65536)))
        await new Promise((resolve) => response.once("drain", resolve));
    }
    response.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/** `--name=<value>`, or undefined. */
const option = (name) => options(name)[0];
/** Every `--name=<value>` given, in order. */
const options = (name) =>
  process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.slice(name.length + 3));

/**
 * Starts `node <script> <args>` and resolves with the LISTENING URL it prints first; stderr is kept
 * apart. `flags` go to node before the script.
 */
function startListening(script, args, stderr = "inherit", flags = []) {
  const child = spawn(process.execPath, [...flags, script, ...args], { stdio: ["ignore", "pipe", stderr] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => {
      const match = /^LISTENING (\S+)$/.exec(line);
      if (match) resolve({ child, url: match[1] });
      else reject(new Error(`${basename(script)} ${args[0]} did not start: ${line}`));
    });
    child.once("exit", (code) => reject(new Error(`${basename(script)} ${args[0]} exited ${code}`)));
  });
}

/**
 * Starts `payload-probe <args>` (the built CLI of `checkout`, this one by default) and resolves with
 * its LISTENING URL. `--cpu-prof=<dir>` profiles each proxy started (one .cpuprofile per thread,
 * written when it exits).
 */
function startCli(args, stderr = "inherit", checkout = root) {
  const profile = option("cpu-prof");
  const flags = profile && args[0] === "proxy" ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [];
  return startListening(join(checkout, "dist/cli/main.js"), args, stderr, flags);
}

async function stop(child) {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

/** Resident and peak resident memory of a process, in MB (Linux). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)[1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** Milliseconds until the last byte arrived, and until the stream reported its end. */
async function fetchStream(url, expectedBytes) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "bench", messages: [{ role: "user", content: "go" }], stream: true }),
  });
  const reader = response.body.getReader();
  let received = 0;
  let arrived = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    received += chunk.value.length;
    if (received >= expectedBytes) arrived ||= performance.now() - started;
  }
  if (received !== expectedBytes) throw new Error(`received ${received} bytes, expected ${expectedBytes}`);
  return { arrived, ended: performance.now() - started };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const row = (name, direct, proxy, unit) =>
  `${name.padEnd(34)} ${direct.toFixed(0).padStart(9)} ${proxy.toFixed(0).padStart(9)} ${unit.padEnd(3)} ${(proxy / direct).toFixed(2).padStart(7)}x`;

async function large() {
  const body = sseBody(megabytes * 1024 * 1024);
  const upstream = await startUpstream(body);
  const runs = mkdtempSync(join(tmpdir(), "bench-proxy-"));
  const proxy = await startCli(["proxy", "--upstream", upstream.url, "--runs", runs]);
  try {
    const idle = memoryOf(proxy.child.pid);
    const direct = [];
    const proxied = [];
    const rssAfter = [];
    // Alternated, so a busy machine slows both sides alike.
    for (let i = 0; i < responses; i++) {
      direct.push(await fetchStream(upstream.url, body.length));
      proxied.push(await fetchStream(proxy.url, body.length));
      // The record is written after the stream ends; give it time so the figure includes the capture's work.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      rssAfter.push(memoryOf(proxy.child.pid).rss);
    }
    const peak = memoryOf(proxy.child.pid).peak;
    console.log(`${responses} responses of ${megabytes} MB (${body.length} bytes each), median over responses`);
    console.log(`${"".padEnd(34)} ${"direct".padStart(9)} ${"proxy".padStart(9)}     ${"ratio".padStart(8)}`);
    console.log(
      row("stream fully arrived", median(direct.map((d) => d.arrived)), median(proxied.map((p) => p.arrived)), "ms"),
    );
    console.log(row("stream ended", median(direct.map((d) => d.ended)), median(proxied.map((p) => p.ended)), "ms"));
    console.log(`${"".padEnd(34)} ${"baseline".padStart(9)} ${"proxy".padStart(9)}     ${"ratio".padStart(8)}`);
    console.log(row("RSS after 1st vs idle", idle.rss, rssAfter[0], "MB"));
    console.log(row(`RSS after response ${responses} vs after 1st`, rssAfter[0], rssAfter.at(-1), "MB"));
    console.log(row("peak RSS vs one response's bytes", body.length / 1024 / 1024, peak, "MB"));
    console.log(`proxy: stream ended (ms) per response: ${proxied.map((p) => p.ended.toFixed(0)).join(" ")}`);
    console.log(`RSS after each response (MB): ${rssAfter.map((mb) => mb.toFixed(0)).join(" ")}`);
    console.log(`target: stream ended ratio near 1; RSS after the last within ~1.2x of after the first (flat)`);
  } finally {
    await stop(proxy.child);
    upstream.server.close();
    rmSync(runs, { recursive: true, force: true });
  }
}

const rounds = flag("rounds", 10);
const perRound = flag("per-round", 100);
const rate = flag("rate", 200);

/** One request on a kept-alive connection; resolves with milliseconds until the last byte of the reply. */
function timedRequest(agent, url, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = httpRequest(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (response) => {
        response.on("data", () => undefined);
        response.on("end", () => {
          if (response.statusCode !== 200) reject(new Error(`${url}: HTTP ${response.statusCode}`));
          else resolve(performance.now() - started);
        });
      },
    );
    request.on("error", reject);
    // A reply that never comes fails the bench, naming where it was sent, rather than hang it.
    request.setTimeout(30_000, () => request.destroy(new Error(`${url}: no reply within 30 s`)));
    request.end(body);
  });
}

/** `count` requests started at `perSecond`, each on its own schedule (open loop), so one slow reply does not slow the rest. */
async function paced(count, perSecond, send) {
  const gap = 1000 / perSecond;
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < count; i++) {
    const due = started + i * gap;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(send());
  }
  return Promise.all(pending);
}

/** CPU milliseconds a process, or one of its threads, has used (Linux /proc: utime + stime, in clock ticks of 10 ms). */
function cpuMs(pid, tid) {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = readFileSync(file, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU of a proxy's whole process and of its main thread (the relay: its tid is the pid), for a before/after difference. */
const proxyCpu = (pid) => ({ all: cpuMs(pid), relay: cpuMs(pid, pid) });

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** A small chat completions body, streamed or not, as an agent's first turn. */
const smallBody = (stream) =>
  JSON.stringify({
    model: "bench",
    messages: [
      { role: "system", content: "You are a coding agent. Keep answers short." },
      { role: "user", content: "List the files." },
    ],
    stream,
    ...(stream && { stream_options: { include_usage: true } }),
  });

/** Every kind `perRound` times per round, the kinds taking turns; each round's median and p99 per kind. */
async function measureRounds(agent, kinds) {
  const samples = kinds.map(() => []);
  const roundMedians = kinds.map(() => []);
  const roundP99s = kinds.map(() => []);
  for (let round = 0; round < rounds; round++) {
    // The order of the kinds turns each round, so none always runs right after another.
    for (let k = 0; k < kinds.length; k++) {
      const i = (k + round) % kinds.length;
      const times = await paced(perRound, rate, () => timedRequest(agent, kinds[i].url, kinds[i].body));
      samples[i].push(...times);
      roundMedians[i].push(median(times));
      roundP99s[i].push(percentile(times, 99));
    }
  }
  return { samples, roundMedians, roundP99s };
}

/**
 * Per kind the median of round medians and the p99; per proxy and form the added time (`pairs`:
 * direct, proxied, label). The added p99 is also taken round by round, as the median is: one stall
 * of the machine in one round then moves one difference, not the whole run's tail.
 */
function printLatency(kinds, { samples, roundMedians, roundP99s }, pairs) {
  console.log(
    `${rounds} rounds x ${perRound} requests per kind at ${rate}/s; ms from sending to the reply's last byte`,
  );
  console.log(`${"".padEnd(24)} ${"median of round medians".padStart(24)} ${"p99".padStart(8)}`);
  const stat = kinds.map((kind, i) => ({ kind, med: median(roundMedians[i]), p99: percentile(samples[i], 99) }));
  for (const { kind, med, p99 } of stat)
    console.log(`${kind.name.padEnd(24)} ${med.toFixed(3).padStart(24)} ${p99.toFixed(3).padStart(8)}`);
  for (const [direct, proxied, label] of pairs) {
    const added = median(roundMedians[proxied].map((m, r) => m - roundMedians[direct][r]));
    const addedP99 = median(roundP99s[proxied].map((p, r) => p - roundP99s[direct][r]));
    const ratio = (stat[proxied].med / stat[direct].med).toFixed(2);
    console.log(
      `${label}: adds ${added.toFixed(3)} ms median (median of per-round differences; ${ratio}x direct), ` +
        `${addedP99.toFixed(3)} ms at p99 (per round; whole run ${(stat[proxied].p99 - stat[direct].p99).toFixed(3)})`,
    );
  }
}

/**
 * The relays measured: this checkout's proxy, with `--baseline=<checkout>` that checkout's built
 * proxy too, and the floor (scripts/bench-floor-relay.mjs: node:http and undici with nothing of ours),
 * all in front of the same mock. Each is added to `started` once it listens, so the caller stops the
 * ones that did start when a later one fails to.
 */
async function startLatencyProxies(mockUrl, runs, started) {
  // `--baseline` may be given more than once: each is a side, named by its folder when there are several.
  const baselines = options("baseline");
  const label = (checkout) => (baselines.length > 1 ? `base-${basename(checkout)}` : "baseline");
  const sides = [
    { label: "proxy", checkout: root },
    ...baselines.map((checkout) => ({ label: label(checkout), checkout })),
  ];
  for (const side of sides) {
    // The proxy's live lines go to a pipe that is read, as a terminal would take them. Each side has a
    // runs folder of its own: a baseline from before a database format change refuses the newer database.
    const args = ["proxy", "--upstream", mockUrl, "--runs", join(runs, side.label), "--name", `bench-${side.label}`];
    Object.assign(side, await startCli(args, "pipe", side.checkout));
    started.push(side);
    side.child.stderr.resume();
  }
  const profile = option("cpu-prof");
  const flags = profile ? ["--cpu-prof", `--cpu-prof-dir=${join(profile, "floor")}`] : [];
  const floorScript = join(root, "scripts/bench-floor-relay.mjs");
  const floor = { label: "floor", ...(await startListening(floorScript, [mockUrl], "inherit", flags)) };
  started.push(floor);
}

/**
 * `--busy N`: N processes that each keep a core busy until stopped. Each also ends itself once this
 * process is gone (it looks every few milliseconds), so a bench killed mid-round leaves none spinning.
 */
const SPIN =
  "for (;;) { for (let i = 0; i < 1e7; i++); try { process.kill(Number(process.argv[1]), 0); } catch { process.exit(); } }";
function startSpinners(count) {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", SPIN, String(process.pid)], { stdio: "ignore" }),
  );
}

/** Direct, then each relay's streamed and JSON kinds; `pairs` says which direct kind each relay kind adds to. */
function latencyKinds(mockUrl, relays) {
  const kinds = [
    { name: "stream, direct", url: `${mockUrl}/chat/completions`, body: smallBody(true) },
    { name: "json, direct", url: `${mockUrl}/chat/completions`, body: smallBody(false) },
  ];
  const pairs = [];
  for (const side of relays)
    for (const [d, form] of [
      [0, "stream"],
      [1, "json"],
    ]) {
      pairs.push([d, kinds.length, `${form}, ${side.label}`]);
      kinds.push({ name: `${form}, ${side.label}`, url: `${side.url}/chat/completions`, body: smallBody(d === 0) });
    }
  return { kinds, pairs };
}

/** The rounds once, printed, with each relay's CPU per request over them. */
async function latencyPhase(agent, relays, kinds, pairs) {
  for (const side of relays) side.cpuBefore = proxyCpu(side.child.pid);
  const measured = await measureRounds(agent, kinds);
  // The proxy's capture runs after each reply; let it finish before its CPU time is read.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  printLatency(kinds, measured, pairs);
  const proxied = rounds * perRound * 2;
  for (const side of relays) {
    const after = proxyCpu(side.child.pid);
    const per = (key) => ((after[key] - side.cpuBefore[key]) / proxied).toFixed(3);
    console.log(`CPU per request, ${side.label}: relay thread ${per("relay")} ms, whole process ${per("all")} ms`);
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${cpus().length} cores`,
  );
}

async function latency() {
  const runs = mkdtempSync(join(tmpdir(), "bench-proxy-"));
  const relays = [];
  const busy = flag("busy", 0);
  const sides = 2 + options("baseline").length;
  const steps = rounds * perRound * 2 * (1 + sides) * (busy > 0 ? 2 : 1) + 10;
  const probe = join(runs, "bench.yaml");
  writeFileSync(probe, `name: bench\nmodel:\n  script:\n${"    - text: ok\n".repeat(steps)}prompts: [go]\n`);
  const mock = await startCli(["mock", probe, "--runs", runs, "--no-db"]);
  const agent = new Agent({ keepAlive: true });
  try {
    await startLatencyProxies(mock.url, runs, relays);
    const { kinds, pairs } = latencyKinds(mock.url, relays);
    // The very first request through a proxy that has just printed LISTENING, against the mock's own first.
    const firstDirect = await timedRequest(agent, kinds[0].url, kinds[0].body);
    const firstProxy = await timedRequest(agent, kinds[2].url, kinds[2].body);
    for (const side of relays.slice(1)) await timedRequest(agent, `${side.url}/chat/completions`, smallBody(true));
    await latencyPhase(agent, relays, kinds, pairs);
    if (busy > 0) await busyPhase(busy, agent, relays, kinds, pairs);
    console.log(
      `first request: direct ${firstDirect.toFixed(1)} ms, through the fresh proxy ${firstProxy.toFixed(1)} ms`,
    );
    console.log("target: added median < 0.5 ms, added p99 < 2 ms, first request near the median");
    console.log("floor: node:http and undici relaying with nothing of ours (scripts/bench-floor-relay.mjs)");
  } finally {
    agent.destroy();
    for (const side of relays) await stop(side.child);
    await stop(mock.child);
    rmSync(runs, { recursive: true, force: true });
  }
}

/** The rounds again while `count` processes keep cores busy; the spinners are stopped whatever happens. */
async function busyPhase(count, agent, relays, kinds, pairs) {
  console.log(`\nagain with ${count} core(s) kept busy by spinning processes (--busy ${count}):`);
  const spinners = startSpinners(count);
  try {
    await latencyPhase(agent, relays, kinds, pairs);
  } finally {
    await Promise.all(spinners.map(stop));
  }
}

/** Resident memory of a process now, in MB (Linux /proc VmRSS). */
const rssOf = (pid) => memoryOf(pid).rss;

/** Samples a process's RSS every second until stopped; `max` and `samples` as they stand. */
function sampleRss(pid) {
  const samples = [rssOf(pid)];
  const timer = setInterval(() => samples.push(rssOf(pid)), 1000);
  return { samples, max: () => Math.max(...samples), stop: () => clearInterval(timer) };
}

/** An upstream that reads each request to the end and streams a short completion back. */
async function streamingUpstream() {
  const reply = sseBody(2000);
  const server = createServer(async (request, response) => {
    for await (const _ of request) {
      // Read the request body so the exchange completes.
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(reply);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/**
 * The built proxy (database on) in front of `upstream`, its token cache in the run folder's parent
 * (so the bench never writes the user's), its stderr read line by line for the back-pressure notice
 * and the shutdown's lost count.
 */
async function startBenchProxy(upstream, runs) {
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = join(runs, "tokens");
  const proxy = await startCli(["proxy", "--upstream", upstream, "--runs", runs], "pipe");
  const seen = { behind: null, lost: null };
  createInterface({ input: proxy.child.stderr }).on("line", (line) => {
    if (line.startsWith("capture: behind")) seen.behind ??= line;
    const lost = /^capture: (\d+) exchange\(s\) not written/.exec(line);
    if (lost) seen.lost = Number(lost[1]);
  });
  return { ...proxy, seen };
}

/** SIGINT, then milliseconds until the proxy exited, its exit code, and the records it wrote. */
async function interrupt(proxy, runs) {
  const started = performance.now();
  const exited = new Promise((resolve) => proxy.child.once("exit", (code) => resolve(code)));
  proxy.child.kill("SIGINT");
  const code = await exited;
  const ms = performance.now() - started;
  const records = readFileSync(join(runs, "proxy", "requests.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean).length;
  return { ms, code, records };
}

function printShutdown(proxy, shutdown, sent) {
  console.log(`requests sent ${sent}, recorded ${shutdown.records} (requests.jsonl after exit)`);
  console.log(
    `SIGINT to exit: ${shutdown.ms.toFixed(0)} ms (exit code ${shutdown.code}); lost by the shutdown: ${proxy.seen.lost ?? 0}`,
  );
  console.log(`back-pressure notice: ${proxy.seen.behind ?? "none"}`);
}

/** Words no token cache has seen: `kb` KB of 8-letter pieces of fresh UUIDs. */
const freshText = (kb) => Array.from({ length: Math.ceil((kb * 1024) / 9) }, () => randomUUID().slice(0, 8)).join(" ");

/** One streamed request read to its end; resolves with its status. */
function streamedRequest(agent, url, text) {
  const body = JSON.stringify({ model: "bench", messages: [{ role: "user", content: text }], stream: true });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/chat/completions`,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (response) => {
        response.on("data", () => undefined);
        response.on("end", () => resolve(response.statusCode));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** An upstream in this process and the built proxy in front of it while `body` runs; both stopped and the runs removed after. */
async function withBenchProxy(body) {
  const upstream = await streamingUpstream();
  const runs = mkdtempSync(join(tmpdir(), "bench-proxy-"));
  const proxy = await startBenchProxy(upstream.url, runs);
  try {
    return await body(proxy, runs);
  } finally {
    if (proxy.child.exitCode === null) await stop(proxy.child);
    upstream.server.close();
    rmSync(runs, { recursive: true, force: true });
  }
}

/**
 * Open loop at `--rate` requests a second for `--seconds`: small streamed requests, each with a text
 * of its own, through the built proxy (database on) to an upstream in this process. Prints the
 * proxied latency, the relay thread's CPU per request, RSS at the start and end, and what was dropped
 * (sent but not in requests.jsonl once the proxy has exited on SIGINT).
 */
async function sustainedRate() {
  const perSecond = flag("rate", 500);
  const seconds = flag("seconds", 60);
  return withBenchProxy(async (proxy, runs) => {
    const rss = sampleRss(proxy.child.pid);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const cpuBefore = proxyCpu(proxy.child.pid);
    let n = 0;
    let failed = 0;
    const times = await paced(perSecond * seconds, perSecond, async () => {
      const started = performance.now();
      if ((await streamedRequest(agent, proxy.url, `request ${++n} ${randomUUID()}`)) !== 200) failed++;
      return performance.now() - started;
    });
    const cpu = proxyCpu(proxy.child.pid);
    agent.destroy();
    rss.stop();
    const end = rssOf(proxy.child.pid);
    const shutdown = await interrupt(proxy, runs);
    const sent = times.length;
    console.log(
      `${perSecond} requests/s for ${seconds} s, streamed (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
    );
    console.log(
      `latency through the proxy (ms): median ${median(times).toFixed(2)}, p99 ${percentile(times, 99).toFixed(2)}, max ${Math.max(...times).toFixed(1)}`,
    );
    const per = (key) => ((cpu[key] - cpuBefore[key]) / sent).toFixed(3);
    console.log(`CPU per request: relay thread ${per("relay")} ms, whole process ${per("all")} ms`);
    console.log(
      `proxy RSS (MB): start ${rss.samples[0].toFixed(0)}, max ${Math.max(rss.max(), end).toFixed(0)}, end ${end.toFixed(0)}; ` +
        `every 10 s: ${rss.samples
          .filter((_, i) => i % 10 === 0)
          .map((mb) => mb.toFixed(0))
          .join(" ")}`,
    );
    if (failed > 0) console.log(`requests not answered 200: ${failed}`);
    console.log(`dropped records: ${sent - shutdown.records} (sent ${sent}, recorded ${shutdown.records})`);
    printShutdown(proxy, shutdown, sent);
    console.log("target: dropped 0; RSS at the end near the start (flat)");
  });
}

async function sustained() {
  if (process.argv.includes("--rate")) return sustainedRate();
  const clients = flag("clients", 32);
  const seconds = flag("seconds", 60);
  const kb = flag("kb", 16);
  return withBenchProxy(async (proxy, runs) => {
    const rss = sampleRss(proxy.child.pid);
    const agent = new Agent({ keepAlive: true });
    const until = performance.now() + seconds * 1000;
    let sent = 0;
    let failed = 0;
    const client = async () => {
      while (performance.now() < until) {
        sent++;
        if ((await streamedRequest(agent, proxy.url, freshText(kb))) !== 200) failed++;
      }
    };
    await Promise.all(Array.from({ length: clients }, client));
    agent.destroy();
    rss.stop();
    const end = rssOf(proxy.child.pid);
    const max = Math.max(rss.max(), end);
    const shutdown = await interrupt(proxy, runs);
    console.log(
      `${clients} streaming clients, ${kb} KB requests, ${seconds} s (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
    );
    console.log(
      `proxy RSS (MB): start ${rss.samples[0].toFixed(0)}, max ${max.toFixed(0)}, end ${end.toFixed(0)}; max/start ${(max / rss.samples[0]).toFixed(2)}x`,
    );
    if (failed > 0) console.log(`requests not answered 200: ${failed}`);
    printShutdown(proxy, shutdown, sent);
    console.log("target: max/start flat however long the run; recorded + lost = sent; SIGINT within the 10 s drain");
  });
}

/** Sends one request of `mb` MB of a single letter, written in 1 MiB pieces; resolves with ms to its reply's end. */
function largeRequest(url, mb) {
  const piece = Buffer.alloc(1024 * 1024, "a");
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/chat/completions`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (response) => {
        response.on("data", () => undefined);
        response.on("end", () => resolve({ status: response.statusCode, ms: performance.now() - started }));
      },
    );
    request.on("error", reject);
    (async () => {
      // A fresh id first, so no token cache holds the text.
      request.write(`{"model":"bench","stream":false,"messages":[{"role":"user","content":"${randomUUID()} `);
      for (let i = 0; i < mb; i++)
        if (!request.write(piece)) await new Promise((resume) => request.once("drain", resume));
      request.end(`"}]}`);
    })();
  });
}

/**
 * Small requests one after another until `done` resolves; each one's milliseconds, and the time the
 * last one had waited when `done` came without its reply (the proxy held it: capture was behind).
 */
async function smallClient(url, done) {
  const agent = new Agent({ keepAlive: true });
  const times = [];
  let finished = false;
  const stopped = done.then(() => {
    finished = true;
    return "stopped";
  });
  let held = null;
  while (!finished) {
    const started = performance.now();
    const reply = await Promise.race([timedRequest(agent, `${url}/chat/completions`, smallBody(true)), stopped]);
    if (reply === "stopped") held = performance.now() - started;
    else times.push(reply);
  }
  agent.destroy();
  return { times, held };
}

async function largeBodies() {
  const bodies = flag("bodies", 16);
  const mb = flag("mb", 50);
  return withBenchProxy(async (proxy, runs) => {
    const agent = new Agent({ keepAlive: true });
    const before = [];
    for (let i = 0; i < 20; i++)
      before.push(await timedRequest(agent, `${proxy.url}/chat/completions`, smallBody(true)));
    agent.destroy();
    const rss = sampleRss(proxy.child.pid);
    const large = Promise.all(Array.from({ length: bodies }, () => largeRequest(proxy.url, mb)));
    // The small client runs while the large bodies are relayed, then 10 s more while they are captured.
    const during = smallClient(
      proxy.url,
      large.then(() => new Promise((resolve) => setTimeout(resolve, 10_000))),
    );
    const replies = await large;
    const { times, held } = await during;
    rss.stop();
    const shutdown = await interrupt(proxy, runs);
    console.log(
      `${bodies} request bodies of ${mb} MB of one letter, at once (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
    );
    console.log(
      `large requests answered: ${replies.filter((r) => r.status === 200).length}/${bodies}, ` +
        `in ${median(replies.map((r) => r.ms)).toFixed(0)} ms median, ${Math.max(...replies.map((r) => r.ms)).toFixed(0)} ms slowest`,
    );
    const bound = 64 + mb * bodies;
    console.log(
      `proxy RSS (MB): start ${rss.samples[0].toFixed(0)}, max ${rss.max().toFixed(0)}; ` +
        `queue bound 64 MiB + bodies in flight ${mb * bodies} MB = ${bound} MB`,
    );
    console.log(
      `small client (ms): before median ${median(before).toFixed(1)}; during ${times.length} answered, ` +
        (times.length > 0
          ? `median ${median(times).toFixed(1)}, p99 ${percentile(times, 99).toFixed(1)}, max ${Math.max(...times).toFixed(1)}`
          : "none") +
        (held === null ? "" : `; one still held by the proxy after ${held.toFixed(0)} ms`),
    );
    printShutdown(proxy, shutdown, bodies + before.length + times.length);
  });
}

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

/** The K bodies through a proxy, one after another: MB/s from the first send until each was said written. */
async function captureThroughput(upstream, bodies, cache, keep) {
  const runs = mkdtempSync(join(tmpdir(), "bench-secrets-"));
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = cache;
  const args = ["proxy", "--upstream", upstream, "--runs", runs, ...(keep ? ["--keep-secrets"] : [])];
  const proxy = await startCli(args, "pipe");
  let written = 0;
  let allWritten;
  const done = new Promise((resolve) => (allWritten = resolve));
  createInterface({ input: proxy.child.stderr }).on("line", (line) => {
    if (/^#\d+ /.test(line) && ++written === bodies.length) allWritten(performance.now());
  });
  const agent = new Agent({ keepAlive: true });
  const started = performance.now();
  for (const body of bodies) await timedRequest(agent, `${proxy.url}/chat/completions`, body);
  const ended = await done;
  agent.destroy();
  await stop(proxy.child);
  rmSync(runs, { recursive: true, force: true });
  const bytes = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
  return bytes / 1e6 / ((ended - started) / 1000);
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

async function secrets() {
  const count = flag("bodies", 24);
  const mb = flag("mb", 1);
  const texts = checkoutTexts();
  await adversarial(texts, mb);
  if (process.argv.includes("--adversarial")) return;
  const bodies = Array.from({ length: count }, (_, n) => typicalBody(texts, mb, n));
  await scannerAlone(bodies);
  const upstream = await streamingUpstream();
  const cache = join(mkdtempSync(join(tmpdir(), "bench-secrets-cache-")), "tokens");
  try {
    await captureThroughput(upstream.url, bodies, cache, true);
    const kept = await captureThroughput(upstream.url, bodies, cache, true);
    const scanned = await captureThroughput(upstream.url, bodies, cache, false);
    console.log(`capture through the proxy, ${count} bodies of ${mb} MB (token cache warm):`);
    console.log(`  --keep-secrets  ${kept.toFixed(1)} MB/s`);
    console.log(`  scanning        ${scanned.toFixed(1)} MB/s  (${(scanned / kept).toFixed(2)}x)`);
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${cpus().length} cores`,
    );
  } finally {
    upstream.server.close();
    rmSync(dirname(cache), { recursive: true, force: true });
  }
}

if (process.argv.includes("--secrets")) await secrets();
else if (process.argv.includes("--sustained")) await sustained();
else if (process.argv.includes("--large-bodies")) await largeBodies();
else if (process.argv.includes("--large")) await large();
else await latency();
