/**
 * Whether a request failed, and why, from what its record says of the HTTP exchange: no response at
 * all (the upstream could not be reached: a name that does not resolve, a refused connection), or an
 * error status. A failed request reached no model, so it is no cache read or write and costs nothing;
 * analysis leaves it out of rates and bills and shows the reason wherever it shows the request.
 * A response cut short or cancelled after it began is not a failure: the provider did the work.
 */
import type { RequestRecord } from "./types.js";

/** The reason is one short line, whatever the error text holds. */
const REASON_CHARS = 160;

type Exchange = Pick<RequestRecord, "status" | "ending" | "error">;

/**
 * The provider's own message in an error body (`{"error":{"message":…}}` in the OpenAI, Anthropic
 * and Gemini APIs; Bedrock's `{"message":…}`), else the text.
 */
function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | unknown; message?: unknown };
    if (typeof parsed.message === "string" && parsed.error === undefined) return parsed.message;
    const error = parsed.error;
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string")
      return (error as { message: string }).message;
    if (typeof error === "string") return error;
  } catch {
    // Not JSON: the text itself.
  }
  return text;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS - 1)}…` : line;
}

/** Why the request failed (`HTTP 429: rate limited`, `upstream … failed: getaddrinfo ENOTFOUND …`), or null when it did not. */
export function requestFailure(record: Exchange): string | null {
  const { status, ending, error } = record;
  if (typeof status === "number" && (status < 200 || status > 299)) {
    const message = error ? oneLine(errorMessage(error)) : "";
    return message === "" ? `HTTP ${status}` : `HTTP ${status}: ${message}`;
  }
  if (ending === "failed") return error ? oneLine(error) : "no response";
  return null;
}
