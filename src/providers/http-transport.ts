import { CheckFailed, UserError } from "../errors.js";
import { trustExtraCasFor } from "../processes/extra-ca-certs.js";
import type { Transport } from "./types.js";

/**
 * The response header by which the mock says its usage figures are estimates: the capture proxy in
 * front of it and this transport read it, so no record passes them off as a provider's count.
 */
export const USAGE_ESTIMATE_HEADER = "x-payload-probe-usage";

/** How much of an error body the failure message quotes. */
const ERROR_BODY_LIMIT = 500;

/**
 * The runtime's provider over HTTP: each request's body is posted unchanged to its URL, and the
 * response text is handed on chunk by chunk as it arrives, for the codec to parse. A provider that
 * cannot be reached is bad input (the URL); an error status fails the run, quoting the provider.
 */
export function httpTransport(headers: Record<string, string> = {}): Transport {
  return async (request) => {
    let response: Response;
    await trustExtraCasFor(request.url);
    try {
      response = await fetch(request.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: request.body,
      });
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
      throw new UserError(`provider ${request.url}: expected a server that answers, but the request failed: ${cause}`);
    }
    if (!response.ok || response.body === null) {
      const text = (await response.text()).slice(0, ERROR_BODY_LIMIT);
      throw new CheckFailed(`provider ${request.url} answered HTTP ${response.status}: ${text}`);
    }
    const body = response.body;
    const stream = (async function* () {
      const decoder = new TextDecoder();
      for await (const chunk of body) {
        const text = decoder.decode(chunk, { stream: true });
        if (text !== "") yield text;
      }
      const rest = decoder.decode();
      if (rest !== "") yield rest;
    })();
    return Object.assign(stream, { usageEstimated: response.headers.get(USAGE_ESTIMATE_HEADER) === "estimate" });
  };
}
