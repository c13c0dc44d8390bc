/**
 * The three ways runs reach a collector: a captured run exported afterwards (`export otel`), a
 * probe run exported as soon as it has finished (`run --otel`), and a mock's or proxy's requests
 * sent one by one as they are captured (`--otel` on `mock` and `proxy`; a subagent's span is sent
 * when the run ends, once its last request is known).
 */

import type { RequestRecord } from "../../capture/types.js";
import type { RunSource } from "../load-run.js";
import { chatSpan } from "./chat-span.js";
import { conversationParent, SubagentSpans } from "./conversation-spans.js";
import { type OtlpSession, type OtlpSettings, openOtlpSession } from "./otlp-session.js";
import { readRunTraceInput, traceInputFromFolder } from "./run-input.js";
import { AGENT_SPAN_ID, agentAttributes, planRunTrace } from "./run-trace.js";
import type { PlanOptions } from "./span-plan.js";

/** A capture that goes on while a server runs: each record becomes a span when it is written. */
export interface LiveRun {
  record(record: RequestRecord): void;
  /** Ends the run's `invoke_agent` span, naming the run now that it is known. */
  end(runId: string): void;
}

export interface OtelExport {
  url: string;
  /** Exports one captured run (with each request's predicted cost and cache figures when given); returns its span count. */
  exportSource(source: RunSource, costed?: Pick<PlanOptions, "price" | "cacheRate">): Promise<number>;
  /** Exports a probe run that has just finished, from its records and its folder. */
  exportProbeRun(dir: string, records: RequestRecord[]): Promise<number>;
  live(name: string): LiveRun;
  /** Sends what is left (bounded wait); true when every export was taken by the endpoint. */
  close(): Promise<boolean>;
  /** Ends without sending what is left: a command that stopped on an error sends no part of a run. */
  discard(): Promise<void>;
}

export function openOtelExport(
  settings: Omit<OtlpSettings, "warn">,
  plan: PlanOptions,
  warn: (m: string) => void,
): OtelExport {
  let failed = false;
  const session: OtlpSession = openOtlpSession({
    ...settings,
    warn(message) {
      failed = true;
      warn(message);
    },
  });
  const emitAll = async (plans: ReturnType<typeof planRunTrace>) => {
    await session.emit(plans);
    return plans.length;
  };
  return {
    url: session.url,
    exportSource: (source, costed) =>
      emitAll(planRunTrace(readRunTraceInput(source, plan.content), { ...plan, ...costed })),
    exportProbeRun: (dir, records) => emitAll(planRunTrace(traceInputFromFolder(dir, records, dir), plan)),
    live(name) {
      // The run id is known once the capture has opened, after the server started listening.
      const agent = session.startAgent(`invoke_agent ${name}`, agentAttributes("", name));
      // Each subagent's requests under an invoke_agent span of its own, as a whole run's export has them.
      const subagents = new SubagentSpans(AGENT_SPAN_ID);
      let requests = 0;
      return {
        record(record) {
          requests++;
          const chat = chatSpan(record, conversationParent(record, AGENT_SPAN_ID), plan);
          const started = subagents.take(record, chat);
          if (started) agent.open(started);
          agent.add(chat);
        },
        end: (runId) => agent.end({ ...agentAttributes(runId, name), "payload_probe.requests": requests }),
      };
    },
    async close() {
      await session.close();
      return !failed;
    },
    discard: () => session.discard(),
  };
}
