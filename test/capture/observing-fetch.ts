/**
 * A fetch for the official SDKs' `fetch` option: everything passes through, and what each call sent
 * and received is noted below the SDK and above the network, with when each chunk arrived.
 */

import { createHash } from "node:crypto";
import { expect } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";

/** What one client call sent and received on the wire. */
export interface Observed {
  url: string;
  body: string;
  received: { at: number; bytes: Uint8Array }[];
  endedAt: number;
}

export function observingFetch(log: Observed[]): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const seen: Observed = { url, body: String(init?.body), received: [], endedAt: 0 };
    log.push(seen);
    const response = await fetch(input, init);
    const reader = response.body!.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          seen.endedAt = performance.now();
          controller.close();
          return;
        }
        seen.received.push({ at: performance.now(), bytes: value });
        controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

/**
 * What a client sent reached the upstream (the mock's stored payloads) byte for byte, and the client
 * received every byte the upstream answered, in order. Returns the last exchange's seq and the text received.
 */
export function expectRelayedWhole(
  payloads: { type: string; seq: number; body: string }[],
  seen: Observed,
): { seq: number; received: string } {
  const seq = payloads.filter((p) => p.type === "request").length;
  const upstream = payloads.filter((p) => p.seq === seq);
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  expect(sha256(upstream.find((p) => p.type === "request")!.body)).toBe(sha256(seen.body));
  const received = Buffer.concat(seen.received.map((r) => r.bytes)).toString("utf8");
  expect(received).toBe(upstream.find((p) => p.type === "response")!.body);
  return { seq, received };
}

/** What an SDK test's request must have become in the proxy's record: its API, tools, system text, roles, body and usage. */
export function expectSdkRecord(
  record: RequestRecord,
  want: { api: string; tools: string[]; system: string; roles: string[] },
  seen: Observed,
  usage: { input: number; output: number },
): void {
  expect(record.api).toBe(want.api);
  expect(record.tools).toEqual(want.tools);
  expect(record.systemBytes).toBe(Buffer.byteLength(want.system, "utf8"));
  expect(record.roles).toEqual(want.roles);
  expect(record.hashes.body).toBe(createHash("sha256").update(seen.body).digest("hex"));
  expect(record.status).toBe(200);
  expect(record.ending).toBe("complete");
  expect(record.usage).toMatchObject({ source: "estimate", inputTokens: usage.input, outputTokens: usage.output });
  expect(usage.input).toBeGreaterThan(0);
}
