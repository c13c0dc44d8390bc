/**
 * The mock's Responses WebSocket (the `ws` package's server, permessage-deflate offered as OpenAI's
 * endpoint does): each `response.create` is answered with the events its HTTP stream would carry, one
 * message each, in order, one request at a time; every turn is captured as the proxy captures it
 * (responses-socket.ts).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { CaptureThread } from "./capture-thread.js";
import { ResponseChain, SocketTurns, turnExchange } from "./responses-socket.js";

/** Answers one turn's request (its URL, its body rebuilt whole) with the server's event messages, as JSON texts. */
export type TurnAnswer = (url: string, body: string) => Promise<string[]>;

/** The event messages of a rendered HTTP reply: each server-sent event's data (a stream), or the one response JSON. */
export function socketEvents(chunks: string[]): string[] {
  const joined = chunks.join("");
  const data = [...joined.matchAll(/^data: (.*)$/gm)].map((match) => match[1]!);
  if (data.length > 0) return data;
  // A reply not asked to stream is one response object: a socket still sends it as its last event.
  return [JSON.stringify({ type: "response.completed", response: JSON.parse(joined) })];
}

/**
 * A warm-up's answer: the response made and completed at once with no output, taking no step of
 * the script (OpenAI's WebSocket mode guide: `generate: false` prepares the context only).
 */
function warmupEvents(id: string, body: string): string[] {
  const { model } = JSON.parse(body) as { model?: unknown };
  const response = { id, object: "response", created_at: 0, model, output: [] };
  return [
    JSON.stringify({ type: "response.created", response: { ...response, status: "in_progress" }, sequence_number: 0 }),
    JSON.stringify({ type: "response.completed", response: { ...response, status: "completed" }, sequence_number: 1 }),
  ];
}

export class MockSockets {
  private readonly server = new WebSocketServer({ noServer: true, perMessageDeflate: true });
  private readonly chain = new ResponseChain();
  private warmups = 0;

  constructor(
    private readonly capture: CaptureThread,
    private readonly answer: TurnAnswer,
  ) {}

  /** Takes over an upgrade request for the Responses path; resolves once its socket has closed. */
  serve(request: IncomingMessage, socket: Duplex, head: Buffer, url: string): Promise<void> {
    return new Promise((resolve) => {
      this.server.handleUpgrade(request, socket, head, (ws) => {
        ws.once("close", () => resolve());
        this.converse(ws, url);
      });
    });
  }

  private converse(ws: WebSocket, url: string): void {
    const turns = new SocketTurns(this.chain, (turn) => {
      const { request, response } = turnExchange(url, turn, true);
      this.capture.handLater(request, response, turn.ts, turn.durationMs);
    });
    // One request at a time, in the order they came, as a provider's socket answers them.
    let queue = Promise.resolve();
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const text = data.toString();
      const opened = turns.fromClient(text);
      if (!opened) return;
      queue = queue
        .then(async () => {
          const events = opened.warmup
            ? warmupEvents(`resp_mock_warmup_${++this.warmups}`, opened.body)
            : await this.answer(url, opened.body);
          for (const event of events) {
            ws.send(event);
            turns.fromServer(event);
          }
        })
        .catch(() => ws.terminate());
    });
    ws.once("close", () => turns.close(undefined));
  }
}
