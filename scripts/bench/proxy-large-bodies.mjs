#!/usr/bin/env node
/**
 * Large request bodies through the capture proxy: a small client is still answered, memory is bounded.
 *
 *   node scripts/bench/proxy-large-bodies.mjs [--bodies K] [--mb M]   (defaults 16 bodies of 50 MB)
 *   (or node scripts/bench-proxy.mjs --large-bodies …)
 *
 * K clients at once each send one M MB request body of a single letter (the tokenizer's slowest
 * input), while one more client sends small requests one after another. Prints when each large
 * request completed, the proxy's max RSS against the queue bound plus the bodies in flight, the small
 * client's latency before and while the large bodies are captured, and then the shutdown's figures
 * (SIGINT to exit, records written and lost).
 */
import "../help.mjs";
import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { cpus, loadavg } from "node:os";
import { withHarness } from "./harness.mjs";
import {
  benchProxy,
  flag,
  interrupt,
  median,
  percentile,
  printShutdown,
  runIfMain,
  sampleRss,
  smallBody,
  timedRequest,
} from "./proxy-kit.mjs";

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
async function smallClient(harness, url, done) {
  const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true }));
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

function print(bodies, mb, { replies, rss, before, times, held }) {
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
}

export async function main() {
  const bodies = flag("bodies", 16);
  const mb = flag("mb", 50);
  await withHarness(async (harness) => {
    const { proxy, runs } = await benchProxy(harness);
    const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true }));
    const before = [];
    for (let i = 0; i < 20; i++)
      before.push(await timedRequest(agent, `${proxy.url}/chat/completions`, smallBody(true)));
    agent.destroy();
    const rss = sampleRss(harness, proxy.child.pid);
    const large = Promise.all(Array.from({ length: bodies }, () => largeRequest(proxy.url, mb)));
    // The small client runs while the large bodies are relayed, then 10 s more while they are captured.
    const during = smallClient(
      harness,
      proxy.url,
      large.then(() => new Promise((resolve) => setTimeout(resolve, 10_000))),
    );
    const replies = await large;
    const { times, held } = await during;
    rss.stop();
    const shutdown = await interrupt(proxy, runs);
    print(bodies, mb, { replies, rss, before, times, held });
    printShutdown(proxy, shutdown, bodies + before.length + times.length);
  });
}

await runIfMain(import.meta, main);
