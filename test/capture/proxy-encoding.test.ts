/**
 * Compressed bodies through the proxy: the client gets the upstream's bytes untouched, the capture
 * records the decoded text (and says when it cannot decode one).
 */
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { DECODED_FLOOR, decodedLimit } from "../../src/capture/body-encoding.js";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
const STREAM = [
  data({ choices: [{ index: 0, delta: { role: "assistant", content: "decoded reply" }, finish_reason: "stop" }] }),
  data({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } }),
  "data: [DONE]\n\n",
].join("");

/**
 * A zstd frame (RFC 8878 §3.1.1) of raw blocks: magic, a single-segment header with a 4-byte content
 * size, then blocks of at most 128 KiB. Node 20 has no zstd encoder; raw blocks are what an encoder
 * emits for data it cannot shrink, and any decoder must read them.
 */
function zstdFrame(content: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUInt32LE(0xfd2fb528, 0);
  header[4] = 0xa0; // Frame_Content_Size_flag 2 (4 bytes), Single_Segment_flag.
  header.writeUInt32LE(content.length, 5);
  const blocks: Buffer[] = [];
  for (let start = 0; start < content.length; start += 128 * 1024) {
    const block = content.subarray(start, start + 128 * 1024);
    const last = start + block.length >= content.length ? 1 : 0;
    const blockHeader = Buffer.alloc(3);
    blockHeader.writeUIntLE((block.length << 3) | last, 0, 3);
    blocks.push(blockHeader, block);
  }
  return Buffer.concat([header, ...blocks]);
}

const ENCODERS: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: (bytes) => gzipSync(bytes),
  deflate: (bytes) => deflateSync(bytes),
  br: (bytes) => brotliCompressSync(bytes),
  zstd: zstdFrame,
  "gzip, br": (bytes) => brotliCompressSync(gzipSync(bytes)),
  "zstd,deflate": (bytes) => deflateSync(zstdFrame(bytes)),
};

/**
 * An upstream that answers every request with these bytes and headers (the first request only, when
 * `later` says what comes after), and keeps what it received.
 */
async function upstreamSending(bytes: Buffer, headers: Record<string, string>, later?: Buffer) {
  const received: Buffer[] = [];
  const service = await serveHttp(
    async (incoming, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      received.push(Buffer.concat(chunks));
      if (later && received.length > 1) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.end(later);
        return;
      }
      response.writeHead(200, headers);
      response.end(bytes);
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => service.close());
  return { url: `http://127.0.0.1:${service.port}/v1`, received };
}

/** POSTs with node:http, which (unlike fetch) leaves a compressed reply as it came. */
function rawPost(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers } });
    outgoing.on("response", async (response) => {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of response) chunks.push(chunk as Buffer);
        resolve(Buffer.concat(chunks));
      } catch (error) {
        reject(error);
      }
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

async function proxyTo(upstream: string) {
  const runs = tempDir("proxy-encoding-");
  const proxy = await startCaptureProxy({ upstream, runsDir: runs, database: false });
  closers.push(() => proxy.close());
  const dir = join(runs, "proxy");
  return {
    proxy,
    payloads: () => jsonl(join(dir, "payloads.jsonl")),
    records: () => jsonl<RequestRecord>(join(dir, "requests.jsonl")),
  };
}

describe("capture proxy: content-encoding", () => {
  for (const [coding, encode] of Object.entries(ENCODERS))
    it(`a response in ${coding} is relayed byte for byte and recorded decoded, usage and all`, async () => {
      const wire = encode(Buffer.from(STREAM));
      const upstream = await upstreamSending(wire, { "content-type": "text/event-stream", "content-encoding": coding });
      const { proxy, payloads, records } = await proxyTo(upstream.url);

      const relayed = await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("hi")), {
        "accept-encoding": "gzip, deflate, br, zstd",
      });
      await proxy.close();

      expect(relayed.equals(wire)).toBe(true);
      const [record] = records();
      expect(record).toMatchObject({ status: 200, ending: "complete", error: null });
      expect(record!.response?.text).toBe("decoded reply");
      expect(record!.usage).toMatchObject({ inputTokens: 11, outputTokens: 3 });
      const response = payloads().find((row) => row.type === "response");
      expect(response).toEqual({
        type: "response",
        seq: 1,
        body: STREAM,
        encoding: { contentEncoding: coding, wireBytes: wire.length },
      });
    });

  it("a gzipped request body reaches the upstream as sent and is recorded as the JSON it holds", async () => {
    const upstream = await upstreamSending(Buffer.from(STREAM), { "content-type": "text/event-stream" });
    const { proxy, payloads, records } = await proxyTo(upstream.url);
    const json = chatBody("compressed question");
    const wire = gzipSync(Buffer.from(json));

    await rawPost(`${proxy.url}/chat/completions`, wire, { "content-encoding": "gzip" });
    await proxy.close();

    expect(upstream.received[0]!.equals(wire)).toBe(true);
    const [record] = records();
    // The record's sizes and hashes describe the decoded body; the payload row gives the wire size.
    expect(record).toMatchObject({ kind: "loop", model: "mock-model", bodyBytes: Buffer.byteLength(json) });
    const request = payloads().find((row) => row.type === "request");
    expect(request).toMatchObject({
      kind: "loop",
      body: json,
      encoding: { contentEncoding: "gzip", wireBytes: wire.length },
    });
  });

  it("a raw deflate body (sent as deflate by some servers) is decoded too", async () => {
    const wire = deflateRawSync(Buffer.from(STREAM));
    const upstream = await upstreamSending(wire, {
      "content-type": "text/event-stream",
      "content-encoding": "deflate",
    });
    const { proxy, records } = await proxyTo(upstream.url);
    await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("hi")));
    await proxy.close();
    expect(records()[0]!.response?.text).toBe("decoded reply");
  });

  it("a gzipped stream the upstream breaks off is recorded as far as it got", async () => {
    // What a streaming gzip has sent after flushing its first event: no end, no trailer.
    const first = data({
      choices: [{ index: 0, delta: { role: "assistant", content: "first " }, finish_reason: null }],
    });
    const flushed = gzipSync(Buffer.from(first), { finishFlush: constants.Z_SYNC_FLUSH });
    const service = await serveHttp(
      async (incoming, response) => {
        for await (const _ of incoming);
        response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
        response.write(flushed, () => response.destroy());
      },
      (error) => ({ status: 500, message: error.message }),
      0,
      "127.0.0.1",
    );
    closers.push(() => service.close());
    const { proxy, records } = await proxyTo(`http://127.0.0.1:${service.port}/v1`);

    await expect(rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("hi")))).rejects.toThrow();
    await proxy.close();

    const [record] = records();
    expect(record).toMatchObject({ ending: "truncated", response: { text: "first " } });
  });

  it("bodies that cannot be decoded are relayed untouched and recorded with the reason, never as text", async () => {
    const garbage = Buffer.from([0x00, 0xff, 0x13, 0x37, 0x42, 0x99]);
    const upstream = await upstreamSending(garbage, {
      "content-type": "text/event-stream",
      "content-encoding": "gzip",
    });
    const { proxy, payloads, records } = await proxyTo(upstream.url);

    const relayed = await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("hi")));
    await rawPost(`${proxy.url}/chat/completions`, garbage, { "content-encoding": "br" });
    await rawPost(`${proxy.url}/chat/completions`, garbage, { "content-encoding": "compress" });
    await proxy.close();

    expect(relayed.equals(garbage)).toBe(true);
    const [record] = records();
    expect(record!.response).toBeNull();
    expect(record!.error).toMatch(/^the response body could not be decoded: not valid gzip: /);
    const rows = payloads();
    expect(rows[1]).toMatchObject({ type: "response", body: "", encoding: { contentEncoding: "gzip", wireBytes: 6 } });
    expect(rows[2]).toMatchObject({
      kind: "side",
      body: "",
      unreadable: expect.stringMatching(/^the body could not be decoded: not valid br: /),
      encoding: { contentEncoding: "br", wireBytes: 6 },
    });
    expect(rows[4]).toMatchObject({
      kind: "side",
      body: "",
      unreadable: "the body could not be decoded: unknown content-encoding compress",
    });
    expect(records()).toHaveLength(1);
  });
});

/** `bytes` of one letter, gzipped: about a thousand times smaller on the wire. */
const gzipBomb = (bytes: number) => gzipSync(Buffer.alloc(bytes, "a"), { level: 1 });

describe("capture proxy: decompression bombs (issue 35)", () => {
  it("a response that inflates past its limit is relayed whole and stored cut, saying so; later requests are recorded", async () => {
    const wire = gzipBomb(64 * 1024 * 1024);
    const limit = decodedLimit(wire.length);
    const headers = { "content-type": "text/event-stream", "content-encoding": "gzip" };
    const upstream = await upstreamSending(wire, headers, Buffer.from(STREAM));
    const { proxy, payloads, records } = await proxyTo(upstream.url);

    const relayed = await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("one")));
    await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("two")));
    await proxy.close();

    expect(relayed.equals(wire)).toBe(true);
    const response = payloads().find((row) => row.type === "response")!;
    expect((response.body as string).length).toBe(limit);
    expect(response.encoding).toMatchObject({ truncated: expect.stringMatching(/^it decodes to more than/) });
    const [first, second] = records();
    expect(first!.error).toMatch(/^the response body was cut: it decodes to more than \d+ bytes/);
    expect(first!.ending).toBe("complete");
    expect(second).toMatchObject({ seq: 2, error: null, response: { text: "decoded reply" } });
  });

  it("a brotli request body of a few hundred bytes goes upstream as sent and is stored as a cut side payload", async () => {
    const upstream = await upstreamSending(Buffer.from(STREAM), { "content-type": "text/event-stream" });
    const { proxy, payloads, records } = await proxyTo(upstream.url);
    const json = chatBody("x".repeat(16 * 1024 * 1024));
    const wire = brotliCompressSync(Buffer.from(json), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });

    await rawPost(`${proxy.url}/chat/completions`, wire, { "content-encoding": "br" });
    await rawPost(`${proxy.url}/chat/completions`, Buffer.from(chatBody("after")));
    await proxy.close();

    expect(upstream.received[0]!.equals(wire)).toBe(true);
    const request = payloads().find((row) => row.type === "request")!;
    expect(request).toMatchObject({
      kind: "side",
      unreadable: expect.stringMatching(/^the body was cut: it decodes to more than 8388608 bytes/),
      encoding: { contentEncoding: "br", wireBytes: wire.length, truncated: expect.any(String) },
    });
    expect((request.body as string).length).toBe(DECODED_FLOOR);
    // The request after it is a loop request with its record.
    expect(records().map((record) => record.seq)).toEqual([2]);
  });
});
