import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ResponseStream } from "./types.js";

/** A whole provider response: one JSON body (the request said `stream: false`) or its SSE events. */
export type ResponseBody = { form: "json"; json: unknown } | { form: "sse"; events: EventSourceMessage[] };

/**
 * Reads a response to its end. SSE is parsed by `eventsource-parser`, which follows the WHATWG
 * "Server-sent events" rules: `data:` lines of one event join with `\n`, `event:` names the event.
 */
export async function readResponse(stream: ResponseStream): Promise<ResponseBody> {
  let text = "";
  for await (const chunk of stream) text += chunk;
  return parseResponseText(text);
}

/** A whole response's text as readResponse reads it (a JSON body that does not parse throws). */
export function parseResponseText(text: string): ResponseBody {
  // An SSE body starts with a field name or a comment, never with `{`.
  if (text.trimStart().startsWith("{")) return { form: "json", json: JSON.parse(text) };
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(text);
  // A stream cut after its last `data:` line still delivers that event: tolerance beats the spec's discard.
  parser.feed("\n\n");
  return { form: "sse", events };
}

/** The JSON payloads of an SSE body's events, up to OpenAI's `[DONE]` terminator (nothing after it counts). */
export function eventPayloads(events: EventSourceMessage[]): Record<string, unknown>[] {
  const done = events.findIndex((e) => e.data === "[DONE]");
  return (done < 0 ? events : events.slice(0, done)).map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

/** One SSE event; every line of the payload gets its own `data:` field, as the format requires. */
export function sseEvent(payload: unknown, event?: string): string {
  const data = typeof payload === "string" ? payload : JSON.stringify(payload);
  const lines = data.split("\n").map((line) => `data: ${line}\n`);
  return `${event === undefined ? "" : `event: ${event}\n`}${lines.join("")}\n`;
}
