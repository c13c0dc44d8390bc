/**
 * `Expect: 100-continue`, as curl sends it with any large POST: the client waits for `100 Continue`
 * before it sends the body, and must then get the upstream's (or the mock's) real answer.
 */
import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

/** POSTs with `Expect: 100-continue` and sends the body only once the server said `100 Continue`. */
function postAfterContinue(url: string, body: string): Promise<{ continued: boolean; status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const outgoing = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        expect: "100-continue",
        "content-length": Buffer.byteLength(body),
      },
    });
    outgoing.on("continue", () => {
      continued = true;
      outgoing.end(body);
    });
    outgoing.on("response", async (response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      resolve({ continued, status: response.statusCode!, text: Buffer.concat(chunks).toString("utf8") });
    });
    outgoing.on("error", reject);
    outgoing.flushHeaders();
  });
}

const REPLY = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "upstream says hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;

describe("Expect: 100-continue", () => {
  it("the proxy answers 100 Continue, reads the body and relays the upstream's real answer, which it records", async () => {
    const received: { body: string; expect: string | undefined }[] = [];
    const upstream = await serveHttp(
      async (incoming, response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of incoming) chunks.push(chunk as Buffer);
        received.push({ body: Buffer.concat(chunks).toString("utf8"), expect: incoming.headers.expect });
        response.writeHead(201, { "content-type": "text/event-stream" });
        response.end(REPLY);
      },
      (error) => ({ status: 500, message: error.message }),
      0,
      "127.0.0.1",
    );
    closers.push(() => upstream.close());
    const runs = tempDir("expect-continue-");
    const proxy = await startCaptureProxy({ upstream: `http://127.0.0.1:${upstream.port}/v1`, runsDir: runs });
    closers.push(() => proxy.close());
    const body = chatBody("a large prompt ".repeat(4096));

    const answer = await postAfterContinue(`${proxy.url}/chat/completions`, body);
    await proxy.close();

    expect(answer).toEqual({ continued: true, status: 201, text: REPLY });
    // The proxy took the body whole, so it sends it whole; an upstream that waited for its own 100 would add a round trip.
    expect(received).toEqual([{ body, expect: undefined }]);
    const [record] = jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl"));
    expect(record).toMatchObject({ status: 201, ending: "complete", response: { text: "upstream says hi" } });
  });

  it("the mock answers 100 Continue and then its scripted reply", async () => {
    const runs = tempDir("expect-continue-mock-");
    const mock = await startMockServer(
      { name: "continue", markers: {}, script: [{ text: "scripted hi" }] },
      { runsDir: runs },
    );
    closers.push(() => mock.close());

    const answer = await postAfterContinue(
      `${mock.baseUrl}/chat/completions`,
      chatBody("a large prompt ".repeat(4096)),
    );

    expect(answer.continued).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("scripted hi");
  });
});
