import type { WireApi } from "../providers/types.js";
import { decodeBody } from "./body-encoding.js";
import type { LoggedRequest, ResponseOutcome } from "./capture.js";
import { requestProblem, streamReachedEnd } from "./wire-request.js";

/**
 * What the proxy relayed of a response, as it came off the wire: the body's chunks and the headers
 * the capture needs to read them. Turning it into text is capture work, done off the relay's path.
 */
export interface RelayedResponse extends Omit<ResponseOutcome, "body" | "encoding"> {
  chunks: Buffer[];
  contentEncoding: string | undefined;
  /** The response's content-type was `text/event-stream`. */
  eventStream: boolean;
}

/**
 * How the capture logs a proxied request, from its wire bytes and `content-encoding`: a chat body it
 * can take apart is a `loop` request; anything else, and a body it cannot decode, a side payload.
 */
export function loggedRequest(
  api: WireApi | null,
  url: string,
  bytes: Buffer,
  contentEncoding: string | undefined,
): LoggedRequest {
  const { text: body, encoding } = decodeBody(bytes, contentEncoding);
  const side = { kind: "side", api: null, url, body, ...(encoding && { encoding }) } as const;
  if (encoding?.undecodable) return { ...side, unreadable: `the body could not be decoded: ${encoding.undecodable}` };
  if (api === null) return side;
  const problem = requestProblem(api, body);
  if (problem) return { ...side, unreadable: problem.message };
  return { kind: "loop", api, url, body, ...(encoding && { encoding }) };
}

/**
 * The response as the capture reads it: the body decoded, and an event stream that arrived whole by
 * HTTP's measure but lacks its API's closing event marked as cut short upstream.
 */
export function responseOutcome(api: WireApi | null, relayed: RelayedResponse): ResponseOutcome {
  const { chunks, contentEncoding, eventStream, ...how } = relayed;
  const { text, encoding } = decodeBody(Buffer.concat(chunks), contentEncoding, how.ending !== "complete");
  const outcome: ResponseOutcome = { ...how, body: text, ...(encoding && { encoding }) };
  if (encoding?.undecodable)
    return { ...outcome, error: how.error ?? `the response body could not be decoded: ${encoding.undecodable}` };
  if (api === null || !eventStream || how.ending !== "complete" || how.status === null || how.status >= 300)
    return outcome;
  const { ended, expected } = streamReachedEnd(api, text);
  return ended ? outcome : { ...outcome, ending: "truncated", error: `the event stream ended without ${expected}` };
}
