import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { FinishedExchange } from "../../src/capture/capture.js";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import type { CAPTURE_QUEUE_LIMIT } from "../../src/capture/capture-thread.js";
import { serveHttp } from "../../src/capture/http.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, jsonl, MAIN, postChat, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
const tokenCache = process.env.PAYLOAD_PROBE_TOKEN_CACHE;
afterEach(async () => {
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

/** A body whose token count no cache holds: one letter repeated (the tokenizer's slowest input), then a fresh id. */
const slowBody = (letters: number) => chatBody(`${"a".repeat(letters)} ${randomUUID()}`, { stream: false });

function runRow(runs: string, id: string): { status: string; request_count: number; lost: number } {
  const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
  try {
    return db.prepare(`SELECT status, request_count, lost FROM runs WHERE id = ?`).get(id) as never;
  } finally {
    db.close();
  }
}

/**
 * A proxy to a quick upstream, with no token cache (every body is counted), whose written records
 * (`record N`) and capture notices land in `events` in the order they happen; tests add their own.
 */
async function proxyTellingEvents(
  prefix: string,
  capture: { queueLimit?: typeof CAPTURE_QUEUE_LIMIT; drainMs: number },
) {
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = "off";
  const runs = tempDir(prefix);
  const events: string[] = [];
  const proxy = await startCaptureProxy({
    upstream: await quickUpstream(),
    runsDir: runs,
    onFinished: (exchange: FinishedExchange) => events.push(`record ${exchange.seq}`),
    capture: { ...capture, notice: (line) => events.push(line) },
  });
  closers.push(() => proxy.close());
  return { runs, events, proxy };
}

describe("capture worker", () => {
  it("relays another client's request while a huge body is being captured, and counts what shutdown could not write", async () => {
    const { runs, events, proxy } = await proxyTellingEvents("capture-thread-", { drainMs: 2_000 });
    expect((await postChat(`${proxy.url}/v1/chat/completions`, slowBody(2_000_000))).status).toBe(200);
    events.push("first replied");
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
    events.push("second replied");
    // The second reply came while the first exchange was still on the worker: the relay never waited for it.
    expect(events.slice(0, 2)).toEqual(["first replied", "second replied"]);
    await proxy.close();
    const row = runRow(runs, proxy.runId);
    expect(row.status).toBe("captured");
    // Every exchange the proxy accepted is either written or counted as lost.
    expect(row.request_count + row.lost).toBe(2);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(row.request_count);
    if (row.lost > 0)
      expect(events.at(-1)).toMatch(/not written within 2000 ms of stopping; the run counts them as lost/);
  });

  it("a small request passes a queue full of large bodies; a large one waits for room", async () => {
    // One large body fills the queue's bytes; its capture (a long run of one letter) keeps them full.
    const { runs, events, proxy } = await proxyTellingEvents("capture-small-", {
      queueLimit: { exchanges: 512, bytes: 1024 },
      drainMs: 600_000,
    });
    expect((await postChat(`${proxy.url}/v1/chat/completions`, slowBody(2_000_000))).status).toBe(200);
    events.push("large replied");
    // fetch sends a string body with its content-length: a small one is let through at once.
    expect((await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi", { stream: false }))).status).toBe(200);
    events.push("small replied");
    const large = postChat(`${proxy.url}/v1/chat/completions`, slowBody(1_100_000)).then((reply) => {
      events.push("second large replied");
      return reply.status;
    });
    expect(await large).toBe(200);
    await proxy.close();
    expect(events.slice(0, 2)).toEqual(["large replied", "small replied"]);
    // The second large body waited for the first one's record: the queue's bytes were full.
    expect(events.indexOf("second large replied")).toBeGreaterThan(events.indexOf("record 1"));
    expect(events.filter((event) => event.startsWith("capture: behind"))).toHaveLength(1);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(3);
  });

  it("a compressed body counts in the queue as the text it may decode to, not its wire size (issue 35)", async () => {
    const { runs, events, proxy } = await proxyTellingEvents("capture-decoded-", {
      queueLimit: { exchanges: 512, bytes: 4 * 1024 * 1024 },
      drainMs: 600_000,
    });
    // A few kilobytes of gzip whose text keeps the worker busy: it may decode to 8 MiB, past the bound.
    const compressed = gzipSync(slowBody(2_000_000));
    const first = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: new Uint8Array(compressed),
    });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    events.push("compressed replied");
    expect((await postChat(`${proxy.url}/v1/chat/completions`, slowBody(1_100_000))).status).toBe(200);
    events.push("large replied");
    await proxy.close();
    expect(events.indexOf("large replied")).toBeGreaterThan(events.indexOf("record 1"));
    expect(events.filter((event) => event.startsWith("capture: behind"))).toHaveLength(1);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toHaveLength(2);
  });

  it("a flood beyond the queue's bound holds new requests, says so once, and records every request", async () => {
    const runs = tempDir("capture-flood-");
    process.env.PAYLOAD_PROBE_TOKEN_CACHE = join(runs, "tokens");
    const notices: string[] = [];
    const proxy = await startCaptureProxy({
      upstream: await quickUpstream(),
      runsDir: runs,
      // A drain time no loaded machine reaches: this test is about every request being written.
      capture: {
        queueLimit: { exchanges: 2, bytes: 64 * 1024 * 1024 },
        drainMs: 600_000,
        notice: (line) => notices.push(line),
      },
    });
    closers.push(() => proxy.close());
    // Ordinary text that takes the worker a while to count (new words every time, so no cache answers).
    const text = () => Array.from({ length: 2_000 }, () => randomUUID().slice(0, 8)).join(" ");
    const post = () =>
      postChat(`${proxy.url}/v1/chat/completions`, chatBody(text(), { stream: false })).then((r) => r.status);
    // The second wave leaves as the first reply arrives, while the first wave's captures fill the queue.
    const first = Array.from({ length: 20 }, post);
    await Promise.race(first);
    const second = Array.from({ length: 20 }, post);
    expect(await Promise.all([...first, ...second])).toEqual(Array(40).fill(200));
    await proxy.close();
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

  it("the proxy CLI exits on SIGTERM during a long capture, within its drain bound, with the run's row finished", async () => {
    const runs = tempDir("capture-sigterm-");
    const cli = await startCli(["proxy", "--upstream", await quickUpstream(), "--runs", runs], {
      ...process.env,
      PAYLOAD_PROBE_TOKEN_CACHE: "off",
    });
    closers.push(async () => cli.child.exitCode === null && cli.child.kill("SIGKILL"));
    expect((await postChat(`${cli.url}/chat/completions`, slowBody(4_000_000))).status).toBe(200);
    expect(await cli.stop()).toBe(0);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    const row = db.prepare(`SELECT status, request_count, lost FROM runs`).get() as ReturnType<typeof runRow>;
    db.close();
    expect(row.status).toBe("captured");
    expect(row.request_count + row.lost).toBe(1);
  });
});

function cli(...args: string[]) {
  const child = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8" });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

/**
 * A real proxy run with one request written and one lost: the second body is one letter repeated
 * (the tokenizer's slowest input, uncached), and the shutdown gives the worker no drain time.
 */
async function runWithOneLost(runs: string): Promise<string> {
  process.env.PAYLOAD_PROBE_TOKEN_CACHE = "off";
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
  const slow = chatBody(`${"a".repeat(2_000_000)} ${randomUUID()}`, { stream: false });
  expect((await postChat(url, slow)).status).toBe(200);
  await proxy.close();
  return proxy.runId;
}

describe("a run with requests relayed but not recorded", () => {
  it("report, report --cost --json and view say how many were lost", async () => {
    const runs = tempDir("lost-report-");
    const runId = await runWithOneLost(runs);
    const lostLine = "lost: 1 request(s) were relayed but not recorded (capture could not finish in time)";
    for (const spec of [join(runs, "proxy"), runId]) {
      const table = cli("report", spec, "--runs", runs);
      expect(table.code, table.err).toBe(0);
      expect(table.err.split("\n")).toContain(lostLine);
      const json = cli("report", spec, "--json", "--runs", runs);
      expect(JSON.parse(json.out)).toHaveLength(1);
      expect(json.err.split("\n")).toContain(lostLine);
    }
    const cost = cli("report", join(runs, "proxy"), "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
    expect(cost.code, cost.err).toBe(0);
    expect(JSON.parse(cost.out)).toMatchObject({ lost: 1, requests: [{ seq: 1 }] });
    const page = join(runs, "page.html");
    expect(cli("view", join(runs, "proxy"), "--out", page, "--runs", runs).code).toBe(0);
    expect(readFileSync(page, "utf8")).toMatch(
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
    const table = cli("report", join(runs, "proxy"), "--runs", runs);
    expect(table.code, table.err).toBe(0);
    expect(table.err).not.toMatch(/^lost:/m);
    const cost = cli("report", join(runs, "proxy"), "--cost", "--json", "--model", "gpt-4.1", "--runs", runs);
    expect(JSON.parse(cost.out)).toMatchObject({ lost: 0 });
  });
});
