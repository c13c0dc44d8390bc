/**
 * What the proxy benchmarks (scripts/bench/proxy-*.mjs) share: their flags, the built CLI started on
 * a harness (harness.mjs), upstreams in this process, requests, and the figures read from /proc.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `--name N` as a number, or `fallback`. */
export const flag = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
/** Every `--name=<value>` given, in order. */
export const options = (name) =>
  process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.slice(name.length + 3));
/** `--name=<value>`, or undefined. */
export const option = (name) => options(name)[0];

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
export const loadLine = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${cpus().length} cores`;

/**
 * Starts `payload-probe <args>` (the built CLI of `checkout`, this one by default) on the harness and
 * resolves with its child and LISTENING URL; `env` is set over this process's environment.
 * `--cpu-prof=<dir>` profiles each proxy started (one .cpuprofile per thread, written when it exits).
 */
export function startCli(harness, args, { stderr = "inherit", checkout = root, env = {} } = {}) {
  const profile = option("cpu-prof");
  const flags = profile && args[0] === "proxy" ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [];
  const script = join(checkout, "dist/cli/main.js");
  return harness.startListening(script, args, { stderr, flags, env: { ...process.env, ...env } });
}

/** Resident and peak resident memory of a process, in MB (Linux). */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)[1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}
/** Resident memory of a process now, in MB (Linux /proc VmRSS). */
export const rssOf = (pid) => memoryOf(pid).rss;

/** Samples a process's RSS every second until the harness ends or `stop` is called; `max` and `samples` as they stand. */
export function sampleRss(harness, pid) {
  const samples = [rssOf(pid)];
  const stop = harness.every(1000, () => samples.push(rssOf(pid)));
  return { samples, max: () => Math.max(...samples), stop };
}

/** CPU milliseconds a process, or one of its threads, has used (Linux /proc: utime + stime, in clock ticks of 10 ms). */
function cpuMs(pid, tid) {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = readFileSync(file, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
/** CPU of a proxy's whole process and of its main thread (the relay: its tid is the pid), for a before/after difference. */
export const proxyCpu = (pid) => ({ all: cpuMs(pid), relay: cpuMs(pid, pid) });

/** One SSE event per ~1 KB of text, then the finish chunk and [DONE], as OpenAI streams them. */
export function sseBody(bytes) {
  const text = "x".repeat(1000);
  const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
  const count = Math.ceil(bytes / event.length);
  const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
  return Buffer.from(event.repeat(count) + finish);
}

/** An upstream on the harness that reads each request to the end and answers with `reply(request)`'s status, headers and body. */
export function upstream(harness, reply) {
  const server = createServer(async (request, response) => {
    for await (const _ of request) {
      // Read the request body so the exchange completes.
    }
    const { status = 200, headers, body } = reply(request);
    response.writeHead(status, headers);
    // 64 KiB writes, as a provider's stream arrives in many pieces.
    for (let at = 0; at < body.length; at += 65536) {
      if (!response.write(body.subarray(at, at + 65536)))
        await new Promise((resolve) => response.once("drain", resolve));
    }
    response.end();
  });
  return harness.listen(server);
}

/** An upstream that streams a short completion back to every request. */
export function streamingUpstream(harness) {
  const body = sseBody(2000);
  return upstream(harness, () => ({ headers: { "content-type": "text/event-stream" }, body }));
}

/** One request on a kept-alive connection; resolves with milliseconds until the last byte of the reply. */
export function timedRequest(agent, url, body) {
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
export async function paced(count, perSecond, send) {
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

/** A small chat completions body, streamed or not, as an agent's first turn. */
export const smallBody = (stream) =>
  JSON.stringify({
    model: "bench",
    messages: [
      { role: "system", content: "You are a coding agent. Keep answers short." },
      { role: "user", content: "List the files." },
    ],
    stream,
    ...(stream && { stream_options: { include_usage: true } }),
  });

/** Words no token cache has seen: `kb` KB of 8-letter pieces of fresh UUIDs. */
export const freshText = (kb) =>
  Array.from({ length: Math.ceil((kb * 1024) / 9) }, () => randomUUID().slice(0, 8)).join(" ");

/** One streamed request read to its end; resolves with its status. */
export function streamedRequest(agent, url, text) {
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

/**
 * The built proxy (database on) on the harness in front of `upstreamUrl`, its token cache `tokens`
 * (by default in the runs folder, so the bench never writes the user's), its stderr read line by
 * line: `seen` holds the back-pressure notice and the shutdown's lost count, and `written(n)` resolves
 * once n records were said written (the live line `#<seq> …`), with the time it happened.
 */
export async function startBenchProxy(harness, upstreamUrl, runs, { args = [], tokens = join(runs, "tokens") } = {}) {
  const proxy = await startCli(harness, ["proxy", "--upstream", upstreamUrl, "--runs", runs, ...args], {
    stderr: "pipe",
    env: { PAYLOAD_PROBE_TOKEN_CACHE: tokens },
  });
  const seen = { behind: null, lost: null, records: 0 };
  const waiters = [];
  createInterface({ input: proxy.child.stderr }).on("line", (line) => {
    if (line.startsWith("capture: behind")) seen.behind ??= line;
    const lost = /^capture: (\d+) exchange\(s\) not written/.exec(line);
    if (lost) seen.lost = Number(lost[1]);
    if (/^#\d+ /.test(line)) {
      seen.records++;
      for (const waiter of waiters.filter((w) => w.count <= seen.records)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(performance.now());
      }
    }
  });
  const written = (count) =>
    count <= seen.records
      ? Promise.resolve(performance.now())
      : new Promise((resolve) => waiters.push({ count, resolve }));
  return { ...proxy, seen, written };
}

/** SIGINT, then milliseconds until the proxy exited, its exit code, and the records it wrote. */
export async function interrupt(proxy, runs) {
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

export function printShutdown(proxy, shutdown, sent) {
  console.log(`requests sent ${sent}, recorded ${shutdown.records} (requests.jsonl after exit)`);
  console.log(
    `SIGINT to exit: ${shutdown.ms.toFixed(0)} ms (exit code ${shutdown.code}); lost by the shutdown: ${proxy.seen.lost ?? 0}`,
  );
  console.log(`back-pressure notice: ${proxy.seen.behind ?? "none"}`);
}

/** An upstream and the built proxy in front of it on the harness, its runs in a folder of their own. */
export async function benchProxy(harness) {
  const upstreamUrl = await streamingUpstream(harness);
  const runs = harness.tempDir("bench-proxy-");
  const proxy = await startBenchProxy(harness, upstreamUrl, runs);
  return { proxy, runs };
}

/** Runs a bench module's `main` when the module is the script node was started with. */
export async function runIfMain(meta, main) {
  if (process.argv[1] && fileURLToPath(meta.url) === process.argv[1]) await main();
}
