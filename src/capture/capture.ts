import { join } from "node:path";
import { JsonlWriter } from "../jsonl.js";
import type { Codec, ResponseStream, Transport, WireDissection, WireRequest } from "../providers/types.js";
import { PrefixLocator } from "./prefix.js";
import { buildRecord } from "./record.js";
import type { RunDatabase } from "./sqlite.js";
import { loadTokenCounter, type TokenCounter } from "./tokens.js";
import type { MarkerSpec, RequestRecord } from "./types.js";

export interface CaptureOptions {
  run: string;
  probe: string;
  /** The run folder: requests.jsonl and payloads.jsonl go here. */
  dir: string;
  db: RunDatabase | null;
  markers: Record<string, MarkerSpec>;
  codecFor(api: WireRequest["api"]): Codec;
  /** Count tokens offline (loads the tokenizer; on by default). */
  tokens?: boolean;
}

/**
 * Records every request that passes through a wrapped transport: its payload when it leaves, its
 * record once the response has been read — before the agent acts on that response.
 */
export class Capture {
  readonly records: RequestRecord[] = [];
  private seq = 0;
  private lastLoop: WireDissection | null = null;
  private readonly prefixes = new PrefixLocator();
  private readonly requests: JsonlWriter;
  private readonly payloads: JsonlWriter;
  private readonly counter: Promise<TokenCounter> | null;

  constructor(private readonly options: CaptureOptions) {
    this.requests = new JsonlWriter(join(options.dir, "requests.jsonl"));
    this.payloads = new JsonlWriter(join(options.dir, "payloads.jsonl"));
    // Start loading the tokenizer now so it overlaps with agent start-up rather than delaying request 1.
    this.counter = options.tokens === false ? null : loadTokenCounter();
  }

  /** The seq the next request will get; events logged now precede it. */
  nextSeq(): number {
    return this.seq + 1;
  }

  wrap(transport: Transport): Transport {
    return async (request) => {
      const ts = new Date().toISOString();
      const started = performance.now();
      const seq = this.logRequest(request);
      const stream = await transport(request);
      return this.tee(stream, async (chunks) => {
        await this.record(request, seq, ts, performance.now() - started, chunks);
      });
    };
  }

  /**
   * A request no codec can take apart (a path the capture proxy does not know): both payloads are
   * kept, as `kind: "side"` with no api, and no record is made.
   */
  async passSide(url: string, body: string, send: () => Promise<ResponseStream>): Promise<ResponseStream> {
    const seq = this.logRequest({ kind: "side", api: null, url, body });
    return this.tee(await send(), async (chunks) => {
      this.logResponse(seq, chunks);
    });
  }

  private logRequest(request: {
    kind: WireRequest["kind"];
    api: WireRequest["api"] | null;
    url: string;
    body: string;
  }): number {
    const seq = ++this.seq;
    const sent = { type: "request", seq, kind: request.kind, api: request.api, url: request.url, body: request.body };
    this.payloads.write(sent);
    this.options.db?.addPayload(this.options.run, seq, "request", sent);
    return seq;
  }

  private logResponse(seq: number, chunks: string[]): string {
    const received = { type: "response", seq, body: chunks.join("") };
    this.payloads.write(received);
    this.options.db?.addPayload(this.options.run, seq, "response", received);
    return received.body;
  }

  private tee(stream: ResponseStream, done: (chunks: string[]) => Promise<void>): ResponseStream {
    return (async function* () {
      const chunks: string[] = [];
      try {
        for await (const chunk of stream) {
          chunks.push(chunk);
          yield chunk;
        }
      } finally {
        await done(chunks);
      }
    })();
  }

  private async record(
    request: WireRequest,
    seq: number,
    ts: string,
    durationMs: number,
    chunks: string[],
  ): Promise<void> {
    const codec = this.options.codecFor(request.api);
    const responseText = this.logResponse(seq, chunks);
    const dissection = codec.dissect(request.body);
    const response = await codec.parseStream(
      (async function* () {
        yield responseText;
      })(),
    );
    const counter = this.counter ? await this.counter : undefined;
    let prefix = null;
    if (request.kind === "loop") {
      prefix = this.prefixes.locate(this.lastLoop, dissection, counter);
      this.lastLoop = dissection;
    }
    const tokens = counter ? counter.countRequestTokens(dissection) : null;
    const record = buildRecord({
      run: this.options.run,
      probe: this.options.probe,
      seq,
      ts,
      durationMs: Math.round(durationMs * 10) / 10,
      request,
      dissection,
      response,
      markers: this.options.markers,
      prefix,
      tokens: tokens
        ? {
            encoding: counter!.encoding,
            tools: tokens.tools,
            system: tokens.system,
            messages: tokens.messages,
            total: tokens.total,
          }
        : null,
    });
    this.records.push(record);
    this.requests.write(record);
    this.options.db?.addRequest(record);
  }

  close(): void {
    this.requests.close();
    this.payloads.close();
  }
}
