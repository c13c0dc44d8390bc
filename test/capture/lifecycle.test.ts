/**
 * The lifecycle every worker, server and tunnel keeps (src/capture/lifecycle.ts): a worker that exits
 * settles whatever waits on it, and a close returns within its deadline however its peers behave: an
 * upstream on 127.0.0.1 (real TCP) that accepts and then never answers, and never closes. The tests
 * wait for events (a close resolving, an exchange written), never for a clock.
 */
import { createHash } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { FinishedExchange } from "../../src/capture/capture.js";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { CaptureThread } from "../../src/capture/capture-thread.js";
import { WorkerCalls } from "../../src/capture/lifecycle.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

/**
 * A TCP server that accepts, reads, and never writes or closes on its own (half-open allowed, so a
 * client's FIN is not answered with one). `answer` may reply once to the first bytes of a connection.
 */
async function silentUpstream(answer?: (head: string) => string) {
  const sockets = new Set<Socket>();
  let received = "";
  const waiters: { pattern: RegExp; found: () => void }[] = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("data", (chunk) => answer && socket.write(answer(chunk.toString("latin1"))));
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      for (const waiter of waiters.filter((w) => w.pattern.test(received))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.found();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    port: (server.address() as { port: number }).port,
    /** Resolves once what the upstream has received matches. */
    received: (pattern: RegExp) =>
      new Promise<void>((found) => (pattern.test(received) ? found() : waiters.push({ pattern, found }))),
  };
}

/** The upstream's 101 to a WebSocket upgrade head (RFC 6455 §4.2.2: the accept key from the client's). */
function switching(head: string): string {
  const key = /^sec-websocket-key: *(\S+)/im.exec(head)![1]!;
  const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;
}

/** A proxy in front of `port`, its run in a temp folder without a database; each exchange written lands in `written`. */
async function proxyTo(port: number, drainMs?: number) {
  const runs = tempDir("lifecycle-");
  const written: FinishedExchange[] = [];
  const waiting: (() => void)[] = [];
  const proxy = await startCaptureProxy({
    upstream: `http://127.0.0.1:${port}/v1`,
    runsDir: runs,
    database: false,
    onFinished: (exchange) => {
      written.push(exchange);
      for (const wake of waiting.splice(0)) wake();
    },
    ...(drainMs !== undefined && { capture: { drainMs, notice: () => undefined } }),
    // The tunnels' linger (2 s by default) bounds the tests' waits on an upstream that never closes:
    // short, the bound still has to hold for the proxy to close.
    tunnel: { lingerMs: 100 },
  });
  closers.push(() => proxy.close());
  const exchangeWritten = () =>
    new Promise<void>((resolve) => (written.length > 0 ? resolve() : waiting.push(resolve)));
  return { runs, proxy, written, exchangeWritten };
}

const openClient = (url: string) => {
  const client = new WebSocket(url);
  client.on("error", () => undefined);
  closers.push(async () => client.terminate());
  return client;
};

describe("a worker that exits", () => {
  it("settles every call still waiting with an error, and refuses later ones at once", async () => {
    const worker = new Worker(join(PROJECT_ROOT, "test", "fixtures", "exiting-worker.mjs"));
    closers.push(() => worker.terminate());
    const calls = new WorkerCalls(worker, "the test worker");
    worker.on("message", (reply: { id: number; value: unknown }) => calls.settle(reply.id, { value: reply.value }));
    expect(await calls.call((id) => ({ type: "echo", id, value: 7 }), undefined)).toBe(7);
    const held = calls.call((id) => ({ type: "hold", id }), undefined);
    const exiting = calls.call((id) => ({ type: "exit", id }), undefined);
    await expect(held).rejects.toThrow("the test worker exited (code 3) before it answered");
    await expect(exiting).rejects.toThrow("exited (code 3)");
    expect((await calls.ended).message).toContain("code 3");
    await expect(calls.call((id) => ({ type: "echo", id, value: 1 }), undefined)).rejects.toThrow("exited (code 3)");
  });

  it("the capture worker, once ended, fails a token count at once instead of leaving it waiting", async () => {
    const thread = await CaptureThread.start({ name: "ended", runsDir: tempDir("lifecycle-thread-"), database: false });
    await thread.close(Promise.resolve());
    await thread.ended;
    await expect(thread.countRequestTokens("openai-completions", chatBody("hi"))).rejects.toThrow(
      "the capture worker exited",
    );
  });
});

describe("an upstream that accepts and never answers nor closes", () => {
  it("a WebSocket still waiting for the upstream's answer does not hold the proxy's close", async () => {
    const upstream = await silentUpstream();
    const { proxy, written } = await proxyTo(upstream.port);
    openClient(`${proxy.url.replace(/^http/, "ws")}/responses`);
    await upstream.received(/^GET \/v1\/responses HTTP\/1\.1\r\n/);
    await proxy.close();
    // Recorded as a tunnel the upstream never answered.
    expect(written.map((exchange) => [exchange.outcome.status, exchange.outcome.ending])).toEqual([[null, "failed"]]);
  });

  it("a switched tunnel whose client left ends although the upstream never closes its side", async () => {
    const upstream = await silentUpstream(switching);
    const { proxy, written, exchangeWritten } = await proxyTo(upstream.port);
    const client = openClient(`${proxy.url.replace(/^http/, "ws")}/responses`);
    await new Promise((resolve) => client.once("open", resolve));
    client.terminate();
    // The tunnel is written once both sides have closed: the upstream's is cut after its linger.
    await exchangeWritten();
    expect([written[0]!.outcome.status, written[0]!.outcome.ending]).toEqual([101, "complete"]);
    await proxy.close();
  });

  it("an HTTP request still waiting for the upstream's headers does not hold the close past the drain time", async () => {
    const upstream = await silentUpstream();
    const { runs, proxy } = await proxyTo(upstream.port, 200);
    const request = fetch(`${proxy.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chatBody("hello"),
    }).catch((error: Error) => error);
    await upstream.received(/\r\n\r\n\{/);
    await proxy.close();
    expect(await request).toBeInstanceOf(Error);
    expect(jsonl(join(runs, "proxy", "requests.jsonl"))).toEqual([]);
  });
});
