/**
 * Amazon Bedrock's streamed replies (`InvokeModelWithResponseStream`): AWS EventStream framing
 * (`application/vnd.amazon.eventstream`), binary messages each with headers and a payload. A `chunk`
 * event's payload is `{"bytes": "<base64>"}`, the base64 one Messages event's JSON (Anthropic's
 * `message_start`, `content_block_delta`, …); an `exception` message is Bedrock's error. The capture
 * reads them as the server-sent events Anthropic's own API would have sent, so one codec reads both;
 * the frames are decoded with AWS's own codec rather than by hand (CRCs, header types).
 */
import { EventStreamCodec } from "@smithy/eventstream-codec";

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
  const payload = JSON.parse(body) as { bytes?: string };
  if (typeof payload.bytes !== "string") return "";
  const event = Buffer.from(payload.bytes, "base64").toString("utf8");
  const type = (JSON.parse(event) as { type?: unknown }).type;
  return `event: ${typeof type === "string" ? type : "message"}\ndata: ${event}\n\n`;
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

/** A Messages event as Bedrock frames it (the mock's and tests' side of the same codec). */
export function eventStreamFrame(event: Record<string, unknown>): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString("base64");
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: "chunk" },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: utf8.fromUtf8(JSON.stringify({ bytes })),
  });
}
