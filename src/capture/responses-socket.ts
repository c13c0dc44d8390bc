/**
 * The Responses API over a WebSocket, read turn by turn. A client sends each request as one
 * `response.create` message whose fields are those of an HTTP request body, but whose `input` holds
 * only what is new since the response named by `previous_response_id`; the server answers with the
 * events an HTTP stream carries, one message each, up to `response.completed` (or `failed`,
 * `incomplete`, or an `error` event). Shapes as Codex 0.169 sends and reads them (codex-rs:
 * codex-api/src/common.rs `ResponsesWsRequest`, endpoint/responses_websocket.rs; OpenAI's
 * "WebSocket mode" guide for the Responses API).
 *
 * Each turn becomes the request an HTTP client would have sent for the same context: the earlier
 * turn's whole input, then the output items its response gave, then the new input; every other field
 * as the message has it, less `type` and `previous_response_id`. Its tools, system, messages, prefix
 * and cost then read exactly as for a request over HTTP. The server's output items are taken as it
 * sent them: they are what the model's context holds.
 */
import { isObject, parseObject } from "./chat-request.js";
import type { HandedRequest, HandedResponse } from "./handed-exchange.js";
import type { ResponseEnding } from "./types.js";

type Item = unknown;

/** One turn read off a socket, as the capture records it. */
export interface SocketTurn {
  /** The request as one HTTP body with the whole context (see above). */
  body: string;
  /** The `response.create` message as the client sent it. */
  sent: string;
  /**
   * A warm-up (`generate: false`, Codex's prewarm of a socket: codex-rs core/src/client.rs): the
   * server takes the context and generates nothing. Stored as a side payload, not a model request.
   */
  warmup: boolean;
  /** The server's events for this turn, each as a server-sent event (`event:` its type, `data:` its message). */
  events: string;
  /** 200 for a turn answered by its events; an `error` event's status (500 when it gives none). */
  status: number;
  ending: ResponseEnding;
  error?: string;
  ts: string;
  durationMs: number;
  firstByteMs: number | null;
}

/** What a response left in the context: the input it was given, whole, and the items it output. */
interface Answered {
  input: Item[];
  output: Item[];
}

/**
 * The responses seen so far, by id, across every socket of a capture: a client may open a new socket
 * and go on from a response of the old one. Items are held by reference, so a chain of n turns costs
 * n lists of references, not n copies of the context.
 */
export class ResponseChain {
  private readonly answered = new Map<string, Answered>();

  /** A `response.create` message's request as an HTTP body, and its whole input. */
  rebuild(message: Record<string, unknown>): { body: string; input: Item[] } {
    const { type: _type, previous_response_id: previous, ...fields } = message;
    const sent = Array.isArray(message.input) ? message.input : [];
    const before = typeof previous === "string" ? this.answered.get(previous) : undefined;
    // An unknown previous response (answered before the capture began) leaves the body as sent, naming it.
    if (before === undefined && typeof previous === "string")
      return { body: JSON.stringify({ ...fields, previous_response_id: previous }), input: sent };
    const input = before ? [...before.input, ...before.output, ...sent] : sent;
    return { body: JSON.stringify({ ...fields, input }), input };
  }

  remember(id: string, answered: Answered): void {
    this.answered.set(id, answered);
  }
}

/** The event types that end a turn (the Responses streaming reference; `error` as Codex reads it). */
const LAST_EVENTS = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

interface OpenTurn {
  sent: string;
  warmup: boolean;
  body: string;
  input: Item[];
  ts: string;
  started: number;
  firstByteMs: number | null;
  events: string[];
  output: Map<number, Item>;
}

/** A server message as a server-sent event; a message spread over lines is put on one. */
function asEvent(text: string, event: Record<string, unknown>): string {
  const data = text.includes("\n") ? JSON.stringify(event) : text;
  return `event: ${String(event.type)}\ndata: ${data}\n\n`;
}

/**
 * The turns of one socket. Requests on a socket are answered in order, one at a time (Codex holds the
 * socket for a response's whole stream), so each server message belongs to the oldest open turn.
 * Messages that are no request (`response.processed`) and events before any request are not turns.
 */
export class SocketTurns {
  private readonly open: OpenTurn[] = [];

  constructor(
    private readonly chain: ResponseChain,
    private readonly onTurn: (turn: SocketTurn) => void,
  ) {}

  /** A client message; returns the request it opens (the mock answers it), or null when it opens none. */
  fromClient(text: string): { body: string; warmup: boolean } | null {
    const message = parseObject(text);
    if (message?.type !== "response.create") return null;
    const { body, input } = this.chain.rebuild(message);
    const warmup = message.generate === false;
    const ts = new Date().toISOString();
    const started = performance.now();
    this.open.push({ sent: text, warmup, body, input, ts, started, firstByteMs: null, events: [], output: new Map() });
    return { body, warmup };
  }

  fromServer(text: string): void {
    const turn = this.open[0];
    const event = parseObject(text);
    if (!turn || !event) return;
    turn.firstByteMs ??= performance.now() - turn.started;
    turn.events.push(asEvent(text, event));
    if (event.type === "response.output_item.done" && typeof event.output_index === "number")
      turn.output.set(event.output_index, event.item);
    if (!LAST_EVENTS.has(String(event.type))) return;
    this.open.shift();
    const response = isObject(event.response) ? event.response : {};
    if (typeof response.id === "string")
      this.chain.remember(response.id, { input: turn.input, output: outputOf(turn, response) });
    const status = event.type === "error" ? (typeof event.status === "number" ? event.status : 500) : 200;
    this.finish(turn, status, "complete");
  }

  /** The socket closed: a turn still open was cut short (or never answered). */
  close(error: string | undefined): void {
    for (const turn of this.open.splice(0)) {
      const ending = turn.events.length > 0 ? "truncated" : "failed";
      this.finish(turn, 200, ending, error ?? "the socket closed before the response ended");
    }
  }

  private finish(turn: OpenTurn, status: number, ending: ResponseEnding, error?: string): void {
    this.onTurn({
      body: turn.body,
      sent: turn.sent,
      warmup: turn.warmup,
      events: turn.events.join(""),
      status,
      ending,
      ...(error !== undefined && { error }),
      ts: turn.ts,
      durationMs: performance.now() - turn.started,
      firstByteMs: turn.firstByteMs,
    });
  }
}

/** The items a response output: its `output_item.done` events in output order, else its final `output`. */
function outputOf(turn: OpenTurn, response: Record<string, unknown>): Item[] {
  if (turn.output.size > 0) return [...turn.output.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
  return Array.isArray(response.output) ? response.output : [];
}

/**
 * A turn as the capture worker takes an exchange: the rebuilt request, the events as an event stream
 * (`usageEstimated` when the mock answered it with its own count).
 */
export function turnExchange(
  url: string,
  turn: SocketTurn,
  usageEstimated = false,
): { request: HandedRequest; response: HandedResponse } {
  const { body, sent, warmup, events, status, ending, error, firstByteMs } = turn;
  const how = { status, firstByteMs, ending, eventStream: true, ...(usageEstimated && { usageEstimated }) };
  return {
    request: { api: warmup ? null : "openai-responses", url, bytes: Buffer.from(body), websocket: { sent } },
    response: { bytes: Buffer.from(events), ...how, ...(error !== undefined && { error }) },
  };
}
