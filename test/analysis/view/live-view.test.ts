/**
 * The live view's server (src/analysis/view/live-view.ts) over real HTTP on 127.0.0.1, beside a real mock
 * capture whose worker writes the run files: events, data.json, a torn last line, the folder swap
 * at close, and a close that leaves no connection open.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync } from "node:fs";
import { createServer, get, type IncomingMessage, request, type ServerResponse } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureLocation, endEventStream, type LiveView, startLiveView } from "../../../src/analysis/view/live-view.js";
import { type MockServer, startMockServer } from "../../../src/capture/mock-server.js";
import { chatBody, MAIN, parseReply, postChat, startCli, writeTinyProbe } from "../../capture/http-harness.js";
import { removeTempDirs, tempDir } from "../../runtime/harness.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
  removeTempDirs();
});

/** A mock capturing into a temp runs folder, with a live view that is told of every written exchange. */
async function mockWithView(): Promise<{ server: MockServer; view: LiveView; runs: string }> {
  const runs = tempDir("live-view-");
  const { model } = await writeTinyProbe(runs);
  let view: LiveView | null = null;
  const server = await startMockServer(model, { runsDir: runs, onFinished: () => view?.changed() });
  view = await startLiveView({ dir: captureLocation(server), name: "tiny-mock", markers: {} });
  // The view closes after the capture, as the commands close them.
  open.push({
    close: async () => {
      await server.close();
      await view!.close();
    },
  });
  return { server, view, runs };
}

interface ServerEvent {
  event: string;
  data: string;
}

/** An event stream read as it arrives: `next(name)` resolves with the next event of that name. */
function subscribe(url: string): Promise<{ next(name: string): Promise<ServerEvent>; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    get(`${url}events`, (response: IncomingMessage) => {
      expect(response.headers["content-type"]).toBe("text/event-stream");
      const queue: ServerEvent[] = [];
      const waiting: { name: string; found: (e: ServerEvent) => void }[] = [];
      const deliver = () => {
        for (const w of [...waiting]) {
          const at = queue.findIndex((e) => e.event === w.name);
          if (at < 0) continue;
          waiting.splice(waiting.indexOf(w), 1);
          w.found(queue.splice(at, 1)[0]!);
        }
      };
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
        for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
          const fields = Object.fromEntries(
            text
              .slice(0, end)
              .split("\n")
              .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
          );
          text = text.slice(end + 2);
          if (fields.event) queue.push({ event: fields.event, data: fields.data ?? "" });
        }
        deliver();
      });
      const ended = new Promise<void>((done) => response.once("end", () => done()));
      resolve({
        next: (name) =>
          new Promise((found) => {
            waiting.push({ name, found });
            deliver();
          }),
        ended,
      });
    }).once("error", reject);
  });
}

/** data.json read back: the index's requests and the item table. */
async function data(url: string): Promise<{ seqs: number[]; items: unknown[]; text: string }> {
  const response = await fetch(`${url}data.json`);
  expect(response.status).toBe(200);
  const text = await response.text();
  const [index, items] = JSON.parse(text) as [{ requests: { s: number }[] }, unknown[]];
  return { seqs: index.requests.map((r) => r.s), items, text };
}

/** A raw request with the Host header as given (fetch sets its own). */
function rawGet(url: string, path: string, headers: Record<string, string>, method = "GET"): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, headers }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    req.once("error", reject);
    req.end();
  });
}

describe("live view server", () => {
  it("serves the page without outside assets, and tells an open page of each exchange the capture writes", async () => {
    const { server, view } = await mockWithView();
    expect(view.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(view.url);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain("connect-src 'self'");
    expect(html).toMatch(/default-src 'none'/);
    expect(html).not.toMatch(/\b(src|href)=/);

    const events = await subscribe(view.url);
    // The page is told at once, so its first data come the way every later copy does.
    expect((await events.next("changed")).data).toBe("0");
    expect((await data(view.url)).seqs).toEqual([]);

    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("read notes.txt")));
    expect((await events.next("changed")).data).toBe("1");
    expect((await data(view.url)).seqs).toEqual([1]);
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("again")));
    expect((await events.next("changed")).data).toBe("2");
    const after = await data(view.url);
    expect(after.seqs).toEqual([1, 2]);
    // The first request's message is among the items: its detail has what it sent.
    expect(after.text).toContain("read notes.txt");
  });

  it("reads the run folder once the capture's close has swapped it in", async () => {
    const { server, view, runs } = await mockWithView();
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("read notes.txt")));
    expect((await data(view.url)).seqs).toEqual([1]);
    await server.close();
    expect(existsSync(server.liveDir)).toBe(false);
    expect(server.dir).toBe(join(runs, "tiny-mock"));
    view.changed();
    expect((await data(view.url)).seqs).toEqual([1]);
  });

  it("leaves out a last line still being written and reads the lines before it", async () => {
    const { server, runs } = await mockWithView();
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("read notes.txt")));
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("again")));
    await server.close();
    const copy = join(runs, "copy");
    cpSync(server.dir, copy, { recursive: true });
    // What a reader sees while the worker is half-way through appending the third exchange.
    appendFileSync(join(copy, "payloads.jsonl"), '{"type":"request","seq":3,"kind":"loop","api":"openai-compl');
    appendFileSync(join(copy, "requests.jsonl"), '{"v":1,"seq":3,"kind":"lo');
    const view = await startLiveView({ dir: () => copy, name: "copy" });
    open.push(view);
    expect((await data(view.url)).seqs).toEqual([1, 2]);
  });

  it("close ends every open event stream with `end` and stops listening", async () => {
    const { server, view } = await mockWithView();
    const first = await subscribe(view.url);
    const second = await subscribe(view.url);
    await view.close();
    for (const events of [first, second]) {
      expect((await events.next("end")).data).toMatch(/^the run is in \S+\.tiny-mock\.new-\d+$/);
      await events.ended;
    }
    await expect(fetch(view.url)).rejects.toThrow();
    await server.close();
  });

  it("ending a stream whose page went away the moment before settles when its connection closes", async () => {
    // The state a stop can meet: the stream's connection destroyed, its `close` not yet emitted. An
    // `end` there never finishes; `mock --view` once waited for it after a page closed and never exited.
    let stream: ServerResponse | undefined;
    const pages = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream", connection: "close" });
      response.write("event: changed\ndata: 0\n\n");
      stream = response;
    });
    open.push({ close: () => new Promise<void>((done) => pages.close(() => done())) });
    await new Promise<void>((done) => pages.listen(0, "127.0.0.1", done));
    const { port } = pages.address() as { port: number };
    await new Promise<void>((done) => get(`http://127.0.0.1:${port}/`, (page) => page.once("data", () => done())));
    const closed = new Promise<void>((done) => stream!.once("close", () => setImmediate(done)));
    stream!.socket!.destroy();
    let settled = false;
    void endEventStream(stream!, "the run is here").then(() => {
      settled = true;
    });
    await closed;
    expect(settled).toBe(true);
  });

  it("answers only GET at its own address: another Host is refused, so a rebound name cannot read the run", async () => {
    const { view } = await mockWithView();
    const { port } = new URL(view.url);
    expect(await rawGet(view.url, "/data.json", { host: "attacker.example" })).toBe(403);
    expect(await rawGet(view.url, "/data.json", { host: `attacker.example:${port}` })).toBe(403);
    expect(await rawGet(view.url, "/data.json", { host: `localhost:${port}` })).toBe(200);
    expect(await rawGet(view.url, "/", { host: `127.0.0.1:${port}` }, "POST")).toBe(405);
    expect(await rawGet(view.url, "/nothing", { host: `127.0.0.1:${port}` })).toBe(404);
  });
});

describe("proxy --view and mock --view", () => {
  it("proxy prints VIEW on the line after LISTENING; its page is told of each proxied request; a stop ends it", async () => {
    const runs = tempDir("live-view-proxy-");
    const upstream = await startMockServer((await writeTinyProbe(runs)).model, { runsDir: runs });
    open.push(upstream);
    const cli = await startCli(["proxy", "--upstream", upstream.baseUrl, "--runs", runs, "--name", "agent", "--view"]);
    const next = await cli.line(/./);
    expect(next).toMatch(/^VIEW http:\/\/127\.0\.0\.1:\d+\/$/);
    const url = next.slice("VIEW ".length);
    const events = await subscribe(url);
    await events.next("changed");
    await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("read notes.txt")));
    expect((await events.next("changed")).data).toBe("1");
    expect((await data(url)).seqs).toEqual([1]);
    expect(await cli.stop()).toBe(0);
    expect((await events.next("end")).data).toBe(`the run is in ${join(runs, "agent")}`);
    await events.ended;
  });

  it("mock and proxy print no VIEW line without --view, and say what --view does in --help", async () => {
    const runs = tempDir("live-view-off-");
    const { file } = await writeTinyProbe(runs);
    const cli = await startCli(["mock", file, "--runs", runs]);
    expect(await cli.line(/./)).toMatch(/^capturing to /);
    await cli.stop();
    for (const command of ["mock", "proxy"]) {
      const help = spawnSync(process.execPath, [MAIN, command, "--help"], { encoding: "utf8", timeout: 120_000 });
      expect(help.stdout).toMatch(/^ {2}--view {8}also serve the run's viewer on 127\.0\.0\.1 while it records/m);
    }
  });
});
