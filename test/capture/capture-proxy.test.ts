import { spawnSync } from "node:child_process";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { tokenLedger } from "../../src/analysis/segments.js";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import {
  type CliServer,
  chatBody,
  filesContaining,
  jsonl,
  MAIN,
  parseReply,
  postChat,
  startCli,
  writeTinyProbe,
} from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

async function mockBehindProxy(): Promise<{ mock: MockServer; proxy: CaptureProxy; runs: string }> {
  const runs = tempDir("proxy-test-");
  const mock = await startMockServer((await writeTinyProbe(runs)).model, { runsDir: runs });
  const proxy = await startCaptureProxy({
    upstream: mock.baseUrl.replace(/\/v1$/, ""),
    runsDir: runs,
    name: "via-proxy",
  });
  closers.push(
    () => proxy.close(),
    () => mock.close(),
  );
  return { mock, proxy, runs };
}

/** An upstream that sends its second SSE event only once the client has seen the first: a buffering proxy stalls it. */
async function stepwiseUpstream(firstSeen: Promise<void>): Promise<{ url: string; headers: IncomingHttpHeaders[] }> {
  const headers: IncomingHttpHeaders[] = [];
  const upstream = await serveHttp(
    async (request, response) => {
      headers.push(request.headers);
      for await (const _ of request) {
        // The body is not needed here; reading it lets the request complete.
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "first " } }] })}\n\n`,
      );
      await firstSeen;
      response.write(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "second" } }] })}\n\ndata: [DONE]\n\n`,
      );
      response.end();
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => upstream.close());
  const port = upstream.port;
  return { url: `http://127.0.0.1:${port}`, headers };
}

/** A proxy (no database) in front of an upstream that reads each request to its end, then answers with `answer`. */
async function proxyInFrontOf(
  answer: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<CaptureProxy> {
  const upstream = await serveHttp(
    async (request, response) => {
      for await (const _ of request) {
        // Read to the end so the request completes.
      }
      await answer(request, response);
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => upstream.close());
  const proxy = await startCaptureProxy({
    upstream: `http://127.0.0.1:${upstream.port}`,
    runsDir: tempDir("proxy-upstream-"),
    database: false,
  });
  closers.push(() => proxy.close());
  return proxy;
}

describe("capture proxy", () => {
  it("forwards the body bytes exactly, streams the mock's SSE back, and records the request", async () => {
    const { mock, proxy, runs } = await mockBehindProxy();
    // Spacing, key order and non-ASCII text that a re-serializing proxy would change.
    const body = `{"model": "mock-model",  "messages":[{"role":"user","content":"read notes.txt — ünïcode ✓"}], "stream":true}`;
    const response = await postChat(`${proxy.url}/v1/chat/completions?trace=1`, body);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reply = await parseReply(response);
    expect(reply.message.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["read", '{"path":"notes.txt"}']]);
    await proxy.close();

    const atMock = jsonl(join(mock.liveDir, "payloads.jsonl")).filter((p) => p.type === "request");
    expect(atMock.map((p) => p.body)).toEqual([body]);
    const atProxy = jsonl(join(runs, "via-proxy", "payloads.jsonl"));
    expect(atProxy.map((p) => [p.type, p.seq])).toEqual([
      ["request", 1],
      ["response", 1],
    ]);
    expect(atProxy[0]).toMatchObject({
      kind: "loop",
      api: "openai-completions",
      body,
      url: expect.stringMatching(/\/v1\/chat\/completions\?trace=1$/),
    });
    expect(atProxy[1]!.body).toContain('"finish_reason":"tool_calls"');
    const records = jsonl<RequestRecord>(join(runs, "via-proxy", "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.api, r.model, r.bodyBytes, r.response?.calls])).toEqual([
      [1, "openai-completions", "mock-model", Buffer.byteLength(body), ["read"]],
    ]);
  });

  it("relays each SSE chunk as it arrives and forwards end-to-end headers", async () => {
    let seeFirst!: () => void;
    const firstSeen = new Promise<void>((resolve) => (seeFirst = resolve));
    const upstream = await stepwiseUpstream(firstSeen);
    const runs = tempDir("proxy-stream-");
    const proxy = await startCaptureProxy({ upstream: upstream.url, runsDir: runs, database: false });
    closers.push(() => proxy.close());

    const response = await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi"), { "x-request-tag": "t-1" });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes("first ")) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the response ended before its first event: ${JSON.stringify(seen)}`);
      seen += decoder.decode(chunk.value, { stream: true });
    }
    expect(seen).not.toContain("second");
    seeFirst();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      seen += decoder.decode(chunk.value, { stream: true });
    expect(seen).toContain("second");
    expect(upstream.headers[0]!["x-request-tag"]).toBe("t-1");
    expect(upstream.headers[0]!.host).toBe(new URL(upstream.url).host);
    // The client's response ends before the record is written; closing waits for it.
    await proxy.close();
    expect(jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl")).map((r) => r.response?.text)).toEqual([
      "first second",
    ]);
  });

  it("relays in a process where Node's built-in fetch ran before undici was loaded", () => {
    // Node's bundled undici then holds the global dispatcher slot, with another handler interface.
    const proxyModule = pathToFileURL(join(PROJECT_ROOT, "dist/capture/capture-proxy.js")).href;
    const script = `
      import { createServer } from "node:http";
      const upstream = createServer((q, r) => { q.resume(); q.on("end", () => r.end("relayed")); });
      await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
      const base = "http://127.0.0.1:" + upstream.address().port;
      await (await fetch(base + "/warm")).text();
      const { startCaptureProxy } = await import(${JSON.stringify(proxyModule)});
      const proxy = await startCaptureProxy({ upstream: base, runsDir: process.argv[1], database: false });
      try {
        const answer = await fetch(proxy.url + "/v1/models");
        console.log(answer.status, await answer.text());
      } finally {
        await proxy.close();
        upstream.close();
      }`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script, tempDir("proxy-fetch-first-")], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("200 relayed\n");
  });

  it("the client gets the status and headers while the upstream still holds the body", async () => {
    let headersSeen!: () => void;
    const seen = new Promise<void>((resolve) => (headersSeen = resolve));
    const proxy = await proxyInFrontOf(async (_, response) => {
      response.writeHead(200, { "content-type": "text/event-stream", "x-held": "yes" });
      response.flushHeaders();
      await seen;
      response.end("data: [DONE]\n\n");
    });
    // fetch resolves at the headers: a proxy that kept them back for the first body byte never gets here.
    const response = await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi"));
    expect([response.status, response.headers.get("x-held")]).toEqual([200, "yes"]);
    headersSeen();
    expect(await response.text()).toBe("data: [DONE]\n\n");
  });

  it("requests one after another reach the upstream on one kept-alive connection", async () => {
    const ports: number[] = [];
    const proxy = await proxyInFrontOf(async (request, response) => {
      ports.push(request.socket.remotePort!);
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
    for (let i = 0; i < 3; i++) await (await postChat(`${proxy.url}/v1/models`, "")).text();
    expect(ports).toHaveLength(3);
    expect(new Set(ports).size).toBe(1);
  });

  it("credential headers are forwarded but leave no trace of their values in any file under runs, the database included", async () => {
    const runs = tempDir("proxy-secrets-");
    const upstream = await stepwiseUpstream(Promise.resolve());
    const proxy = await startCaptureProxy({ upstream: upstream.url, runsDir: runs, name: "secrets" });
    closers.push(() => proxy.close());
    const secrets = { authorization: "Bearer SECRET-123", "x-api-key": "SECRET-456" };
    await (await postChat(`${proxy.url}/v1/chat/completions?key=SECRET-789`, chatBody("hi"), secrets)).text();
    // A path no codec reads: kept as a side payload, without a record.
    await (await fetch(`${proxy.url}/v1/models`, { headers: secrets })).text();
    await proxy.close();

    expect(upstream.headers.map((h) => [h.authorization, h["x-api-key"]])).toEqual([
      ["Bearer SECRET-123", "SECRET-456"],
      ["Bearer SECRET-123", "SECRET-456"],
    ]);
    for (const secret of ["SECRET-123", "SECRET-456", "SECRET-789"]) expect(filesContaining(runs, secret)).toEqual([]);
    const payloads = jsonl(join(runs, "secrets", "payloads.jsonl"));
    expect(payloads.filter((p) => p.type === "request").map((p) => [p.kind, p.api])).toEqual([
      ["loop", "openai-completions"],
      ["side", null],
    ]);
    expect(jsonl(join(runs, "secrets", "requests.jsonl"))).toHaveLength(1);
    // The token ledger counts the recorded request and passes over the side payload no codec reads.
    const ledger = [];
    for await (const request of tokenLedger(resolveRun(join(runs, "secrets"), { runsDir: runs }).payloads()))
      ledger.push(request.seq);
    expect(ledger).toEqual([1]);
  });

  it("the CLI in front of the mock prints LISTENING, forwards, records, and exits 0 on SIGTERM; --help 0; no --upstream 2", async () => {
    const runs = tempDir("proxy-cli-");
    const mock = await startMockServer((await writeTinyProbe(runs)).model, { runsDir: runs, database: false });
    closers.push(() => mock.close());
    const cli: CliServer = await startCli([
      "proxy",
      "--upstream",
      mock.baseUrl,
      "--runs",
      runs,
      "--name",
      "cli-proxy",
      "--no-db",
    ]);
    const reply = await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("hi")));
    expect(reply.message.toolCalls.map((c) => c.name)).toEqual(["read"]);
    expect(await cli.stop()).toBe(0);
    expect(jsonl(join(runs, "cli-proxy", "requests.jsonl"))).toHaveLength(1);

    const run = (...args: string[]) =>
      spawnSync(process.execPath, [MAIN, "proxy", ...args], { cwd: PROJECT_ROOT, encoding: "utf8", timeout: 120_000 });
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: payload-probe proxy --upstream URL/);
    const missing = run();
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--upstream URL is required/);
    expect(run("--upstream", "ftp://x").status).toBe(2);
  });
});
