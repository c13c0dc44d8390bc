import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FinishedExchange } from "../../src/capture/capture.js";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import type { CAPTURE_QUEUE_LIMIT } from "../../src/capture/capture-thread.js";
import { serveHttp } from "../../src/capture/http.js";
import { savedPageData } from "../analysis/view/saved-page.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, jsonl, postChat, startCli } from "./http-harness.js";
import { closeTokenCache, openWhenStopped } from "./token-cache-gate.js";

const closers: (() => Promise<unknown>)[] = [];
const tokenCache = process.env.PAYLOAD_PROBE_TOKEN_CACHE;
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
  if (tokenCache === undefined) delete process.env.PAYLOAD_PROBE_TOKEN_CACHE;
  else process.env.PAYLOAD_PROBE_TOKEN_CACHE = tokenCache;
});

/** An upstream that answers every chat request at once with one short completion. */
async function quickUpstream(): Promise<string> {
  const upstream = await serveHttp(
    async (request, response) => {
      for await (const _ of request) {
        // Read to the end; the reply does not depend on it.
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        }),
      );
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => upstream.close());
  return `http://127.0.0.1:${upstream.port}`;
}

function runRow(runs: string, id: string): { status: string; request_count: number; lost: number } {
  const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
  try {
    return db.prepare(`SELECT status, request_count, lost FROM runs WHERE id = ?`).get(id) as never;
  } finally {
    db.close();
  }
}

/**
 * A proxy to a quick upstream whose capture worker is held at its first exchange until `gate.open()`
 * (token-cache-gate.ts), its written records (`record N`) and capture notices landing in `events` in
 * the order they happen; tests add their own. A notice that capture is behind opens the gate: a
 * request then waits for room in the queue, which only the held exchange's record can make.
 */
async function proxyTellingEvents(
  prefix: string,
  capture: { queueLimit?: typeof CAPTURE_QUEUE_LIMIT; drainMs: number },
) {
  const runs = tempDir(prefix);
  const gate = closeTokenCache(tempDir(`${prefix}tokens-`));
  // Registered before the proxy: a test that fails lets the worker go before the proxy is closed.
  closers.push(async () => gate.open());
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = gate.path;
  const events: string[] = [];
  const proxy = await startCaptureProxy({
    upstream: await quickUpstream(),
    runsDir: runs,
    onFinished: (exchange: FinishedExchange) => events.push(`record ${exchange.seq}`),
    capture: {
      ...capture,
      notice: (line) => {
        events.push(line);
        if (line.startsWith("capture: behind")) gate.open();
      },
    },
  });
  closers.push(() => proxy.close());
  return { runs, events, proxy, gate };
}

/** A request body of about `bytes` bytes of words (content-length above SMALL_REQUEST_BYTES waits for room). */
const wordsBody = (bytes: number) => chatBody(`${"lorem ipsum ".repeat(Math.ceil(bytes / 12))}${randomUUID()}`);

describe("capture worker", () => {
  it("relays another client's request while a body is being captured, and counts what shutdown could not write", async () => {
    const { runs, events, proxy, gate } = await proxyTellingEvents("capture-thread-", { drainMs: 0 });
    // The worker is let go only once the main thread has asked it to stop: then neither exchange is written.
    openWhenStopped(gate);
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("first", { stream: false }))).status).toBe(200);
    events.push("first replied");
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
    events.push("second replied");
    // Both replies came while the first exchange was held on the worker: the relay never waited for it.
    expect(events).toEqual(["first replied", "second replied"]);
    await proxy.close();
    // Every exchange the proxy accepted is either written or counted as lost: here both are lost.
    expect(runRow(runs, proxy.runId)).toMatchObject({ status: "captured", request_count: 0, lost: 2 });
    expect(events.at(-1)).toBe(
      "capture: 2 exchange(s) not written within 0 ms of stopping; the run counts them as lost",
    );
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toEqual([]);
  });

  it("a small request passes a queue full of large bodies; a large one waits for room", async () => {
    // The first body fills the queue's bytes, and stays in it while the worker is held.
    const { runs, events, proxy } = await proxyTellingEvents("capture-small-", {
      queueLimit: { exchanges: 512, bytes: 1024 },
      drainMs: 600_000,
    });
    expect((await postChat(`${proxy.url}/v1/chat/completions`, wordsBody(4096))).status).toBe(200);
    events.push("large replied");
    // fetch sends a string body with its content-length: a small one is let through at once.
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
    events.push("small replied");
    // Past SMALL_REQUEST_BYTES: it waits for room, says so (which lets the worker go) and passes after record 1.
    expect((await postChat(`${proxy.url}/v1/chat/completions`, wordsBody(1_100_000))).status).toBe(200);
    events.push("second large replied");
    expect(events.slice(0, 3)).toEqual(["large replied", "small replied", expect.stringMatching(/^capture: behind/)]);
    expect(events.indexOf("second large replied")).toBeGreaterThan(events.indexOf("record 1"));
    await proxy.close();
    expect(events.filter((event) => event.startsWith("capture: behind"))).toHaveLength(1);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(3);
  });

  it("a compressed body counts in the queue as the text it may decode to, not its wire size (issue 35)", async () => {
    const { runs, events, proxy } = await proxyTellingEvents("capture-decoded-", {
      queueLimit: { exchanges: 512, bytes: 4 * 1024 * 1024 },
      drainMs: 600_000,
    });
    // A hundred bytes of gzip that may decode to 8 MiB (DECODED_FLOOR): past the queue's 4 MiB.
    const compressed = gzipSync(chatBody("hi", { stream: false }));
    const first = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: new Uint8Array(compressed),
    });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    events.push("compressed replied");
    expect((await postChat(`${proxy.url}/v1/chat/completions`, wordsBody(1_100_000))).status).toBe(200);
    events.push("large replied");
    expect(events.slice(0, 2)).toEqual(["compressed replied", expect.stringMatching(/^capture: behind/)]);
    expect(events.indexOf("large replied")).toBeGreaterThan(events.indexOf("record 1"));
    await proxy.close();
    expect(events.filter((event) => event.startsWith("capture: behind"))).toHaveLength(1);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(2);
  });

  it("a flood beyond the queue's bound holds new requests, says so once, and records every request", async () => {
    // Two exchanges fill the queue while the worker is held on the first; the third waits and says so.
    const { runs, events, proxy } = await proxyTellingEvents("capture-flood-", {
      queueLimit: { exchanges: 2, bytes: 64 * 1024 * 1024 },
      drainMs: 600_000,
    });
    const post = (n: number) =>
      postChat(`${proxy.url}/v1/chat/completions`, chatBody(`request ${n} ${randomUUID()}`, { stream: false })).then(
        (r) => r.status,
      );
    // The second wave leaves as the first reply arrives, while the first wave's captures fill the queue.
    const first = Array.from({ length: 20 }, (_, n) => post(n));
    await Promise.race(first);
    const second = Array.from({ length: 20 }, (_, n) => post(20 + n));
    expect(await Promise.all([...first, ...second])).toEqual(Array(40).fill(200));
    await proxy.close();
    const notices = events.filter((event) => event.startsWith("capture:"));
    expect(notices, notices.join("\n")).toHaveLength(1);
    expect(notices[0]).toMatch(
      /^capture: behind \(\d+ exchanges, [\d.]+ MiB waiting to be written\); new requests wait/,
    );
    const seqs = jsonl<{ seq: number }>(join(runs, "proxy", "requests.jsonl")).map((record) => record.seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(runRow(runs, proxy.runId)).toMatchObject({ request_count: 40, lost: 0 });
  });

  it("a drain time that runs out as the worker ends the run leaves it whole: one side ends it (issue 35)", async () => {
    // drainMs 0: the deadline and the worker's own close of the run race on every stop.
    for (let round = 0; round < 5; round++) {
      const runs = tempDir("capture-gate-");
      let written!: () => void;
      const recorded = new Promise<void>((resolve) => {
        written = resolve;
      });
      const proxy = await startCaptureProxy({
        upstream: await quickUpstream(),
        runsDir: runs,
        onFinished: () => written(),
        capture: { drainMs: 0, notice: () => undefined },
      });
      expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
      await recorded;
      await proxy.close();
      expect(readdirSync(runs).sort()).toEqual(["payload-probe.db", "proxy"]);
      expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(1);
      expect(runRow(runs, proxy.runId)).toMatchObject({ status: "captured", request_count: 1, lost: 0 });
    }
  });

  it("the proxy CLI exits on SIGTERM during a capture, within its drain bound, with the run's row finished", async () => {
    const runs = tempDir("capture-sigterm-");
    const gate = closeTokenCache(tempDir("capture-sigterm-tokens-"));
    closers.push(async () => gate.open());
    const cli = await startCli(["proxy", "--upstream", await quickUpstream(), "--runs", runs], {
      ...process.env,
      PAYLOAD_PROBE_TOKEN_CACHE: gate.path,
    });
    closers.push(async () => cli.child.exitCode === null && cli.child.kill("SIGKILL"));
    expect((await postChat(`${cli.url}/chat/completions`, chatBody("during", { stream: false }))).status).toBe(200);
    // The exchange cannot be written before the gate opens: SIGTERM comes while it is being captured.
    const stopped = cli.stop();
    gate.open();
    expect(await stopped).toBe(0);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    const row = db.prepare(`SELECT status, request_count, lost FROM runs`).get() as ReturnType<typeof runRow>;
    db.close();
    expect(row.status).toBe("captured");
    expect(row.request_count + row.lost).toBe(1);
  });
});

/** A command run in this process (what it prints is tested here, not its start-up). */
async function cli(...args: string[]) {
  const { status, stdout, stderr } = await runInProcess({}, ...args);
  return { code: status, out: stdout, err: stderr };
}

/**
 * A real proxy run with one request written and one lost: the token cache is closed (token-cache-gate.ts)
 * once the first record is written, so the second exchange, a text never counted, waits on the worker
 * until the shutdown, which gives it no drain time, has asked the worker to stop.
 */
async function runWithOneLost(runs: string): Promise<string> {
  const tokens = tempDir("lost-tokens-");
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = tokens;
  let firstWritten!: () => void;
  const written = new Promise<void>((resolve) => {
    firstWritten = resolve;
  });
  const proxy = await startCaptureProxy({
    upstream: await quickUpstream(),
    runsDir: runs,
    onFinished: (exchange: FinishedExchange) => exchange.seq === 1 && firstWritten(),
    capture: { drainMs: 0, notice: () => undefined },
  });
  closers.push(() => proxy.close());
  const url = `${proxy.url}/v1/chat/completions`;
  expect((await postChat(url, chatBody("hi", { stream: false }))).status).toBe(200);
  await written;
  const gate = closeTokenCache(tokens);
  closers.unshift(async () => gate.open());
  openWhenStopped(gate);
  expect((await postChat(url, chatBody(`held ${randomUUID()}`, { stream: false }))).status).toBe(200);
  await proxy.close();
  return proxy.runId;
}

describe("a run with requests relayed but not recorded", () => {
  it("report, report --cost --json and view say how many were lost", async () => {
    const runs = tempDir("lost-report-");
    const runId = await runWithOneLost(runs);
    const lostLine = "lost: 1 request(s) were relayed but not recorded (capture could not finish in time)";
    for (const spec of [join(runs, "proxy"), runId]) {
      const table = await cli("report", spec, "--runs", runs);
      expect(table.code, table.err).toBe(0);
      expect(table.err.split("\n")).toContain(lostLine);
      const json = await cli("report", spec, "--json", "--runs", runs);
      expect(JSON.parse(json.out)).toHaveLength(1);
      expect(json.err.split("\n")).toContain(lostLine);
    }
    const cost = await cli("report", join(runs, "proxy"), "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
    expect(cost.code, cost.err).toBe(0);
    expect(JSON.parse(cost.out)).toMatchObject({ lost: 1, requests: [{ seq: 1 }] });
    const page = join(runs, "page.html");
    expect((await cli("view", join(runs, "proxy"), "--out", page, "--runs", runs)).code).toBe(0);
    expect(savedPageData(readFileSync(page, "utf8")).index).toMatch(
      /"runs":\[\{"label":"[^"]+","probe":"proxy","runId":"[^"]+","requests":1,"lost":1,"secrets":0\}\]/,
    );
  });

  it("a run that lost nothing says nothing of it", async () => {
    const runs = tempDir("lost-none-");
    process.env.PAYLOAD_PROBE_TOKEN_CACHE = "off";
    const proxy = await startCaptureProxy({ upstream: await quickUpstream(), runsDir: runs });
    closers.push(() => proxy.close());
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
    await proxy.close();
    const table = await cli("report", join(runs, "proxy"), "--runs", runs);
    expect(table.code, table.err).toBe(0);
    expect(table.err).not.toMatch(/^lost:/m);
    const cost = await cli("report", join(runs, "proxy"), "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
    expect(JSON.parse(cost.out)).toMatchObject({ lost: 0 });
  });
});
