#!/usr/bin/env node
/**
 * The capture proxy on large responses: memory over a session and how promptly each stream ends.
 *
 *   node scripts/bench-proxy.mjs [--responses N] [--mb M]     (defaults: 8 responses of 50 MB)
 *
 * Starts an SSE upstream in this process and the built proxy (`dist/cli/main.js proxy`, database on)
 * as a child, then fetches N chat completions responses of M MB each, first straight from the
 * upstream, then through the proxy. Prints, side by side with ratios: the time until each stream has
 * fully arrived and until it ended (direct vs proxy), and the proxy's resident memory when idle, after
 * the first response, after the last, and at its peak (Linux /proc VmHWM). Flat memory means the
 * last-response figure stays near the first-response one however large N is.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

function startProxy(upstream, runs) {
  const child = spawn(
    process.execPath,
    [join(root, "dist/cli/main.js"), "proxy", "--upstream", upstream, "--runs", runs],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => {
      const match = /^LISTENING (\S+)$/.exec(line);
      if (match) resolve({ child, url: match[1] });
      else reject(new Error(`proxy did not start: ${line}`));
    });
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}`)));
  });
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

const body = sseBody(megabytes * 1024 * 1024);
const upstream = await startUpstream(body);
const runs = mkdtempSync(join(tmpdir(), "bench-proxy-"));
const proxy = await startProxy(upstream.url, runs);
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
  proxy.child.kill("SIGTERM");
  await new Promise((resolve) => proxy.child.once("exit", resolve));
  upstream.server.close();
  rmSync(runs, { recursive: true, force: true });
}
