#!/usr/bin/env node
/**
 * The capture proxy under sustained load: memory stays flat, no record is dropped.
 *
 *   node scripts/bench/proxy-sustained.mjs [--clients N] [--seconds S] [--kb B]   (defaults 32, 60, 16)
 *   node scripts/bench/proxy-sustained.mjs --rate Q [--seconds S]                (open loop at Q/s)
 *   (or node scripts/bench-proxy.mjs --sustained …)
 *
 * Clients: N clients each send streamed chat completions requests of B KB of fresh words (no token
 * cache answers them) one after another, through the built proxy (database on) to an upstream in this
 * process, for S seconds. The proxy's RSS (/proc VmRSS) is sampled every second. Then the proxy gets
 * SIGINT. Prints RSS at the start, its maximum and at the end, max/start, requests sent and recorded
 * (lines of requests.jsonl once the proxy has exited), how long SIGINT took, and whether the proxy
 * said capture was behind (its back-pressure notice). A bounded queue keeps max/start flat however long S is.
 *
 * At a rate: small streamed requests, each with a text of its own, started Q a second whatever the
 * replies do, for S seconds. Prints the latency, the relay thread's CPU per request (/proc's figure
 * for the proxy's main thread), RSS at the start and end, and the records dropped (sent less the lines
 * of requests.jsonl once the proxy has exited on SIGINT): 0 is the target.
 */
import "../help.mjs";
import { randomUUID } from "node:crypto";
import { Agent } from "node:http";
import { cpus, loadavg } from "node:os";
import { withHarness } from "./harness.mjs";
import {
  benchProxy,
  flag,
  freshText,
  interrupt,
  median,
  paced,
  percentile,
  printShutdown,
  proxyCpu,
  rssOf,
  runIfMain,
  sampleRss,
  streamedRequest,
} from "./proxy-kit.mjs";

const loadNow = () => `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;

async function atRate(harness) {
  const perSecond = flag("rate", 500);
  const seconds = flag("seconds", 60);
  const { proxy, runs } = await benchProxy(harness);
  const rss = sampleRss(harness, proxy.child.pid);
  const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true, maxSockets: 64 }));
  const cpuBefore = proxyCpu(proxy.child.pid);
  let n = 0;
  let failed = 0;
  const times = await paced(perSecond * seconds, perSecond, async () => {
    const started = performance.now();
    if ((await streamedRequest(agent, proxy.url, `request ${++n} ${randomUUID()}`)) !== 200) failed++;
    return performance.now() - started;
  });
  const cpu = proxyCpu(proxy.child.pid);
  rss.stop();
  const end = rssOf(proxy.child.pid);
  const shutdown = await interrupt(proxy, runs);
  const sent = times.length;
  console.log(`${perSecond} requests/s for ${seconds} s, streamed (${loadNow()})`);
  console.log(
    `latency through the proxy (ms): median ${median(times).toFixed(2)}, p99 ${percentile(times, 99).toFixed(2)}, max ${Math.max(...times).toFixed(1)}`,
  );
  const per = (key) => ((cpu[key] - cpuBefore[key]) / sent).toFixed(3);
  console.log(`CPU per request: relay thread ${per("relay")} ms, whole process ${per("all")} ms`);
  const every10 = rss.samples.filter((_, i) => i % 10 === 0).map((mb) => mb.toFixed(0));
  console.log(
    `proxy RSS (MB): start ${rss.samples[0].toFixed(0)}, max ${Math.max(rss.max(), end).toFixed(0)}, end ${end.toFixed(0)}; ` +
      `every 10 s: ${every10.join(" ")}`,
  );
  if (failed > 0) console.log(`requests not answered 200: ${failed}`);
  console.log(`dropped records: ${sent - shutdown.records} (sent ${sent}, recorded ${shutdown.records})`);
  printShutdown(proxy, shutdown, sent);
  console.log("target: dropped 0; RSS at the end near the start (flat)");
}

async function clients(harness) {
  const count = flag("clients", 32);
  const seconds = flag("seconds", 60);
  const kb = flag("kb", 16);
  const { proxy, runs } = await benchProxy(harness);
  const rss = sampleRss(harness, proxy.child.pid);
  const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true }));
  const until = performance.now() + seconds * 1000;
  let sent = 0;
  let failed = 0;
  const client = async () => {
    while (performance.now() < until) {
      sent++;
      if ((await streamedRequest(agent, proxy.url, freshText(kb))) !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: count }, client));
  rss.stop();
  const end = rssOf(proxy.child.pid);
  const max = Math.max(rss.max(), end);
  const shutdown = await interrupt(proxy, runs);
  console.log(`${count} streaming clients, ${kb} KB requests, ${seconds} s (${loadNow()})`);
  console.log(
    `proxy RSS (MB): start ${rss.samples[0].toFixed(0)}, max ${max.toFixed(0)}, end ${end.toFixed(0)}; max/start ${(max / rss.samples[0]).toFixed(2)}x`,
  );
  if (failed > 0) console.log(`requests not answered 200: ${failed}`);
  printShutdown(proxy, shutdown, sent);
  console.log("target: max/start flat however long the run; recorded + lost = sent; SIGINT within the 10 s drain");
}

export async function main() {
  await withHarness((harness) => (process.argv.includes("--rate") ? atRate(harness) : clients(harness)));
}

await runIfMain(import.meta, main);
