import type { StorageError } from "../errors.js";
import { JsonlWriter } from "../files/jsonl.js";
import type { Codec, Transport, WireDissection, WireRequest } from "../providers/types.js";
import type { BodyEncoding } from "./body-encoding.js";
import { readCacheDiagnostics } from "./cache-diagnostics.js";
import { CacheReader, type CacheReadInput } from "./cache-reader.js";
import { contextSources } from "./context-sources.js";
import { ConversationTracker } from "./conversations.js";
import type { KnownText } from "./known-texts.js";
import { aliasPaths, type PathAlias } from "./path-alias.js";
import { PartedBodies, partLine } from "./payload-rows.js";
import type { PrefixBreak } from "./prefix.js";
import { buildRecord } from "./record.js";
import { RequestsWriter } from "./requests-writer.js";
import { runFiles } from "./run-format.js";
import { SecretScanner, type SecretTally } from "./secrets.js";
import { SharedTexts } from "./shared-texts.js";
import type { RunDatabase } from "./sqlite.js";
import { defaultTokenCachePath, TokenCountCache } from "./token-count-cache.js";
import { loadTokenCounter, type RequestTokenCounts, TOKEN_ENCODING, type TokenMeasure } from "./tokens.js";
import type { AddedDiagnostics, MarkerSpec, RequestRecord, ResponseEnding, SocketSent } from "./types.js";

export interface CaptureOptions {
  run: string;
  probe: string;
  /** The run folder: requests.jsonl and payloads.jsonl go here. */
  dir: string;
  db: RunDatabase | null;
  markers: Record<string, MarkerSpec>;
  codecFor(api: WireRequest["api"]): Codec;
  /** Texts of the user's to attribute in each record's sources: instruction files, skills (known-texts.ts). */
  knownTexts?: KnownText[];
  /** Count tokens offline (on by default): from the token cache, else the tokenizer. */
  tokens?: boolean;
  /** The token cache file (default `defaultTokenCachePath()`); null keeps facts in memory only. */
  tokenCache?: string | null;
  /**
   * Keep every record in `records` (default true): a probe run checks them afterwards. The mock and
   * the proxy serve for as long as the user wants, so they keep nothing once it is written.
   */
  keepRecords?: boolean;
  /** Applied to every body text before it is stored (`--redact-body`); sizes, tokens and hashes describe the wire body. */
  redactBody?: (text: string) => string;
  /**
   * Store secrets found in bodies as they were sent (`--keep-secrets`); by default each is replaced
   * with a marker naming its kind (secrets.ts) before anything is written.
   */
  keepSecrets?: boolean;
  /**
   * A folder stored under another name in every body, event and count (a probe's workspace: its
   * per-checkout path stored as the path every checkout shares); the sizes as sent stay the wire's.
   */
  pathAlias?: PathAlias;
  /** Told once an exchange is fully written (the proxy's live line per request). */
  onFinished?: (exchange: FinishedExchange) => void;
}

/** What a finished exchange became: its record, or null for a side payload. */
export interface FinishedExchange {
  seq: number;
  request: Omit<LoggedRequest, "body">;
  outcome: Omit<ResponseOutcome, "body">;
  record: RequestRecord | null;
}

/** How a response that came over HTTP went: what arrived, and how it ended. */
export interface ResponseOutcome {
  /** The response body as it arrived, possibly cut short. */
  body: string;
  /** The HTTP status, or null when no response came. */
  status: number | null;
  /** Milliseconds from sending to the first byte of the response body (null: none came). */
  firstByteMs: number | null;
  ending: ResponseEnding;
  /** Why a response failed or was cut (the transport's error); an error status's body is taken from `body`. */
  error?: string;
  /** The response's usage is an estimate (the mock says so), not a provider's count. */
  usageEstimated?: boolean;
  /** `body` is the decoded text of a body sent with this content-encoding (the proxy). */
  encoding?: BodyEncoding;
}

/** A request a capture has logged and whose response it waits for. */
export interface OpenExchange {
  seq: number;
  /** Writes the response payload and, for a readable request, its record; never throws on odd responses. */
  finish(outcome: ResponseOutcome): Promise<FinishedExchange>;
}

/** The request as the capture logs it: `kind: "side"` with `api: null` for a body no codec reads. */
export interface LoggedRequest {
  kind: WireRequest["kind"];
  api: WireRequest["api"] | null;
  url: string;
  body: string;
  /** Why the capture could not read the body (stored with it). */
  unreadable?: string;
  /** `body` is the decoded text of a body sent with this content-encoding (the proxy). */
  encoding?: BodyEncoding;
  /** Cache diagnostics fields the proxy added to the body upstream (`body` is as the agent sent it). */
  diagnosticsAdded?: AddedDiagnostics;
  /**
   * A session id the request's headers carried (`x-claude-code-session-id`, Codex's `session_id`):
   * it tells conversations apart and is never stored. Of the other headers only the agent the
   * `user-agent` names reaches the capture (`agent`).
   */
  sessionHeader?: { name: string; value: string };
  /** The program its `user-agent` named (client-agent.ts): kept in the record. */
  agent?: string;
  /** Why the proxy sent the body as the agent did though it asks for diagnostics. */
  diagnosticsLeft?: string;
  /** A WebSocket turn: `body` is its request rebuilt whole, this what the client sent. */
  websocket?: SocketSent;
}

/** Error bodies and messages are kept in the record up to this many characters (the payload keeps all of it). */
const ERROR_TEXT_LIMIT = 4096;

/**
 * Records every request that passes through a wrapped transport or an HTTP exchange: its payload
 * when it leaves, its record once the response has been read.
 */
export class Capture {
  readonly records: RequestRecord[] = [];
  private seq = 0;
  /** What each request reads from the provider's cache, against every earlier request still cached. */
  private readonly cache = new CacheReader();
  private readonly conversations = new ConversationTracker();
  private readonly requests: RequestsWriter;
  private readonly payloads: JsonlWriter;
  private readonly partedBodies = new PartedBodies();
  /** Each distinct segment text of the run as one string object, so repeats compare and hash at once. */
  private readonly sharedTexts = new SharedTexts();
  /** Opened with the first event, so a run without agent events (the proxy's) has no events.jsonl. */
  private events: JsonlWriter | null = null;
  private eventCount = 0;
  private readonly tokens: TokenCountCache | null;
  private readonly redactUser: (text: string) => string;
  private readonly secrets: SecretScanner | null;
  private readonly alias: (text: string) => string;

  constructor(private readonly options: CaptureOptions) {
    this.requests = new RequestsWriter(options.dir);
    this.payloads = new JsonlWriter(runFiles(options.dir).payloads);
    // Texts counted before are read from the cache; the tokenizer loads only for a text it lacks.
    this.tokens =
      options.tokens === false
        ? null
        : new TokenCountCache(options.tokenCache === undefined ? defaultTokenCachePath() : options.tokenCache);
    this.redactUser = options.redactBody ?? ((text) => text);
    this.secrets = options.keepSecrets ? null : new SecretScanner();
    this.alias = aliasPaths(options.pathAlias);
  }

  /**
   * A body as it is stored: its aliased folder renamed, its secrets replaced (unless kept), then the
   * user's `--redact-body` patterns applied; and the secrets replaced (null: none, or kept). Every text a record derives
   * from a body (its model, tool and parameter names, the reply, an error, a prefix break's
   * excerpt) is taken from the stored body, so a secret is found with the body's context around it
   * and no copy holds what the body no longer does.
   */
  private redact(sent: string): { text: string; secrets: SecretTally | null } {
    const text = this.alias(sent);
    if (!this.secrets) return { text: this.redactUser(text), secrets: null };
    const { text: safe, tally } = this.secrets.redact(text);
    return { text: this.redactUser(safe), secrets: tally.replaced > 0 ? tally : null };
  }

  /**
   * One agent event (a tool call, a tool result, an MCP cache or lifecycle event) into events.jsonl and
   * the database, with the seq of the request it precedes (default: the next one). Its data is stored
   * as bodies are: a tool result holds what the tool read (a .env file), so its secrets are replaced,
   * and a path it names under the aliased folder is stored under the alias.
   */
  addEvent(type: string, sent: Record<string, unknown>, seq = this.nextSeq()): void {
    const data = this.options.pathAlias ? (JSON.parse(this.alias(JSON.stringify(sent))) as typeof sent) : sent;
    const stored = this.secrets ? this.secrets.value(data) : data;
    const idx = this.eventCount++;
    this.events ??= new JsonlWriter(runFiles(this.options.dir).events);
    this.events.write({ idx, seq, type, ...stored });
    this.options.db?.addEvent(this.options.run, idx, seq, type, stored);
  }

  /**
   * Resolves once the tokenizer has loaded when every request will need it (tokens counted with the
   * token cache off), so no request waits for it. With the cache on it loads at the first text the
   * cache lacks: a session whose texts were all counted before never builds its tables (a tenth of a
   * second of CPU and tens of MB at each start of a capture worker).
   */
  async ready(): Promise<void> {
    if (this.tokens?.path === null) await loadTokenCounter();
  }

  /** A request's token total by our count (the mock's usage estimate), through the token cache as records are. */
  async countRequestTokens(api: WireRequest["api"], body: string): Promise<number> {
    const dissection = this.options.codecFor(api).dissect(this.alias(body));
    const count = (counter: TokenMeasure) => counter.countRequestTokens(dissection).total;
    return this.tokens ? this.tokens.measure(count) : count(await loadTokenCounter());
  }

  /** The seq the next request will get; events logged now precede it. */
  nextSeq(): number {
    return this.seq + 1;
  }

  /** An in-process transport, recorded once its stream has been read — before the agent acts on the response. */
  wrap(transport: Transport): Transport {
    return async (request) => {
      const started = performance.now();
      const exchange = this.open(request);
      const stream = await transport(request);
      return (async function* () {
        const chunks: string[] = [];
        try {
          for await (const chunk of stream) {
            chunks.push(chunk);
            yield chunk;
          }
        } finally {
          // A reader that stops at the end marker (`[DONE]`) leaves early; the record is written all the same.
          const firstByteMs = chunks.length > 0 ? performance.now() - started : null;
          const estimated = stream.usageEstimated === true && { usageEstimated: true };
          await exchange.finish({ body: chunks.join(""), status: null, firstByteMs, ending: "complete", ...estimated });
        }
      })();
    };
  }

  /**
   * Logs a request as it leaves; `finish` logs its response and, unless the request is a side
   * payload (`api: null`), writes its record. The body is taken apart only then, so nothing stands
   * between the request and the provider.
   */
  open(request: LoggedRequest): OpenExchange {
    const ts = new Date().toISOString();
    const started = performance.now();
    const seq = ++this.seq;
    const stored = this.logRequest(seq, request);
    return {
      seq,
      finish: (outcome) => this.finishExchange(seq, { request, stored }, ts, performance.now() - started, outcome),
    };
  }

  /**
   * Logs a whole exchange that happened elsewhere (the mock's or the proxy's main thread, while this
   * capture runs on the capture worker): `ts` and `durationMs` are as that thread measured them. Its
   * database rows are committed together (the worker records one exchange at a time).
   */
  async recordExchange(
    request: LoggedRequest,
    outcome: ResponseOutcome,
    ts: string,
    durationMs: number,
  ): Promise<FinishedExchange> {
    const record = () => {
      const seq = ++this.seq;
      const stored = this.logRequest(seq, request);
      return this.finishExchange(seq, { request, stored }, ts, durationMs, outcome);
    };
    return this.options.db ? this.options.db.inOneTransaction(record) : record();
  }

  private async finishExchange(
    seq: number,
    { request, stored }: { request: LoggedRequest; stored: { text: string; secrets: SecretTally | null } },
    ts: string,
    durationMs: number,
    outcome: ResponseOutcome,
  ): Promise<FinishedExchange> {
    const response = this.logResponse(seq, outcome);
    const replaced = sumTallies(stored.secrets, response.secrets);
    let record: RequestRecord | null = null;
    if (request.api !== null) {
      const wire = { ...request, api: request.api, body: stored.text };
      const dissection = this.sharedTexts.dissection(
        this.options.codecFor(request.api).dissect(stored.text, request.url),
      );
      record = await this.record(wire, dissection, seq, ts, durationMs, { ...outcome, body: response.text });
      // The sizes are the wire's: a number says nothing of what was replaced.
      record.bodyBytes = Buffer.byteLength(request.body);
      record.bodyChars = request.body.length;
      if (replaced) record.secrets = replaced;
      if (request.websocket) {
        record.transport = "websocket";
        record.sentBytes = Buffer.byteLength(request.websocket.sent, "utf8");
      }
      if (this.options.keepRecords !== false) this.records.push(record);
      const line = this.requests.write(record);
      this.options.db?.addRequest(record, line);
    }
    const { body: _request, ...logged } = request;
    const { body: _response, ...how } = outcome;
    const finished = { seq, request: logged, outcome: how, record };
    this.options.onFinished?.(finished);
    return finished;
  }

  /** Writes the request's payload row; returns its body as stored and the secrets replaced in it. */
  private logRequest(seq: number, request: LoggedRequest): { text: string; secrets: SecretTally | null } {
    const { kind, api, url, unreadable, encoding, websocket } = request;
    const stored = this.redact(request.body);
    const body = stored.text;
    // What the socket carried is the body's new part again: its secrets are stored as markers, not counted twice.
    const socket = websocket && { transport: "websocket", sent: this.redact(websocket.sent).text };
    // A body an API reads is stored in parts, each part once per run (payload-rows.ts).
    const { fields, newParts } = api === null ? { fields: { body }, newParts: [] } : this.partedBodies.fields(body);
    for (const part of newParts) {
      this.payloads.writeLine(partLine(part));
      this.options.db?.addPart(this.options.run, part);
    }
    const sent = {
      type: "request",
      seq,
      kind,
      api,
      url,
      ...fields,
      ...(unreadable && { unreadable }),
      ...(encoding && { encoding }),
      ...socket,
    };
    this.writePayload(seq, "request", sent);
    return stored;
  }

  /** Writes the response's payload row; returns its body as stored and the secrets replaced in it. */
  private logResponse(seq: number, { body, encoding }: ResponseOutcome): { text: string; secrets: SecretTally | null } {
    const stored = this.redact(body);
    this.writePayload(seq, "response", { type: "response", seq, body: stored.text, ...(encoding && { encoding }) });
    return stored;
  }

  /** One serialization for both sinks: a payload may be tens of megabytes. */
  private writePayload(seq: number, type: "request" | "response", row: unknown): void {
    const json = JSON.stringify(row);
    this.payloads.writeLine(json);
    this.options.db?.addPayload(this.options.run, seq, type, json);
  }

  /** The record of an exchange, from its bodies as stored (their secrets replaced). */
  private async record(
    request: WireRequest & Pick<LoggedRequest, "diagnosticsAdded" | "diagnosticsLeft" | "sessionHeader" | "agent">,
    dissection: WireDissection,
    seq: number,
    ts: string,
    durationMs: number,
    outcome: ResponseOutcome,
  ): Promise<RequestRecord> {
    const { ref: conversation, started } = this.conversations.assign({
      api: request.api,
      dissection,
      sessionHeader: request.sessionHeader,
    });
    const { prefix, tokens, context } = await this.measure({
      seq,
      api: request.api,
      atMs: Date.parse(ts),
      dissection,
      conversation: conversation.id,
      startsConversation: started,
      chainedTo: this.conversations.chainedTo(dissection),
    });
    const { response, error } = await this.readResponse(request, outcome);
    const record = buildRecord({
      run: this.options.run,
      probe: this.options.probe,
      seq,
      ts,
      durationMs: round(durationMs),
      request,
      dissection,
      response,
      markers: this.options.markers,
      prefix,
      tokens: tokens
        ? {
            encoding: TOKEN_ENCODING,
            tools: tokens.tools,
            system: tokens.system,
            messages: tokens.messages,
            total: tokens.total,
          }
        : null,
    });
    addOutcome(record, outcome, error);
    const diagnostics = readCacheDiagnostics(request.api, request.body, outcome.body, request);
    if (diagnostics) record.cacheDiagnostics = diagnostics;
    record.conversation = conversation;
    if (request.agent) record.agent = request.agent;
    if (context) Object.assign(record, context);
    const responseId = request.api === "openai-responses" ? outcome.body.match(RESPONSE_ID)?.[1] : undefined;
    if (responseId) this.conversations.answered(responseId, conversation, seq);
    return record;
  }

  /**
   * The request's tokens, where its sources' tokens went and the prefix the provider can read from its
   * cache, measured in one pass that may run twice (again with the tokenizer, when the token cache lacks
   * a fact): the cache reader is told of the request once, on the pass that counts.
   */
  private async measure(read: CacheReadInput): Promise<{
    prefix: PrefixBreak;
    tokens: RequestTokenCounts | null;
    context: ReturnType<typeof contextSources> | null;
  }> {
    if (!this.tokens) return { prefix: this.cache.read(read), tokens: null, context: null };
    return this.tokens.measure((counter) => {
      // Counted first: a fact the token cache lacks throws before the reader has changed anything.
      const tokens = counter.countRequestTokens(read.dissection);
      const context = contextSources(read.dissection, tokens, counter, this.options.knownTexts);
      return { tokens, context, prefix: this.cache.read(read, counter) };
    });
  }

  /**
   * The model's reply, or why there is none: an error status's body, the transport's error, or a
   * body the codec could not parse. A reply cut short is still parsed, so the record shows how far it got.
   */
  private async readResponse(
    request: WireRequest,
    outcome: ResponseOutcome,
  ): Promise<{ response: Awaited<ReturnType<Codec["parseStream"]>> | null; error: string | null }> {
    if (outcome.status !== null && (outcome.status < 200 || outcome.status > 299))
      // An error body that could not be decoded has no text; the reason stands in for it.
      return { response: null, error: (outcome.body || (outcome.error ?? "")).slice(0, ERROR_TEXT_LIMIT) };
    const error = outcome.error === undefined ? null : outcome.error.slice(0, ERROR_TEXT_LIMIT);
    if (outcome.body === "") return { response: null, error };
    try {
      const response = await this.options.codecFor(request.api).parseStream(
        (async function* () {
          yield outcome.body;
        })(),
      );
      return { response, error };
    } catch (parseError) {
      return { response: null, error: error ?? `the response could not be parsed: ${(parseError as Error).message}` };
    }
  }

  /** The first write to a run file that failed (the disk full, read-only): the files are incomplete. */
  get failure(): StorageError | null {
    return this.requests.failure ?? this.payloads.failure ?? this.events?.failure ?? null;
  }

  close(): void {
    this.requests.close();
    this.payloads.close();
    this.events?.close();
  }
}

/** A Responses reply's id (`resp_…`), the first the body names: the response object's own. */
const RESPONSE_ID = /"id":"(resp_[^"]+)"/;

const round = (ms: number) => Math.round(ms * 10) / 10;

/**
 * How the exchange ended, on its record. An in-process transport has no status and always completes:
 * its records stay as they were.
 */
function addOutcome(record: RequestRecord, outcome: ResponseOutcome, error: string | null): void {
  if (outcome.status !== null || outcome.ending !== "complete") {
    record.status = outcome.status;
    record.firstByteMs = outcome.firstByteMs === null ? null : round(outcome.firstByteMs);
    record.ending = outcome.ending;
    record.error = error;
  }
  if (outcome.usageEstimated && record.usage) record.usage = { ...record.usage, source: "estimate" };
}

/** The secrets replaced in a request's and its response's bodies together (null: none). */
function sumTallies(a: SecretTally | null, b: SecretTally | null): SecretTally | null {
  if (!a || !b) return a ?? b;
  const kinds = { ...a.kinds };
  for (const [kind, count] of Object.entries(b.kinds)) kinds[kind] = (kinds[kind] ?? 0) + count;
  return { replaced: a.replaced + b.replaced, kinds };
}
