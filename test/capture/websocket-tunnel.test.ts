/**
 * WebSocket upgrades through the proxy: a real `ws` server upstream on 127.0.0.1 and a real `ws`
 * client; the tunnel relays every byte and the capture keeps frame sizes only.
 */
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { FrameCounter } from "../../src/capture/websocket-frames.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { filesContaining, jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

/** An echo server: each message comes back as it was sent (text as text, binary as binary). */
async function echoServer(verifyClient?: () => boolean) {
  const upgrades: IncomingMessage[] = [];
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, ...(verifyClient && { verifyClient }) });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  server.on("connection", (socket, request) => {
    upgrades.push(request);
    socket.on("message", (data, binary) => socket.send(data, { binary }));
  });
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as { port: number }).port, upgrades };
}

/** Opens a client, sends each message once the previous echo is back, then closes; resolves with the echoes. */
async function converse(url: string, messages: (string | Buffer)[], protocol: string) {
  const client = new WebSocket(url, protocol);
  closers.push(async () => client.terminate());
  await new Promise((resolve, reject) => {
    client.once("open", resolve);
    client.once("error", reject);
  });
  const echoes: string[] = [];
  for (const message of messages) {
    const echoed = new Promise<string>((resolve) => client.once("message", (data) => resolve(String(data))));
    client.send(message);
    echoes.push(await echoed);
  }
  const closed = new Promise((resolve) => client.once("close", resolve));
  client.close(1000);
  await closed;
  return { echoes, protocol: client.protocol };
}

describe("capture proxy: WebSocket upgrades", () => {
  it("tunnels the upgrade and every frame both ways, and records one side payload with frame sizes, no payloads", async () => {
    const upstream = await echoServer();
    const runs = tempDir("websocket-");
    const proxy = await startCaptureProxy({
      upstream: `http://user:SECRET-USERINFO@127.0.0.1:${upstream.port}/v1`,
      runsDir: runs,
      database: false,
    });
    closers.push(() => proxy.close());
    const wsUrl = `${proxy.url.replace("http://", "ws://")}/realtime?model=m&api-key=SECRET-QUERY`;
    const messages = ["SECRET-FRAME hello", Buffer.alloc(300, 7), "x".repeat(70_000)];

    const { echoes, protocol } = await converse(wsUrl, messages, "realtime");
    await proxy.close();

    expect(echoes).toEqual(messages.map(String));
    expect(protocol).toBe("realtime");
    const [seen] = upstream.upgrades;
    expect(seen!.url).toBe("/v1/realtime?model=m&api-key=SECRET-QUERY");
    expect(seen!.headers.host).toBe(`127.0.0.1:${upstream.port}`);
    expect(seen!.headers["sec-websocket-protocol"]).toBe("realtime");
    expect(seen!.headers.authorization).toBe(`Basic ${Buffer.from("user:SECRET-USERINFO").toString("base64")}`);

    const rows = jsonl(join(runs, "proxy", "payloads.jsonl"));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      type: "request",
      kind: "side",
      api: null,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/realtime\?model=m&api-key=%5Bredacted%5D$/),
    });
    // Each message is one frame; the close frames carry the 2-byte status code.
    const sizes = [Buffer.byteLength(messages[0] as string), 300, 70_000, 2];
    expect(JSON.parse(rows[0]!.body as string)).toEqual({
      websocket: { client: { count: 4, sizes }, upstream: { count: 4, sizes } },
    });
    expect(rows[1]).toEqual({ type: "response", seq: 1, body: "" });
    for (const secret of ["SECRET-FRAME", "SECRET-QUERY", "SECRET-USERINFO"])
      expect(filesContaining(runs, secret)).toEqual([]);
  });

  it("an upstream that refuses the upgrade has its answer relayed to the client as it sent it", async () => {
    const upstream = await echoServer(() => false);
    const runs = tempDir("websocket-refused-");
    const proxy = await startCaptureProxy({
      upstream: `http://127.0.0.1:${upstream.port}`,
      runsDir: runs,
      database: false,
    });
    closers.push(() => proxy.close());
    // ws answers an upgrade its verifyClient refuses with 401.
    const client = new WebSocket(`${proxy.url.replace("http://", "ws://")}/x`);
    // Terminating a refused upgrade reports, as an error event, that it never connected: expected here.
    client.on("error", () => undefined);
    closers.push(async () => client.terminate());
    const status = await new Promise<number>((resolve) =>
      client.once("unexpected-response", (_, response) => resolve(response.statusCode!)),
    );
    client.terminate();
    await proxy.close();
    expect(status).toBe(401);
    const [request, response] = jsonl(join(runs, "proxy", "payloads.jsonl"));
    expect(JSON.parse(request!.body as string)).toEqual({
      websocket: { client: { count: 0, sizes: [] }, upstream: { count: 0, sizes: [] } },
    });
    expect(response).toEqual({ type: "response", seq: 1, body: "" });
  });
});

describe("WebSocket frame counting", () => {
  /** A frame as RFC 6455 §5.2 lays it out, masked as a client sends it when `mask` is given. */
  function frame(payload: Buffer, mask?: Buffer): Buffer {
    const length = payload.length;
    const size = length < 126 ? [length] : length < 65_536 ? [126, length >> 8, length & 255] : [127];
    const head = Buffer.from([0x82, (mask ? 0x80 : 0) | size[0]!, ...size.slice(1)]);
    const long = length >= 65_536 ? Buffer.alloc(8) : Buffer.alloc(0);
    if (long.length > 0) long.writeBigUInt64BE(BigInt(length));
    return Buffer.concat([head, long, mask ?? Buffer.alloc(0), payload]);
  }

  it("reads sizes from headers split across chunks anywhere, masked or not, up to 64-bit lengths", () => {
    const sizes = [0, 5, 125, 126, 65_535, 65_536, 70_000];
    const mask = Buffer.from([1, 2, 3, 4]);
    const stream = Buffer.concat(sizes.map((size, i) => frame(Buffer.alloc(size, i), i % 2 ? mask : undefined)));
    for (const step of [1, 3, 13, 4096, stream.length]) {
      const counter = new FrameCounter();
      for (let at = 0; at < stream.length; at += step) counter.push(stream.subarray(at, at + step));
      expect(counter.seen, `chunks of ${step}`).toEqual({ count: sizes.length, sizes });
    }
  });
});
