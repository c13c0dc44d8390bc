import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { CREDENTIAL_QUERY_NAMES } from "../../src/capture/redact.js";
import { liveRunDir } from "../../src/capture/run-folder.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, filesContaining, jsonl, MAIN, postChat, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

const event = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const FIRST = event({ role: "assistant", content: "first " });
const WHOLE = `${FIRST}${event({ content: "second" }, "stop")}data: [DONE]\n\n`;

interface Seen {
  url: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** Resolves when the upstream's connection to the proxy closed before its reply was finished. */
  abandoned: Promise<void>;
}

/** An upstream on 127.0.0.1 whose reply each test writes; it records what it received. */
async function upstreamWith(reply: (response: ServerResponse, request: IncomingMessage) => Promise<void> | void) {
  const seen: Seen[] = [];
  const service = await serveHttp(
    async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const abandoned = new Promise<void>((resolve) =>
        response.once("close", () => {
          if (!response.writableFinished) resolve();
        }),
      );
      seen.push({
        url: request.url ?? "",
        body: Buffer.concat(chunks).toString("utf8"),
        headers: request.headers,
        abandoned,
      });
      await reply(response, request);
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => service.close());
  return { url: `http://127.0.0.1:${service.port}`, port: service.port, seen };
}

async function proxyTo(upstream: string, name = "proxy", extra: Partial<Parameters<typeof startCaptureProxy>[0]> = {}) {
  const runs = tempDir("proxy-traffic-");
  const proxy: CaptureProxy = await startCaptureProxy({ upstream, runsDir: runs, name, ...extra });
  closers.push(() => proxy.close());
  return { proxy, runs, dir: join(runs, name) };
}

const sendWhole = (response: ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.end(WHOLE);
};

describe("capture proxy on bad traffic", () => {
  it("bodies the capture cannot read (null, tools: [null], not JSON) reach the upstream byte for byte, the client gets the whole reply, and each is a side payload with the reason", async () => {
    const upstream = await upstreamWith(sendWhole);
    const { proxy, dir } = await proxyTo(upstream.url);
    const bodies = [
      "null",
      '{"model":"m","messages":[],"tools":[null]}',
      "{not json",
      '{"messages":[{"role":"user","tool_calls":"x"}]}',
    ];
    for (const body of bodies) {
      const response = await postChat(`${proxy.url}/v1/chat/completions`, body);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(WHOLE);
    }
    await proxy.close();
    expect(upstream.seen.map((s) => s.body)).toEqual(bodies);
    const requests = jsonl(join(dir, "payloads.jsonl")).filter((p) => p.type === "request");
    expect(requests.map((p) => [p.kind, p.api, p.body])).toEqual(bodies.map((body) => ["side", null, body]));
    expect(requests.map((p) => p.unreadable)).toEqual([
      "Invalid type for 'body': expected a JSON object, got null.",
      "Invalid type for 'tools[0]': expected an object, got null.",
      "The request body is not valid JSON.",
      "Invalid type for 'messages[0].tool_calls': expected an array of tool calls, got a string.",
    ]);
    expect(jsonl(join(dir, "payloads.jsonl")).filter((p) => p.type === "response")).toHaveLength(4);
    expect(jsonl(join(dir, "requests.jsonl"))).toEqual([]);
  });

  /**
   * The upstream streams `sent`, then holds the rest of its reply (`rest`) until the test ends; the
   * client reads all of `sent` and leaves. Resolves with the run's record once the proxy has closed
   * the upstream's connection, the reply still held.
   */
  async function clientLeavesAfter(sent: string, rest: string): Promise<RequestRecord> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    closers.push(async () => release());
    const upstream = await upstreamWith(async (response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(sent);
      await held;
      response.end(rest);
    });
    const { proxy, dir } = await proxyTo(upstream.url);
    const client = new AbortController();
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: chatBody("hi"),
      signal: client.signal,
    });
    const reader = response.body!.getReader();
    let read = "";
    while (read.length < sent.length) read += new TextDecoder().decode((await reader.read()).value);
    expect(read).toBe(sent);
    client.abort();
    await upstream.seen[0]!.abandoned;
    await proxy.close();
    return jsonl<RequestRecord>(join(dir, "requests.jsonl"))[0]!;
  }

  it("a client that leaves mid-stream aborts the upstream call, and the record says cancelled with what had arrived", async () => {
    const record = await clientLeavesAfter(FIRST, WHOLE.slice(FIRST.length));
    expect(record).toMatchObject({ status: 200, ending: "cancelled", response: { kind: "text", text: "first " } });
    expect(record.error).toMatch(/client disconnected/);
  });

  it("a client that leaves after the stream's closing event, before the upstream ends it, had the whole reply: complete", async () => {
    // As Codex does: it stops reading at response.completed and hangs up before the stream's last bytes.
    const record = await clientLeavesAfter(WHOLE, "");
    expect(record).toMatchObject({ status: 200, ending: "complete", response: { kind: "text", text: "first second" } });
    expect(record.error).toBeNull();
  });

  it("an upstream error status is recorded with its status and body, not as an empty text reply", async () => {
    const error = '{"error":{"message":"model overloaded","type":"server_error"}}';
    const upstream = await upstreamWith((response) => {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(error);
    });
    const { proxy, runs, dir } = await proxyTo(upstream.url);
    const response = await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi"));
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(error);
    await proxy.close();
    const [record] = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
    expect(record).toMatchObject({ status: 500, ending: "complete", response: null, error });
    expect(record!.firstByteMs).toBeGreaterThanOrEqual(0);
    expect(record!.firstByteMs).toBeLessThanOrEqual(record!.durationMs);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT http_status, ending FROM requests").all()).toEqual([
      { http_status: 500, ending: "complete" },
    ]);
    db.close();
  });

  it("a stream the upstream cuts is cut for the client too and recorded as truncated; one that ends without [DONE] is truncated", async () => {
    const upstream = await upstreamWith(async (response, request) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      // Cut only once the first event has left for the proxy: destroying a socket drops what it still queues.
      await new Promise((resolve) => response.write(FIRST, resolve));
      if (request.url?.includes("cut")) response.socket?.destroy();
      else response.end();
    });
    const { proxy, dir } = await proxyTo(upstream.url);
    const cut = await postChat(`${proxy.url}/v1/chat/completions?cut=1`, chatBody("hi"));
    await expect(cut.text()).rejects.toThrow();
    const short = await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi"));
    expect(await short.text()).toBe(FIRST);
    await proxy.close();
    const records = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
    expect(records.map((r) => [r.status, r.ending, r.response?.text])).toEqual([
      [200, "truncated", "first "],
      [200, "truncated", "first "],
    ]);
    expect(records[0]!.error).toMatch(/^upstream http:\/\/127\.0\.0\.1:\d+ failed: /);
    expect(records[1]!.error).toBe("the event stream ended without data: [DONE]");
  });

  it("an upstream that cannot be reached answers 502 and is recorded as failed with no status", async () => {
    const gone = await upstreamWith(sendWhole);
    const { proxy, dir } = await proxyTo(gone.url);
    await closers.shift()!(); // the upstream stops listening
    const response = await postChat(`${proxy.url}/v1/chat/completions`, chatBody("hi"));
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /^proxy: upstream .* failed/,
    );
    await proxy.close();
    const [record] = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
    expect(record).toMatchObject({ status: null, firstByteMs: null, ending: "failed", response: null });
  });
});

describe("capture proxy: the client's response ends with the upstream's", () => {
  it("ends while the record cannot yet be written (the database held by another writer), and the record follows", async () => {
    const runs = tempDir("proxy-prompt-");
    let holder: Database.Database | undefined;
    const upstream = await upstreamWith((response) => {
      // The exchange is recorded only once it is over: another writer holds the database from
      // before the reply until the client has it.
      holder = new Database(join(runs, "payload-probe.db"));
      holder.exec("BEGIN EXCLUSIVE");
      sendWhole(response);
    });
    const cli = await startCli(["proxy", "--upstream", upstream.url, "--runs", runs]);
    closers.push(() => cli.stop());
    try {
      expect(await (await postChat(`${cli.url}/v1/chat/completions`, chatBody("hi"))).text()).toBe(WHOLE);
      // The holder's lock is still held, so no capture could have committed the request's row.
      expect(holder!.prepare("SELECT count(*) AS n FROM requests").get()).toEqual({ n: 0 });
    } finally {
      holder?.exec("COMMIT");
      holder?.close();
    }
    expect(await cli.stop()).toBe(0);
    expect(jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl")).map((r) => [r.seq, r.ending])).toEqual([
      [1, "complete"],
    ]);
    // The capture waited for the lock rather than give up: the row is there too.
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT seq, ending FROM requests").all()).toEqual([{ seq: 1, ending: "complete" }]);
    db.close();
  });
});

describe("capture proxy and a slow client", () => {
  it("stops reading the upstream while a client that does not read has megabytes queued, and relays everything once it reads", async () => {
    const piece = Buffer.alloc(64 * 1024, "x");
    // Far more than the proxy queues for a client (8 MiB) and the sockets hold: an upstream that gets
    // this far was never held back. Only what the upstream was let write is relayed at the end, not this much.
    const cap = 48 * 1024 * 1024;
    let accepted = 0;
    let drains = 0;
    let enough = false;
    const upstream = await upstreamWith(async (response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      while (!enough && accepted < cap) {
        const more = response.write(piece);
        accepted += piece.length;
        if (!more) await new Promise((resolve) => response.once("drain", resolve));
        drains++;
      }
      response.end();
    });
    const { proxy } = await proxyTo(upstream.url);
    const response = await fetch(`${proxy.url}/v1/files`);
    // The client reads nothing. Held back means no drain comes any more: the absence of an event can
    // only be timed. Each drain restarts the wait; a slow machine can only end it early (a weaker check,
    // never a failed one), and the verdict takes one more turn of the event loop so that I/O that was due
    // while this process waited for the CPU is seen before the timer's verdict.
    await new Promise<void>((resolve) => {
      const wait = (seen: number) =>
        setTimeout(() => setImmediate(() => (drains === seen ? resolve() : wait(drains))), 1_000);
      wait(drains);
    });
    expect(accepted).toBeLessThan(cap);
    enough = true;
    expect((await response.arrayBuffer()).byteLength).toBe(accepted);
  });
});

describe("capture proxy credentials", () => {
  it("userinfo in --upstream is sent as Basic auth and stored nowhere; credential query values are redacted by the list, --redact and any case; --redact-body masks bodies", async () => {
    const upstream = await upstreamWith((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`${event({ role: "assistant", content: "your key is sk-RESP0001" }, "stop")}data: [DONE]\n\n`);
    });
    const runs = tempDir("proxy-credentials-");
    const upstreamUrl = `http://user:SECRET-U@127.0.0.1:${upstream.port}`;
    const cli = await startCli([
      "proxy",
      "--upstream",
      upstreamUrl,
      "--runs",
      runs,
      "--redact",
      "Tenant",
      "--redact-body",
      "sk-[A-Z0-9]+",
    ]);
    closers.push(() => cli.stop());
    const query =
      "access_key=SECRET-Q1&X-Amz-Signature=SECRET-Q2&code=SECRET-Q3&pass=SECRET-Q4&SIG=SECRET-Q5&tenant=SECRET-Q6&session_Token=SECRET-Q7&trace=visible";
    const body = chatBody("my key is sk-REQ0001");
    const reply = await postChat(`${cli.url}/v1/chat/completions?${query}`, body);
    expect(await reply.text()).toContain("sk-RESP0001");
    expect(await cli.stop()).toBe(0);

    expect(upstream.seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from("user:SECRET-U").toString("base64")}`);
    expect(upstream.seen[0]!.url).toBe(`/v1/chat/completions?${query}`);
    expect(upstream.seen[0]!.body).toBe(body);
    for (const secret of [
      "SECRET-U",
      "SECRET-Q1",
      "SECRET-Q2",
      "SECRET-Q3",
      "SECRET-Q4",
      "SECRET-Q5",
      "SECRET-Q6",
      "SECRET-Q7",
      "sk-REQ0001",
      "sk-RESP0001",
    ])
      expect(filesContaining(runs, secret), secret).toEqual([]);
    const [request] = jsonl(join(runs, "proxy", "payloads.jsonl"));
    expect(String(request!.url)).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\?access_key=%5Bredacted%5D&.*&trace=visible$/,
    );
    expect(request!.body).toBe(chatBody("my key is [redacted]"));
    const [record] = jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl"));
    // Sizes describe the body as it was sent; only what is stored is masked.
    expect(record!.bodyBytes).toBe(Buffer.byteLength(body));
    expect(record!.response?.text).toBe("your key is [redacted]");
  });

  it("docs/capture.md lists every query name the proxy redacts", () => {
    const page = readFileSync(join(PROJECT_ROOT, "docs", "capture.md"), "utf8").toLowerCase();
    for (const name of CREDENTIAL_QUERY_NAMES) expect(page, name).toContain(`\`${name}\``);
  });

  it("--redact-body with a pattern that is not a regular expression exits 2 naming the flag", () => {
    const result = spawnSync(
      process.execPath,
      [MAIN, "proxy", "--upstream", "http://127.0.0.1:1", "--redact-body", "("],
      {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--redact-body expected a regular expression, got "\("/);
  });
});

describe("a second proxy on a port in use", () => {
  it("exits 2 and leaves the live proxy's run folder and capture untouched", async () => {
    const upstream = await upstreamWith(sendWhole);
    const runs = tempDir("proxy-busy-");
    const first = await startCli(["proxy", "--upstream", upstream.url, "--runs", runs]);
    closers.push(() => first.stop());
    expect(await (await postChat(`${first.url}/v1/chat/completions`, chatBody("one"))).text()).toBe(WHOLE);
    const port = new URL(first.url).port;
    const second = spawnSync(
      process.execPath,
      [MAIN, "proxy", "--upstream", upstream.url, "--runs", runs, "--port", port],
      {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    expect(second.status).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    expect(existsSync(join(liveRunDir(runs, "proxy", first.child.pid), "payloads.jsonl"))).toBe(true);
    expect(await (await postChat(`${first.url}/v1/chat/completions`, chatBody("two"))).text()).toBe(WHOLE);
    expect(await first.stop()).toBe(0);
    expect(jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl")).map((r) => r.seq)).toEqual([1, 2]);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT probe, status, request_count FROM runs").all()).toEqual([
      { probe: "proxy", status: "captured", request_count: 2 },
    ]);
    db.close();
  });
});
