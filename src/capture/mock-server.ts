import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { PidLock } from "../processes/pid-lock.js";
import { CacheDiagnoser, type DiagnosedReply } from "../providers/cache-diagnoser.js";
import { bedrockConverseEndpoint } from "../providers/cloud-endpoints.js";
import { codecFor } from "../providers/codecs.js";
import { geminiEndpoint, geminiReplyForm } from "../providers/google-generative-ai.js";
import { USAGE_ESTIMATE_HEADER } from "../providers/http-transport.js";
import { createScriptedModel, ScriptExhausted, type ScriptStep } from "../providers/scripted-model.js";
import type { ScriptedReply, Transport, WireApi, WireRequest } from "../providers/types.js";
import { requestedReply } from "../providers/wire-json.js";
import { AWS_EVENT_STREAM, converseFrames } from "./aws-event-stream.js";
import type { CaptureOptions } from "./capture.js";
import type { CaptureThread, CaptureThreadOptions } from "./capture-thread.js";
import { jsonObject } from "./chat-request.js";
import { agentOf } from "./client-agent.js";
import { sessionHeaderOf } from "./handed-exchange.js";
import { declaredLength, readBody, sendJson, serveHttp } from "./http.js";
import { MockSockets, socketEvents } from "./mock-socket.js";
import { serveCapture } from "./served-capture.js";
import type { AwsKeys } from "./sigv4-check.js";
import type { RunStatus } from "./sqlite.js";
import { defaultTokenCachePath, TokenCountCache } from "./token-count-cache.js";
import type { MarkerSpec, RequestRecord } from "./types.js";
import { API_PATHS, apiForPath, errorBody, requestProblem } from "./wire-request.js";

/** What the mock serves: a script of model turns, and what to call and count in its capture. */
export interface MockModel {
  /** Names the run folder `<runsDir>/<name>-mock/`. */
  name: string;
  markers: Record<string, MarkerSpec>;
  script: ScriptStep[];
  /** The model id `GET /v1/models` lists (default `scripted`). */
  modelId?: string;
}

export interface MockServerOptions {
  runsDir: string;
  port?: number;
  host?: string;
  /** Also append to `<runsDir>/payload-probe.db` (default true). */
  database?: boolean;
  /** Milliseconds to wait before each chunk after the first: a slow provider, for streaming tests. */
  chunkDelayMs?: number;
  /** The run folder's name instead of `<name>-mock` (a probe run on the real pi: `<probe>@pi`). */
  runName?: string;
  /** The run folder's lock when the caller already holds it (see CaptureRunOptions). */
  folderLock?: PidLock;
  /** Store the secrets found in bodies as sent instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /** Keep the records in memory for the caller (default false: a long-lived mock keeps none). */
  keepRecords?: boolean;
  /**
   * Check each Converse request's AWS SigV4 signature against these keys (`mock --sigv4`), as Bedrock
   * does: one that does not match is answered 403 and neither takes a step nor is captured.
   */
  awsKeys?: AwsKeys;
  /** Told of each valid request's body when it arrives, before it is answered or captured. */
  onRequest?: (body: string) => void;
  /** Told once each exchange is written (`--otel` sends its record on as a span). */
  onFinished?: CaptureOptions["onFinished"];
  /**
   * The capture queue's bounds, the shutdown's drain time, where capture notices go, and a folder
   * stored under another name (a probe's workspace) (capture-thread.ts).
   */
  capture?: Pick<CaptureThreadOptions, "queueLimit" | "drainMs" | "notice" | "pathAlias">;
}

export interface MockServer {
  /** The base URL an OpenAI client points at: `http://host:port/v1` (Anthropic clients: without `/v1`). */
  baseUrl: string;
  runId: string;
  /** `<runsDir>/<name>-mock/`, once the mock has closed. */
  dir: string;
  /** Where the run is written while the mock serves (see CaptureRun). */
  liveDir: string;
  /** The records captured so far, when `keepRecords` was asked for. */
  records: RequestRecord[];
  /** An agent event observed beside the mock (the real pi's tool calls), stored with the run (Capture.addEvent). */
  addEvent(type: string, data: Record<string, unknown>, seq: number): void;
  /** Settles once the capture worker has stopped, however it stopped (lifecycle.ts). */
  ended: Promise<void>;
  /**
   * Stops serving, waits for open replies, then finishes the run (as `captured` unless told how it
   * ended), within the capture's drain time; later calls return the same promise.
   */
  close(status?: RunStatus): Promise<void>;
}

const ENDPOINTS = [
  ...Object.values(API_PATHS).map((path) => `POST /v1${path}`),
  "GET /v1/models",
  "POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens (also under /v1)",
  "GET /v1beta/models",
  "POST /model/{modelId}/converse, /converse-stream",
].join(", ");

/**
 * Token figures the mock answers with: our offline count of the request (counted on the capture
 * worker before the request reaches the script, so a huge body never holds this thread), and of the
 * reply it sends (the probe's own scripted text), through the token cache: the tokenizer loads only
 * for a reply it has not counted before.
 */
async function estimateUsage(
  tokens: TokenCountCache,
  inputTokens: number,
  reply: ScriptedReply,
): Promise<ScriptedReply["usage"]> {
  const replyText =
    reply.kind === "text" ? reply.text : reply.calls.map((call) => `${call.name} ${call.arguments}`).join("\n");
  return { inputTokens, outputTokens: await tokens.measure((measure) => measure.countText(replyText)) };
}

/** A model as Gemini's `models.list` and `models.get` describe it ("Model" in Google's REST reference). */
function geminiModel(id: string) {
  const methods = ["generateContent", "streamGenerateContent", "countTokens"];
  return { name: `models/${id}`, displayName: id, supportedGenerationMethods: methods };
}

/**
 * One model list every SDK reads: OpenAI's `object`/`owned_by`, Anthropic's `type`/`display_name`/paging,
 * and Gemini's `models` (its clients ask `GET /v1beta/models`, or `/v1/models`).
 */
function modelList(id: string) {
  const entry = { id, object: "model", type: "model", created: 0, created_at: "1970-01-01T00:00:00Z" };
  const model = { ...entry, owned_by: "payload-probe", display_name: id };
  return { object: "list", data: [model], has_more: false, first_id: id, last_id: id, models: [geminiModel(id)] };
}

/** Gemini's paths the mock serves: a model method under `/v1beta` or `/v1`, nothing before it. */
const GEMINI_PATH = /^\/v1(beta)?\/models\/[^/:]+:[A-Za-z]+$/;
/** Gemini's model list, or one model of it. */
const GEMINI_MODELS = /^\/v1(beta)?\/models(\/[^/:]+)?$/;

/** Code Assist's methods (the Gemini CLI signed in with Google): `/v1internal:<method>`. */
const CODE_ASSIST_PATH = /^\/v1internal:([A-Za-z]+)$/;

/** Bedrock's Converse paths the mock serves, at its root as at Bedrock's: `/model/{modelId}/converse[-stream]`. */
const CONVERSE_PATH = /^\/model\/[^/]+\/converse(-stream)?$/;

/**
 * Which API a request asks for: a POST to one of the fixed paths under `/v1`, a Gemini model method
 * or a Converse path, or null.
 */
function requestedApi(request: IncomingMessage, path: string): WireApi | null {
  const api = request.method === "POST" ? apiForPath(path) : null;
  if (api === "google-generative-ai") return GEMINI_PATH.test(path) || CODE_ASSIST_PATH.test(path) ? api : null;
  if (api === "bedrock-converse") return CONVERSE_PATH.test(path) ? api : null;
  return api !== null && path === `/v1${API_PATHS[api]}` ? api : null;
}

/**
 * Whether the mock answers a request as an event stream, else as JSON (one body, or Gemini's array
 * sent in pieces). Gemini and Converse say so in the path, the others in the body.
 */
function repliesWithEvents(api: WireApi, url: string, body: string): boolean {
  if (api === "google-generative-ai") return geminiReplyForm(url) === "sse";
  if (api === "bedrock-converse") return bedrockConverseEndpoint(url)?.stream === true;
  return requestedReply(body).stream;
}

/**
 * Gemini's requests that are no model turn: the model list and one model (GET), and countTokens,
 * answered with our count of the request (`{"totalTokens"}`, Google's CountTokensResponse); none
 * takes a script step or is captured. False when the request is none of these.
 */
async function answerGeminiSide(
  state: MockState,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
): Promise<boolean> {
  const id = state.model.modelId ?? "scripted";
  if (request.method === "GET" && GEMINI_MODELS.test(path)) {
    sendJson(response, 200, path.endsWith("/models") ? modelList(id) : geminiModel(id));
    return true;
  }
  if (request.method === "POST" && (await answerCodeAssistSide(request, response, path))) return true;
  const geminiPath = GEMINI_PATH.test(path) || CODE_ASSIST_PATH.test(path);
  const endpoint = request.method === "POST" && geminiPath ? geminiEndpoint(path) : null;
  if (endpoint?.method !== "countTokens") return false;
  const body = (await readBody(request)).toString("utf8");
  const read = jsonObject(body);
  const problem = read.problem ?? requestProblem("google-generative-ai", JSON.stringify(countedRequest(read.object)));
  if (problem) sendJson(response, 400, errorBody("google-generative-ai", 400, problem.message));
  else sendJson(response, 200, { totalTokens: await state.capture.countRequestTokens("google-generative-ai", body) });
  return true;
}

/**
 * Code Assist's methods that are no model turn and no count: `loadCodeAssist` answers a user already
 * on the free tier with a project of the mock's (so the CLI does not onboard), `onboardUser` a done
 * operation with that project, any other (`listExperiments`, `recordCodeAssistMetrics`,
 * `retrieveUserQuota` …) an empty object. Not captured. False for the generate and count methods.
 */
async function answerCodeAssistSide(request: IncomingMessage, response: ServerResponse, path: string) {
  const method = CODE_ASSIST_PATH.exec(path)?.[1];
  if (method === undefined || geminiEndpoint(path) !== null) return false;
  await readBody(request);
  const project = "payload-probe-mock";
  const tier = { id: "free-tier", name: "payload-probe mock" };
  const answers: Record<string, unknown> = {
    loadCodeAssist: {
      currentTier: tier,
      allowedTiers: [{ ...tier, isDefault: true }],
      cloudaicompanionProject: project,
    },
    onboardUser: { done: true, response: { cloudaicompanionProject: { id: project } } },
  };
  sendJson(response, 200, answers[method] ?? {});
  return true;
}

/** countTokens takes `contents` or a whole `generateContentRequest`; either is checked as a generate body. */
function countedRequest(body: Record<string, unknown>): unknown {
  return body.generateContentRequest ?? body;
}

/** What a running mock answers with: its model, its run, the scripted transport and where it listens. */
interface MockState {
  model: MockModel;
  capture: CaptureThread;
  transport: Transport;
  /** Each request's token count, from the worker, for the scripted model's usage. */
  inputTokens: WeakMap<WireRequest, number>;
  /** Gives each reply its id and answers cache diagnostics from the requests it has answered. */
  diagnoser: CacheDiagnoser;
  origin: string;
  delayMs: number;
  onRequest?: (body: string) => void;
  /** The Responses API's WebSocket endpoint. */
  sockets: MockSockets;
  awsKeys?: AwsKeys;
}

/**
 * With keys to check against, a Converse request whose SigV4 signature does not match is answered
 * 403 as Bedrock answers it (`x-amzn-errortype`, `{"message"}`); true when it was.
 */
async function signatureRefused(
  state: MockState,
  api: WireApi,
  request: IncomingMessage,
  bytes: Buffer,
  response: ServerResponse,
): Promise<boolean> {
  if (api !== "bedrock-converse" || !state.awsKeys) return false;
  // AWS's signer is loaded by a mock that checks signatures, not by every mock (pi's runs start one).
  const { sigV4Valid } = await import("./sigv4-check.js");
  if (await sigV4Valid(request, bytes, state.awsKeys)) return false;
  response.writeHead(403, { "content-type": "application/json", "x-amzn-errortype": "InvalidSignatureException" });
  response.end(JSON.stringify({ message: "The request signature does not match the mock's keys (mock --sigv4)." }));
  return true;
}

/**
 * Sends a scripted reply as its API's provider would: an event stream when the request asked for it
 * (SSE; Bedrock's ConverseStream the same events in AWS EventStream frames), else JSON.
 */
async function sendReply(
  response: ServerResponse,
  form: { eventStream: boolean; api: WireApi },
  chunks: string[],
  delayMs: number,
): Promise<void> {
  const framed = form.eventStream && form.api === "bedrock-converse";
  const eventType = framed ? AWS_EVENT_STREAM : "text/event-stream";
  response.writeHead(200, {
    "content-type": form.eventStream ? eventType : "application/json",
    ...(form.eventStream && { "cache-control": "no-cache" }),
    [USAGE_ESTIMATE_HEADER]: "estimate",
  });
  for (const [index, chunk] of chunks.entries()) {
    if (index > 0 && delayMs > 0) await sleep(delayMs);
    if (framed) for (const frame of converseFrames(chunk)) response.write(frame);
    else response.write(chunk);
  }
  response.end();
}

/** Gemini asks for SSE in the query (`?alt=sse`); the stored URL keeps that and no other parameter (a `key`). */
function geminiStreamQuery(api: WireApi, request: IncomingMessage): string {
  if (api !== "google-generative-ai") return "";
  return new URL(request.url ?? "/", "http://mock").searchParams.get("alt") === "sse" ? "?alt=sse" : "";
}

/** A valid request's turn of the script, rendered with its reply id (and diagnostics); `exhausted` once the script has run out. */
async function scriptedReply(
  state: MockState,
  api: WireApi,
  url: string,
  body: string,
): Promise<DiagnosedReply | { exhausted: string }> {
  state.onRequest?.(body);
  const wire: WireRequest = { api, url, body, kind: "loop" };
  state.inputTokens.set(wire, await state.capture.countRequestTokens(api, body));
  let stream: AsyncIterable<string>;
  try {
    stream = await state.transport(wire);
  } catch (error) {
    if (!(error instanceof ScriptExhausted)) throw error;
    return { exhausted: error.message };
  }
  const rendered: string[] = [];
  for await (const chunk of stream) rendered.push(chunk);
  return state.diagnoser.answer(api, body, rendered);
}

/**
 * A Responses turn over the mock's WebSocket: its events, or one `error` event (Codex reads its
 * `status` and `error` as an HTTP error's: codex-rs endpoint/responses_websocket.rs).
 */
async function socketAnswer(state: MockState, url: string, body: string): Promise<string[]> {
  const api = "openai-responses";
  const failed = (status: number, message: string, problem?: Parameters<typeof errorBody>[3]) => {
    const { error } = errorBody(api, status, message, problem) as { error: unknown };
    return [JSON.stringify({ type: "error", status, error })];
  };
  const problem = requestProblem(api, body);
  if (problem) return failed(400, problem.message, problem);
  const scripted = await scriptedReply(state, api, url, body);
  if ("exhausted" in scripted) return failed(500, scripted.exhausted);
  scripted.sent();
  return socketEvents(scripted.chunks);
}

/** An upgrade request: the Responses path gets the mock's WebSocket, any other path a 404 and a closed connection. */
async function upgrade(state: MockState, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const path = new URL(request.url ?? "/", "http://mock").pathname;
  if (path !== `/v1${API_PATHS["openai-responses"]}`) {
    socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  await state.sockets.serve(request, socket, head, `${state.origin}${path}`);
}

async function answer(state: MockState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { capture, model } = state;
  const path = new URL(request.url ?? "/", "http://mock").pathname;
  if (request.method === "GET" && path === "/v1/models")
    return sendJson(response, 200, modelList(model.modelId ?? "scripted"));
  if (await answerGeminiSide(state, request, response, path)) return;
  const api = requestedApi(request, path);
  if (api === null) {
    const message = `no such endpoint: ${request.method} ${path} (the mock serves ${ENDPOINTS})`;
    const shape = apiForPath(path) ?? (geminiEndpoint(path) ? "google-generative-ai" : "openai-completions");
    return sendJson(response, 404, errorBody(shape, 404, message));
  }
  // Back-pressure: while the capture queue is full, the body stays unread (in the client and TCP).
  await capture.room(declaredLength(request));
  const ts = new Date().toISOString();
  const started = performance.now();
  const bytes = await readBody(request);
  if (await signatureRefused(state, api, request, bytes, response)) return;
  const body = bytes.toString("utf8");
  const url = `${state.origin}${path}${geminiStreamQuery(api, request)}`;
  const problem = requestProblem(api, body);
  if (problem) {
    // Kept as a side payload, so the capture shows what the agent sent; the script is not touched.
    const error = errorBody(api, 400, problem.message, problem);
    sendJson(response, 400, error);
    const reply = {
      bytes: Buffer.from(JSON.stringify(error)),
      status: 400,
      firstByteMs: null,
      ending: "complete",
    } as const;
    await capture.hand({ api: null, url, bytes, unreadable: problem.message }, reply, ts, performance.now() - started);
    return;
  }
  const scripted = await scriptedReply(state, api, url, body);
  if ("exhausted" in scripted) return sendJson(response, 500, errorBody(api, 500, scripted.exhausted));
  const { chunks, sent } = scripted;
  // The record is written before the reply is sent: a client that reads the run right after a reply finds its record.
  const reply = {
    bytes: Buffer.from(chunks.join("")),
    status: 200,
    firstByteMs: 0,
    ending: "complete",
    usageEstimated: true,
  } as const;
  const handed = { api, url, bytes, ...sessionHeaderOf(request.headers), ...agentOf(request.headers) };
  await capture.hand(handed, reply, ts, performance.now() - started);
  await sendReply(response, { eventStream: repliesWithEvents(api, url, body), api }, chunks, state.delayMs);
  sent();
}

/**
 * A scripted model behind all three wire APIs over HTTP at once (the path picks the API), for an agent
 * outside this process (a real pi, an SDK client). Every valid request takes the next step of the
 * script — sampling requests too, since the mock cannot tell a nested request from a turn — answered in
 * its API's format, streamed or not as it asks, with estimated usage marked as such; it is captured
 * like a probe run's. An invalid body gets a 400 in its API's error shape and takes no step.
 */
export async function startMockServer(model: MockModel, options: MockServerOptions): Promise<MockServer> {
  // A request that arrives while the capture worker starts waits for it: the mock is announced only after that.
  let ready!: { resolve(state: MockState): void; reject(error: unknown): void };
  const state = new Promise<MockState>((resolve, reject) => {
    ready = { resolve, reject };
  });
  state.catch(() => undefined);
  const host = options.host ?? "127.0.0.1";
  const listen = () =>
    serveHttp(
      async (request, response) => answer(await state, request, response),
      (error) => ({ status: 500, message: `mock: ${error.message}` }),
      options.port ?? 0,
      host,
      async (request, socket, head) => upgrade(await state, request, socket, head),
    );
  const served = await serveCapture(listen, mockCaptureOptions(model, options)).catch((error: unknown) => {
    ready.reject(error);
    throw error;
  });
  const { capture } = served;
  const origin = `http://${host}:${served.port}`;
  ready.resolve(mockState(model, options, capture, origin));
  return {
    baseUrl: `${origin}/v1`,
    runId: capture.id,
    dir: capture.dir,
    liveDir: capture.liveDir,
    records: capture.records,
    addEvent: (type, data, seq) => capture.addEvent(type, data, seq),
    ended: served.ended,
    close: (status) => served.close(status),
  };
}

/** The mock's capture worker, as its options name it. */
function mockCaptureOptions(model: MockModel, options: MockServerOptions): CaptureThreadOptions {
  return {
    name: options.runName ?? `${model.name}-mock`,
    runsDir: options.runsDir,
    database: options.database,
    markers: model.markers,
    keepRecords: options.keepRecords ?? false,
    keepSecrets: options.keepSecrets,
    folderLock: options.folderLock,
    onFinished: options.onFinished,
    ...options.capture,
  };
}

/** What a serving mock answers with, once its capture worker has opened the run. */
function mockState(model: MockModel, options: MockServerOptions, capture: CaptureThread, origin: string): MockState {
  const inputTokens = new WeakMap<WireRequest, number>();
  // The capture worker's cache folder: what it counted, this thread finds without a tokenizer of its own.
  const tokens = new TokenCountCache(defaultTokenCachePath());
  const transport = createScriptedModel(
    codecFor,
    { loop: model.script },
    { usage: (scripted, reply) => estimateUsage(tokens, inputTokens.get(scripted) ?? 0, reply) },
  );
  const serving: MockState = {
    model,
    capture,
    transport,
    inputTokens,
    diagnoser: new CacheDiagnoser(codecFor, (use) =>
      tokens.measure((measure) => use((text) => measure.countText(text))),
    ),
    origin,
    delayMs: options.chunkDelayMs ?? 0,
    onRequest: options.onRequest,
    awsKeys: options.awsKeys,
    sockets: new MockSockets(capture, (url, body) => socketAnswer(serving, url, body)),
  };
  return serving;
}
