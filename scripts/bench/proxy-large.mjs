#!/usr/bin/env node
/**
 * Large responses through the capture proxy: memory stays flat however many pass.
 *
 *   node scripts/bench/proxy-large.mjs [--responses N] [--mb M]   (defaults 8 responses of 50 MB)
 *   (or node scripts/bench-proxy.mjs --large …)
 *
 * Starts an SSE upstream in this process and the built proxy (database on) as a child, then fetches
 * N chat completions responses of M MB each, first straight from the upstream, then through the
 * proxy. Prints, side by side with ratios: the time until each stream has fully arrived and until it
 * ended (direct vs proxy), and the proxy's resident memory when idle, after the first response, after
 * the last, and at its peak (Linux /proc VmHWM). Flat memory means the last-response figure stays near
 * the first-response one however large N is.
 */
import "../help.mjs";
import { withHarness } from "./harness.mjs";
import { flag, median, memoryOf, runIfMain, sseBody, startBenchProxy, upstream } from "./proxy-kit.mjs";

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

const row = (name, direct, proxy, unit) =>
  `${name.padEnd(34)} ${direct.toFixed(0).padStart(9)} ${proxy.toFixed(0).padStart(9)} ${unit.padEnd(3)} ${(proxy / direct).toFixed(2).padStart(7)}x`;

function print(responses, megabytes, bytes, { direct, proxied, idle, rssAfter, peak }) {
  console.log(`${responses} responses of ${megabytes} MB (${bytes} bytes each), median over responses`);
  console.log(`${"".padEnd(34)} ${"direct".padStart(9)} ${"proxy".padStart(9)}     ${"ratio".padStart(8)}`);
  const arrived = [median(direct.map((d) => d.arrived)), median(proxied.map((p) => p.arrived))];
  console.log(row("stream fully arrived", ...arrived, "ms"));
  console.log(row("stream ended", median(direct.map((d) => d.ended)), median(proxied.map((p) => p.ended)), "ms"));
  console.log(`${"".padEnd(34)} ${"baseline".padStart(9)} ${"proxy".padStart(9)}     ${"ratio".padStart(8)}`);
  console.log(row("RSS after 1st vs idle", idle.rss, rssAfter[0], "MB"));
  console.log(row(`RSS after response ${responses} vs after 1st`, rssAfter[0], rssAfter.at(-1), "MB"));
  console.log(row("peak RSS vs one response's bytes", bytes / 1024 / 1024, peak, "MB"));
  console.log(`proxy: stream ended (ms) per response: ${proxied.map((p) => p.ended.toFixed(0)).join(" ")}`);
  console.log(`RSS after each response (MB): ${rssAfter.map((mb) => mb.toFixed(0)).join(" ")}`);
  console.log(`target: stream ended ratio near 1; RSS after the last within ~1.2x of after the first (flat)`);
}

export async function main() {
  const responses = flag("responses", 8);
  const megabytes = flag("mb", 50);
  const body = sseBody(megabytes * 1024 * 1024);
  await withHarness(async (harness) => {
    const upstreamUrl = await upstream(harness, () => ({ headers: { "content-type": "text/event-stream" }, body }));
    const runs = harness.tempDir("bench-proxy-");
    const proxy = await startBenchProxy(harness, upstreamUrl, runs);
    const idle = memoryOf(proxy.child.pid);
    const direct = [];
    const proxied = [];
    const rssAfter = [];
    // Alternated, so a busy machine slows both sides alike.
    for (let i = 0; i < responses; i++) {
      direct.push(await fetchStream(upstreamUrl, body.length));
      proxied.push(await fetchStream(proxy.url, body.length));
      // The figure includes the capture's work: the record is written after the stream ends.
      await proxy.written(i + 1);
      rssAfter.push(memoryOf(proxy.child.pid).rss);
    }
    const peak = memoryOf(proxy.child.pid).peak;
    print(responses, megabytes, body.length, { direct, proxied, idle, rssAfter, peak });
  });
}

await runIfMain(import.meta, main);
