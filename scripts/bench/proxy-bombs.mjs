#!/usr/bin/env node
/**
 * Decompression bombs through the capture proxy, beside an ordinary request (issue 35).
 *
 *   node scripts/bench/proxy-bombs.mjs [--mib M]   (default 256: each bomb inflates to M MiB)
 *   (or node scripts/bench-proxy.mjs --bombs …)
 *
 * Three exchanges, each through a fresh built proxy (database on, a token cache of its own, so every
 * text is counted) to an upstream in this process: an ordinary chat completions request and reply;
 * a reply sent with `content-encoding: gzip` whose few hundred kilobytes inflate to a chat completion
 * of M MiB of one letter; a request body sent with `content-encoding: br` whose few hundred bytes
 * inflate to M MiB of one letter. Prints for each: the bytes on the wire and what they inflate to,
 * milliseconds until the client had the whole reply and until the proxy said the record was written,
 * the proxy's peak RSS (Linux /proc VmHWM) with its ratio to the ordinary exchange's, and the size of
 * payloads.jsonl and of the database once the proxy has exited (SIGINT). The proxy decodes a body as
 * a stream up to a limit (src/capture/body-encoding.ts) and stores what is past it as cut: so a bomb
 * costs about what an ordinary body of that limit does, not what it claims to inflate to.
 */
import "../help.mjs";
import { statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { constants, createBrotliCompress, createGzip } from "node:zlib";
import { withHarness } from "./harness.mjs";
import { flag, interrupt, loadLine, memoryOf, runIfMain, startBenchProxy, upstream } from "./proxy-kit.mjs";

const MIB = 1024 * 1024;

/** `head`, `mib` MiB of one letter, `tail`, through `compressor`: the compressed bytes, made a MiB at a time. */
async function compressed(compressor, head, mib, tail) {
  const parts = [];
  compressor.on("data", (part) => parts.push(part));
  const ended = new Promise((resolve, reject) => {
    compressor.once("end", resolve);
    compressor.once("error", reject);
  });
  const letters = Buffer.alloc(MIB, "a");
  compressor.write(head);
  for (let i = 0; i < mib; i++)
    if (!compressor.write(letters)) await new Promise((resume) => compressor.once("drain", resume));
  compressor.end(tail);
  await ended;
  return Buffer.concat(parts);
}

const ordinaryRequest = JSON.stringify({
  model: "bench",
  stream: false,
  messages: [
    { role: "system", content: "You are a coding agent. Keep answers short." },
    { role: "user", content: "List the files." },
  ],
});
const ordinaryReply = JSON.stringify({
  id: "bench",
  object: "chat.completion",
  choices: [{ index: 0, message: { role: "assistant", content: "README.md src test" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
});

/** The three exchanges: what the client sends and what the upstream answers, each with what it inflates to. */
async function cases(mib) {
  const json = { "content-type": "application/json" };
  const plain = { headers: json, body: Buffer.from(ordinaryReply) };
  const replyHead =
    '{"id":"bench","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"';
  const replyTail = '"},"finish_reason":"stop"}]}';
  const gzipped = await compressed(createGzip({ level: 9 }), replyHead, mib, replyTail);
  const brotli = createBrotliCompress({
    params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_LGWIN]: 24 },
  });
  const requestHead = '{"model":"bench","stream":false,"messages":[{"role":"user","content":"';
  const brotlied = await compressed(brotli, requestHead, mib, '"}]}');
  const inflated = mib * MIB;
  return [
    { name: "ordinary request", request: { headers: json, body: Buffer.from(ordinaryRequest) }, reply: plain },
    {
      name: "gzip reply bomb",
      request: { headers: json, body: Buffer.from(ordinaryRequest) },
      reply: { headers: { ...json, "content-encoding": "gzip" }, body: gzipped },
      wire: gzipped.length,
      inflated: inflated + replyHead.length + replyTail.length,
    },
    {
      name: "brotli request bomb",
      request: { headers: { ...json, "content-encoding": "br" }, body: brotlied },
      reply: plain,
      wire: brotlied.length,
      inflated: inflated + requestHead.length + 4,
    },
  ];
}

/** Sends `body` with `headers`; resolves once the whole reply has arrived, with its status. */
function send(url, { headers, body }) {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/chat/completions`, { method: "POST", headers }, (response) => {
      response.on("data", () => undefined);
      response.on("end", () => resolve(response.statusCode));
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** One exchange through a proxy of its own, stopped (SIGINT) before this returns; its figures. */
function measure(exchange) {
  return withHarness(async (harness) => {
    const upstreamUrl = await upstream(harness, () => exchange.reply);
    const runs = harness.tempDir("bench-bombs-");
    const proxy = await startBenchProxy(harness, upstreamUrl, runs);
    const idle = memoryOf(proxy.child.pid).rss;
    const started = performance.now();
    const status = await send(proxy.url, exchange.request);
    const replied = performance.now() - started;
    const recorded = (await proxy.written(1)) - started;
    const peak = memoryOf(proxy.child.pid).peak;
    const shutdown = await interrupt(proxy, runs);
    const size = (file) => statSync(file).size / MIB;
    const payloads = size(join(runs, "proxy", "payloads.jsonl"));
    const database = size(join(runs, "payload-probe.db"));
    return { ...exchange, status, replied, recorded, idle, peak, payloads, database, exit: shutdown.code };
  });
}

function print(results) {
  const base = results[0];
  const kib = (bytes) => (bytes / 1024).toFixed(1);
  const mib = (bytes) => (bytes === undefined ? "-" : (bytes / MIB).toFixed(0));
  console.log(
    `${"".padEnd(20)} ${"wire KiB".padStart(9)} ${"to MiB".padStart(9)} ${"reply ms".padStart(9)} ${"record ms".padStart(10)} ` +
      `${"peak RSS".padStart(9)} ${"x ordin.".padStart(8)} ${"payloads".padStart(9)} ${"db MiB".padStart(7)}`,
  );
  for (const r of results)
    console.log(
      `${r.name.padEnd(20)} ${kib(r.wire ?? r.request.body.length).padStart(9)} ${mib(r.inflated).padStart(9)} ` +
        `${r.replied.toFixed(0).padStart(9)} ${r.recorded.toFixed(0).padStart(10)} ${r.peak.toFixed(0).padStart(9)} ` +
        `${(r.peak / base.peak).toFixed(2).padStart(8)} ${r.payloads.toFixed(1).padStart(9)} ${r.database.toFixed(1).padStart(7)}`,
    );
  const odd = results.filter((r) => r.status !== 200 || r.exit !== 0);
  for (const r of odd) console.log(`${r.name}: HTTP ${r.status}, proxy exit ${r.exit}`);
  console.log(`proxy RSS when idle: ${results.map((r) => r.idle.toFixed(0)).join(", ")} MB; ${loadLine()}`);
  console.log(
    "MiB on disk once the proxy exited; peak RSS in MB (VmHWM); target: a bomb costs near what ordinary does",
  );
}

export async function main() {
  const mib = flag("mib", 256);
  const exchanges = await cases(mib);
  const results = [];
  for (const exchange of exchanges) results.push(await measure(exchange));
  print(results);
}

await runIfMain(import.meta, main);
