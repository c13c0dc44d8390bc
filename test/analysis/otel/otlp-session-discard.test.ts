/**
 * A command that stops on an error midway through a run's spans ends its OTLP session with `discard`:
 * what was handed to the batch processor and not yet exported is dropped, not sent, and the session
 * is shut down, so nothing of it is exported later (in the CLI's process, or in a test's after the
 * command has returned). `close` sends the same queue. Through the real SDK into an exporter that
 * keeps what it is given.
 */
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { expect, it } from "vitest";
import { openOtlpSession } from "../../../src/analysis/otel/otlp-session.js";
import type { SpanPlan } from "../../../src/analysis/otel/span-plan.js";

function keeping(): { exporter: SpanExporter; exported: ReadableSpan[]; shutdowns: number } {
  const kept = { exported: [] as ReadableSpan[], shutdowns: 0 };
  const exporter: SpanExporter = {
    export(spans, done) {
      kept.exported.push(...spans);
      done({ code: 0 });
    },
    async shutdown() {
      kept.shutdowns++;
    },
  };
  return Object.assign(kept, { exporter });
}

const now = Date.now();
const PLANS: SpanPlan[] = [
  {
    id: "agent",
    parent: null,
    name: "invoke_agent p1",
    kind: "internal",
    startMs: now,
    endMs: now + 9,
    attributes: {},
  },
  { id: "chat-1", parent: "agent", name: "chat gpt-4.1", kind: "client", startMs: now, endMs: now + 4, attributes: {} },
];

it("discard drops the spans still queued and shuts the session down; close sends them", async () => {
  const dropped = keeping();
  const session = openOtlpSession({ exporter: dropped.exporter, warn: (m) => expect.fail(m) });
  await session.emit(PLANS);
  await session.discard();
  expect(dropped.exported).toEqual([]);
  expect(dropped.shutdowns).toBe(1);

  const sent = keeping();
  const closed = openOtlpSession({ exporter: sent.exporter, warn: (m) => expect.fail(m) });
  await closed.emit(PLANS);
  await closed.close();
  expect(sent.exported.map((span) => span.name)).toEqual(["invoke_agent p1", "chat gpt-4.1"]);
  expect(sent.shutdowns).toBe(1);
});
