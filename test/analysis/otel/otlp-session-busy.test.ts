/**
 * A process whose event loop is held up (a loaded machine, or a synchronous start-up step such as the
 * tokenizer's load) right after it opened an OTLP session: the endpoint is up, so its spans arrive and
 * nothing is reported as unreachable, however long the hold-up outlasted the session's reach check.
 */
import { afterEach, expect, it } from "vitest";
import { openOtlpSession } from "../../../src/analysis/otel/otlp-session.js";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.js";

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** Holds this thread the way a starved or synchronously busy process is held, without burning a core. */
const holdThread = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The export deadline, which bounds the reach check too (the shorter of it and REACH_TIMEOUT_MS, 2 s):
 * short, so the hold-up that outlasts it is short, but long enough for the one span to be sent after it.
 */
const DEADLINE_MS = 1_500;

it("spans reach an endpoint that is up although the event loop was held past the reach check's limit", async () => {
  receiver = await startOtlpReceiver();
  const warnings: string[] = [];
  const session = openOtlpSession({
    target: { url: `${receiver.url}/v1/traces`, protocol: "http/protobuf", timeoutMs: DEADLINE_MS },
    warn: (message) => warnings.push(message),
  });
  // Longer than the reach check allows: its timer and the finished connection are both due at once.
  holdThread(DEADLINE_MS + 200);
  const now = Date.now();
  await session.emit([
    {
      id: "agent",
      parent: null,
      name: "invoke_agent busy",
      kind: "internal",
      startMs: now,
      endMs: now + 1,
      attributes: {},
    },
  ]);
  await session.close();
  expect(warnings).toEqual([]);
  expect(receiver.spans().map((span) => span.name)).toEqual(["invoke_agent busy"]);
});
