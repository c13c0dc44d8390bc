/**
 * `--view`: the run's viewer served while a capture records (proxy, mock, record). GET / is the `view`
 * page's code without data (analysis/view/view-page.ts, `livePage`); it listens to GET /events (server-sent
 * events) and fetches GET /data.json, the run as it is on disk now, each time it is told `changed`.
 *
 * The data are made when a page asks, at most once per change, on a worker thread (so the relay
 * never waits for a page), and from the files alone, so the capture is never waited for: a line the worker is still appending is a torn last line, which the
 * reader leaves out (src/files/jsonl.ts), and a read that meets the folder swap at close (run-folder.ts)
 * is read again where the run is now. The server binds 127.0.0.1 unless told otherwise (a run holds
 * prompts), and answers only requests addressed to its own host and port, so a web page whose name
 * resolves to 127.0.0.1 (DNS rebinding) cannot read it.
 */
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { Worker } from "node:worker_threads";
import type { Recording, SessionPart } from "../../capture/capture-session.js";
import { listen } from "../../capture/http.js";
import type { MarkerSpec } from "../../capture/types.js";
import { UserError } from "../../errors.js";
import { PROJECT_ROOT } from "../../project-root.js";
import type { LiveDataReply, LiveDataRequest } from "./live-data.js";
import { livePage } from "./view-page.js";

export interface LiveViewOptions {
  /** Where the run's files are now: the live folder while the capture runs, the run folder after. */
  dir: () => string;
  /** The run's name, for the page's title. */
  name: string;
  /** Marker patterns to highlight (a mock's probe has them); none by default. */
  markers?: Record<string, MarkerSpec>;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface LiveView {
  /** The page's address: `http://127.0.0.1:N/`. */
  url: string;
  /** Tells every open page that the run has changed (call it once an exchange is written). */
  changed(): void;
  /** Tells open pages the recording ended, ends their connections and stops listening. */
  close(): Promise<void>;
}

/** Where a capture's files are now: its live folder until the close swaps it in as the run folder. */
export function captureLocation(capture: { liveDir: string; dir: string }): () => string {
  return () => (existsSync(capture.liveDir) ? capture.liveDir : capture.dir);
}

/** The worker's entry: the launcher scripts/bundle.mjs writes beside the capture worker's. */
const WORKER_ENTRY = join(PROJECT_ROOT, "dist", "workers", "live-data-worker.js");

/** The builds a worker thread does for the live view, started at the first and ended at close. */
class DataWorker {
  private worker: Worker | null = null;
  private next = 0;
  private readonly waiting = new Map<number, { done(data: Buffer): void; fail(error: Error): void }>();

  build(request: Omit<LiveDataRequest, "id">): Promise<Buffer> {
    const worker = this.started();
    const id = this.next++;
    return new Promise((done, fail) => {
      this.waiting.set(id, { done, fail });
      worker.postMessage({ ...request, id } satisfies LiveDataRequest);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_ENTRY);
    // A page's build never keeps the command running: close() ends it, and so does the command's end.
    worker.unref();
    worker.on("message", (reply: LiveDataReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if ("data" in reply) waiting?.done(Buffer.from(reply.data));
      else
        waiting?.fail(
          reply.error.name === "UserError" ? new UserError(reply.error.message) : new Error(reply.error.message),
        );
    });
    worker.on("error", (error) => this.failAll(error));
    worker.on("exit", () => {
      this.worker = null;
      this.failAll(new Error("the live view's worker stopped"));
    });
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    for (const waiting of this.waiting.values()) waiting.fail(error);
    this.waiting.clear();
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }
}

/** The run's data as data.json serves them, made again only after a change. */
class LiveData {
  private version = 0;
  private made: { version: number; data: Promise<Buffer> } | null = null;
  readonly worker = new DataWorker();

  constructor(private readonly options: LiveViewOptions) {}

  get current(): number {
    return this.version;
  }

  changed(): number {
    return ++this.version;
  }

  data(): Promise<Buffer> {
    if (this.made?.version !== this.version) {
      const data = this.build();
      this.made = { version: this.version, data };
      // A failed build is not kept: the next ask tries again.
      data.catch(() => {
        if (this.made?.data === data) this.made = null;
      });
    }
    return this.made!.data;
  }

  private async build(): Promise<Buffer> {
    const dir = this.options.dir();
    try {
      return await this.read(dir);
    } catch (error) {
      // The capture's close moved the folder while it was read: read it where it is now.
      if (this.options.dir() !== dir || !existsSync(dir)) return this.read(this.options.dir());
      throw error;
    }
  }

  private read(dir: string): Promise<Buffer> {
    return this.worker.build({ dir, name: this.options.name, markers: this.options.markers ?? {} });
  }
}

const PLAIN = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

/** The Host values that name this server: its own address, and the loopback names for it. */
function ownHosts(host: string, port: number): Set<string> {
  const names = [host.includes(":") ? `[${host}]` : host, "127.0.0.1", "localhost", "[::1]"];
  return new Set(names.map((name) => `${name}:${port}`));
}

/** Starts the live view's server; resolves once it listens. A port that cannot be had is a UserError. */
export async function startLiveView(options: LiveViewOptions): Promise<LiveView> {
  const data = new LiveData(options);
  const clients = new Set<ServerResponse>();
  const host = options.host ?? "127.0.0.1";
  // Set once listening, before any request can be handled.
  let hosts = new Set<string>();
  let url = "";
  const server = createServer((request, response) => {
    if (!hosts.has(request.headers.host ?? "")) {
      response.writeHead(403, PLAIN).end(`this viewer answers only at ${url}\n`);
      return;
    }
    if (request.method !== "GET") {
      response.writeHead(405, { ...PLAIN, allow: "GET" }).end("the viewer only answers GET\n");
      return;
    }
    serve(request, response, data, options.name, clients);
  });
  const port = await listen(server, options.port ?? 0, host);
  hosts = ownHosts(host, port);
  url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  return {
    url,
    changed() {
      const version = data.changed();
      for (const client of clients) client.write(`event: changed\ndata: ${version}\n\n`);
    },
    async close() {
      const note = `the run is in ${options.dir()}`.replace(/[\r\n]+/g, " ");
      await Promise.all([...clients].map((client) => endEventStream(client, note)));
      clients.clear();
      const closed = new Promise<void>((done) => server.close(() => done()));
      // A page's idle keep-alive connection would otherwise hold the process until the browser lets go.
      server.closeAllConnections();
      await closed;
      await data.worker.close();
    },
  };
}

/**
 * Sends a page's event stream its `end` and settles once the stream has finished or its connection
 * has closed. A page that went away a moment before the stop left a stream whose connection is
 * already destroyed but not yet reported closed: its `end` never finishes, and waiting for that
 * alone kept the command from ever exiting.
 */
export async function endEventStream(stream: ServerResponse, note: string): Promise<void> {
  stream.end(`event: end\ndata: ${note}\n\n`);
  await finished(stream).catch(() => undefined);
}

function serve(
  request: IncomingMessage,
  response: ServerResponse,
  data: LiveData,
  name: string,
  clients: Set<ServerResponse>,
): void {
  const path = new URL(request.url ?? "/", "http://viewer").pathname;
  if (path === "/") {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    response.end(livePage(`payload-probe view · ${name} (live)`));
  } else if (path === "/events") {
    // `connection: close`: ending the stream ends its connection, so close() leaves nothing open.
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "close" });
    response.write(`event: changed\ndata: ${data.current}\n\n`);
    clients.add(response);
    response.once("close", () => clients.delete(response));
  } else if (path === "/data.json") {
    data.data().then(
      (body) => {
        response.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
        response.end(body);
      },
      (error: Error) => {
        const message = error instanceof UserError ? error.message : `${error.message} (a bug: please report it)`;
        response.writeHead(500, PLAIN).end(`${message}\n`);
      },
    );
  } else response.writeHead(404, PLAIN).end(`no ${path} here: the viewer is at /\n`);
}

/**
 * `--view` as a part of a capture session (capture/capture-session.ts): once the capture records,
 * the viewer starts and its address is said as `VIEW <url>` by `say` (stdout by default; record's
 * stdout is its command's, so it says it on stderr); each exchange written tells the open pages; it
 * stops after the capture has closed.
 */
export class LiveViewPart implements SessionPart {
  /** The viewer, once started. */
  view: LiveView | null = null;

  constructor(
    private readonly options: Omit<LiveViewOptions, "dir">,
    private readonly say: (line: string) => void = console.log,
  ) {}

  async start(recording: Recording): Promise<void> {
    this.view = await startLiveView({ ...this.options, dir: captureLocation(recording) });
    this.say(`VIEW ${this.view.url}`);
  }

  onFinished(): void {
    this.view?.changed();
  }

  async close(): Promise<void> {
    await this.view?.close();
  }
}
