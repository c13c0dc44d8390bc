/**
 * Amazon Bedrock's streamed replies (`InvokeModelWithResponseStream`, `ConverseStream`): AWS
 * EventStream framing (`application/vnd.amazon.eventstream`), binary messages each with headers and
 * a payload. An InvokeModel `chunk` event's payload is `{"bytes": "<base64>"}`, the base64 one
 * Messages event's JSON (Anthropic's `message_start`, `content_block_delta`, …): the capture reads
 * them as the server-sent events Anthropic's own API would have sent, so one codec reads both. A
 * Converse event's payload is the event's own JSON, named by its `:event-type` (`messageStart`,
 * `contentBlockDelta`, `metadata`…): it is read as that event with data `{"<type>": <payload>}`, the
 * `ConverseStreamOutput` member it is. An `exception` message is Bedrock's error. The frames are
 * decoded with AWS's own codec rather than by hand (CRCs, header types).
 */
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { parseResponseText } from "../providers/response-body.js";

export const AWS_EVENT_STREAM = "application/vnd.amazon.eventstream";

const utf8 = {
  toUtf8: (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"),
  fromUtf8: (text: string) => new Uint8Array(Buffer.from(text, "utf8")),
};
const codec = new EventStreamCodec(utf8.toUtf8, utf8.fromUtf8);

/** One message's string header (`:event-type`, `:message-type`, `:exception-type`), or undefined. */
function header(headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined {
  const value = headers[name];
  return value?.type === "string" ? (value.value as string) : undefined;
}

/** A frame's Messages event as `event: <type>\ndata: <json>\n\n`, or Bedrock's exception as an `error` event. */
function eventText(message: { headers: Record<string, { type: string; value: unknown }>; body: Uint8Array }) {
  const body = utf8.toUtf8(message.body);
  if (header(message.headers, ":message-type") === "exception") {
    const type = header(message.headers, ":exception-type") ?? "exception";
    return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message: body } })}\n\n`;
  }
  const type = header(message.headers, ":event-type");
  const payload = JSON.parse(body) as { bytes?: string };
  if (type !== "chunk" && type !== undefined) return `event: ${type}\ndata: ${JSON.stringify({ [type]: payload })}\n\n`;
  if (typeof payload.bytes !== "string") return "";
  const event = Buffer.from(payload.bytes, "base64").toString("utf8");
  const inner = (JSON.parse(event) as { type?: unknown }).type;
  return `event: ${typeof inner === "string" ? inner : "message"}\ndata: ${event}\n\n`;
}

/**
 * The events an EventStream body carries, as server-sent-event text. A body cut mid-frame keeps the
 * events whole before the cut (`cut` says how many bytes were left over).
 */
export function eventStreamAsSse(bytes: Uint8Array): { text: string; cut: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text = "";
  let at = 0;
  while (bytes.length - at >= 4) {
    const length = view.getUint32(at);
    if (length < 16 || at + length > bytes.length) break;
    text += eventText(codec.decode(bytes.subarray(at, at + length)));
    at += length;
  }
  return { text, cut: bytes.length - at };
}

/** One event frame: its type and its JSON payload. */
function frame(type: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: utf8.fromUtf8(JSON.stringify(payload)),
  });
}

/** A Messages event as Bedrock frames it (the mock's and tests' side of the same codec). */
export function eventStreamFrame(event: Record<string, unknown>): Uint8Array {
  return frame("chunk", { bytes: Buffer.from(JSON.stringify(event)).toString("base64") });
}

/**
 * Converse events in the stored form (`event: <type>`, data `{"<type>": <payload>}`) framed as
 * Bedrock sends them: the mock's answer to ConverseStream, read back by eventStreamAsSse.
 */
export function converseFrames(sse: string): Uint8Array[] {
  const parsed = parseResponseText(sse);
  if (parsed.form !== "sse") return [];
  return parsed.events.map((event) => {
    const type = event.event ?? "message";
    return frame(type, (JSON.parse(event.data) as Record<string, unknown>)[type] ?? {});
  });
}
