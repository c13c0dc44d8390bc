import { inputError } from "../errors.js";
import type { ScriptStep } from "../providers/scripted-model.js";
import type { Transport } from "../providers/types.js";
import type { Probe } from "./types.js";

/**
 * How far one probe run may go. A run's requests grow with its conversation, so a probe with
 * thousands of prompts makes gigabytes of payloads; these stop it with a clear error instead.
 */
export interface RunLimits {
  /** Provider requests per run, loop and sampling together (`run --max-requests`). */
  requests: number;
  /** UTF-8 bytes of request and response bodies per run (`run --max-payload-bytes`). */
  payloadBytes: number;
}

export const DEFAULT_LIMITS: RunLimits = { requests: 1000, payloadBytes: 256 * 1024 * 1024 };

/**
 * Model requests one prompt may take before the model answers with text. A script that calls tools
 * more often than this for one prompt is looping, not measuring anything.
 */
export const REQUESTS_PER_PROMPT = 50;

/**
 * What the probe file already says about its size, checked before anything runs: every prompt makes
 * at least one request, and each prompt's requests take script steps up to and including a text step.
 */
export function checkProbeLimits(probe: Probe, limits: RunLimits): void {
  if (probe.prompts.length > limits.requests)
    throw inputError(
      probe.file,
      "prompts",
      `expected at most ${limits.requests} prompts: each makes at least one request and a run is limited to ${limits.requests} requests (--max-requests)`,
    );
  const overlong = firstOverlongPrompt(probe.model.script);
  if (overlong !== null)
    throw inputError(
      probe.file,
      `model.script[${overlong}]`,
      `expected a {text} step within ${REQUESTS_PER_PROMPT} steps of a prompt's first step: one prompt may take at most ${REQUESTS_PER_PROMPT} model requests`,
    );
}

/** The index of the step that would be a prompt's request number REQUESTS_PER_PROMPT + 1, if any. */
function firstOverlongPrompt(script: ScriptStep[]): number | null {
  let requests = 0;
  for (const [i, step] of script.entries()) {
    requests++;
    if (requests > REQUESTS_PER_PROMPT) return i;
    if ("text" in step) requests = 0;
  }
  return null;
}

/**
 * Counts what leaves and returns through a transport and refuses the request that would pass a limit,
 * before it is sent or captured. The field named is the script the request would have taken a step from.
 */
export function limitTransport(transport: Transport, limits: RunLimits, file: string): Transport {
  let requests = 0;
  let bytes = 0;
  return async (request) => {
    const field = request.kind === "sampling" ? "model.sampling" : "model.script";
    requests++;
    bytes += Buffer.byteLength(request.body);
    if (requests > limits.requests)
      throw inputError(
        file,
        field,
        `expected a run of at most ${limits.requests} requests (--max-requests); request ${requests} was refused`,
      );
    if (bytes > limits.payloadBytes)
      throw inputError(
        file,
        field,
        `expected a run of at most ${limits.payloadBytes} payload bytes (--max-payload-bytes); request ${requests} would bring it to ${bytes}`,
      );
    const stream = await transport(request);
    return (async function* () {
      for await (const chunk of stream) {
        bytes += Buffer.byteLength(chunk);
        yield chunk;
      }
    })();
  };
}
