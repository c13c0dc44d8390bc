/**
 * What the mock and the proxy hand to the capture worker of each exchange, as it came off the wire,
 * and how the worker reads it: decoding, taking the body apart and checking a stream's end are capture
 * work, done off the thread that relays.
 */
import type { WireApi } from "../providers/types.js";
import { eventStreamAsSse } from "./aws-event-stream.js";
import { decodeBody } from "./body-encoding.js";
import type { LoggedRequest, ResponseOutcome } from "./capture.js";
import type { AddedDiagnostics, SocketSent } from "./types.js";
import { isCheckedStream, requestProblem, streamReachedEnd } from "./wire-request.js";

/** A request: its exact bytes, the API its path names, the URL to store. */
export interface HandedRequest {
  api: WireApi | null;
  url: string;
  bytes: Uint8Array;
  /** The request's `content-encoding` (the proxy): the capture stores the decoded text. */
  contentEncoding?: string;
  /** Why the server could not read the body (the mock answered it with a 400). */
  unreadable?: string;
  /** Cache diagnostics fields the proxy added upstream; `bytes` are the body as the agent sent it. */
  diagnosticsAdded?: AddedDiagnostics;
  /** The session id header the request carried (sessionHeaderOf), to tell conversations apart. */
  sessionHeader?: { name: string; value: string };
  /** The program its `user-agent` names (client-agent.ts). */
  agent?: string;
  /** Why the proxy sent the body as the agent did though it asks for diagnostics (`--cache-diagnostics`). */
  diagnosticsLeft?: string;
  /** A turn of a Responses WebSocket: `bytes` are its whole request rebuilt (responses-socket.ts). */
  websocket?: SocketSent;
}

/**
 * The headers agents name their session in: Claude Code's `x-claude-code-session-id`, Codex's
 * `session_id`. A session id grants nothing, unlike the credentials in other headers, which the
 * capture never sees.
 */
const SESSION_HEADERS = ["x-claude-code-session-id", "session_id"] as const;

/** `{ sessionHeader }` for the first session header a request carries, else nothing: spread into a HandedRequest. */
export function sessionHeaderOf(
  headers: Record<string, string | string[] | undefined>,
): Pick<HandedRequest, "sessionHeader"> {
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    if (typeof value === "string" && value !== "") return { sessionHeader: { name, value } };
  }
  return {};
}

/** A response: its exact bytes, and the headers the capture needs to read them. */
export interface HandedResponse extends Omit<ResponseOutcome, "body" | "encoding"> {
  bytes: Uint8Array;
  contentEncoding?: string;
  /** The response's content-type was `text/event-stream`: its API's closing event is checked for. */
  eventStream?: boolean;
  /** Bedrock's AWS EventStream framing (aws-event-stream.ts): read as the events it carries. */
  awsEventStream?: boolean;
}

/**
 * How the capture logs a request: a chat body it can take apart is a `loop` request; anything else,
 * a body it cannot decode and one that decodes past the capture's limit (cut, so not whole JSON), a
 * side payload that says why.
 */
export async function loggedRequest(handed: HandedRequest): Promise<LoggedRequest> {
  const { api, url, bytes, contentEncoding, unreadable, diagnosticsAdded, diagnosticsLeft, sessionHeader, websocket } =
    handed;
  const agent = handed.agent;
  const { text: body, encoding } = await decodeBody(bytes, contentEncoding);
  const side = {
    kind: "side",
    api: null,
    url,
    body,
    ...(encoding && { encoding }),
    ...(websocket && { websocket }),
  } as const;
  if (unreadable) return { ...side, unreadable };
  if (encoding?.undecodable) return { ...side, unreadable: `the body could not be decoded: ${encoding.undecodable}` };
  if (encoding?.truncated) return { ...side, unreadable: `the body was cut: ${encoding.truncated}` };
  if (api === null) return side;
  const problem = requestProblem(api, body);
  if (problem) return { ...side, unreadable: problem.message };
  const diagnostics = { ...(diagnosticsAdded && { diagnosticsAdded }), ...(diagnosticsLeft && { diagnosticsLeft }) };
  return {
    kind: "loop",
    api,
    url,
    body,
    ...(encoding && { encoding }),
    ...diagnostics,
    ...(sessionHeader && { sessionHeader }),
    ...(agent && { agent }),
    ...(websocket && { websocket }),
  };
}

/**
 * The response as the capture reads it: the body decoded, and an event stream that arrived whole by
 * HTTP's measure but lacks its API's closing event marked as cut short upstream.
 */
export async function responseOutcome(api: WireApi | null, handed: HandedResponse): Promise<ResponseOutcome> {
  const { bytes, contentEncoding, eventStream, awsEventStream, ...how } = handed;
  if (awsEventStream && contentEncoding === undefined) return awsStreamOutcome(api, how, bytes);
  const { text, encoding } = await decodeBody(bytes, contentEncoding, { cutShort: how.ending !== "complete" });
  const outcome: ResponseOutcome = { ...how, body: text, ...(encoding && { encoding }) };
  if (encoding?.undecodable)
    return { ...outcome, error: how.error ?? `the response body could not be decoded: ${encoding.undecodable}` };
  // The client got the whole body (its ending stays as it was); the capture keeps its beginning.
  if (encoding?.truncated)
    return { ...outcome, error: how.error ?? `the response body was cut: ${encoding.truncated}` };
  if (api === null || how.status === null || how.status >= 300) return outcome;
  if (!isCheckedStream(api, eventStream === true, text)) return outcome;
  return streamEnding(api, outcome);
}

/**
 * An event stream's ending by its API's closing event. A whole stream stays complete; one that
 * arrived whole by HTTP's measure without the event was cut short upstream. A client that left after
 * the event had the whole reply (Codex hangs up at `response.completed`, before the stream's last
 * bytes), so its turn is complete, not cancelled; one that left before it stays cancelled.
 */
function streamEnding(api: WireApi, outcome: ResponseOutcome): ResponseOutcome {
  if (outcome.ending !== "complete" && outcome.ending !== "cancelled") return outcome;
  const { ended, expected } = streamReachedEnd(api, outcome.body);
  if (outcome.ending === "cancelled") {
    if (!ended) return outcome;
    const { error: _left, ...whole } = outcome;
    return { ...whole, ending: "complete" };
  }
  return ended ? outcome : { ...outcome, ending: "truncated", error: `the event stream ended without ${expected}` };
}

/**
 * A Bedrock stream's outcome: its frames read as the Messages events they carry, checked for the
 * closing event like any event stream; frames that do not decode are the outcome's error.
 */
function awsStreamOutcome(
  api: WireApi | null,
  how: Omit<HandedResponse, "bytes" | "contentEncoding" | "eventStream" | "awsEventStream">,
  bytes: Uint8Array,
): ResponseOutcome {
  let decoded: { text: string; cut: number };
  try {
    decoded = eventStreamAsSse(bytes);
  } catch (error) {
    return {
      ...how,
      body: "",
      error: how.error ?? `the event stream could not be decoded: ${(error as Error).message}`,
    };
  }
  const outcome: ResponseOutcome = { ...how, body: decoded.text };
  if (api === null || how.status === null || how.status >= 300) return outcome;
  if (decoded.cut > 0 && how.ending === "complete")
    return { ...outcome, ending: "truncated", error: `the event stream ended ${decoded.cut} byte(s) into a frame` };
  return streamEnding(api, outcome);
}
