/**
 * Sends planned spans to an OTLP/HTTP endpoint with the official OpenTelemetry JS SDK: a tracer
 * provider whose batch processor (bounded queue) feeds the OTLP exporter (retries with backoff on
 * 429/502/503/504 and network errors). Only this module loads the SDK, and the CLI imports it
 * dynamically, so commands that do not export never pay for it.
 *
 * The exporter is wrapped so that an endpoint that cannot be reached costs the run nothing: its
 * address is tried once (a TCP connect) before the first batch leaves; when that or any export
 * fails, one warning is printed and every later batch is dropped at once instead of being retried.
 */

import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { connect } from "node:net";
import {
  type Context,
  type HrTime,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { trustedCas } from "../../processes/extra-ca-certs.js";
import { batchDelayMs, type OtlpTarget, resolveOtlpTarget } from "./otlp-config.js";
import type { Attributes, SpanPlan } from "./span-plan.js";

export interface OtlpSettings {
  /** Where and how (otlp-config.ts); the default is what the OTEL_EXPORTER_OTLP_* variables say. */
  target?: OtlpTarget;
  /** Added to OTEL_EXPORTER_OTLP_(TRACES_)HEADERS; these win on the same name. */
  headers?: Record<string, string>;
  /** Told once when the endpoint cannot be reached or refuses the spans. */
  warn(message: string): void;
  /** Spans go here instead of OTLP (tests: the SDK's in-memory exporter). */
  exporter?: SpanExporter;
}

/**
 * A run's `invoke_agent` span while the run is going on: requests are added as they are captured,
 * each under the span its plan names as parent (one `open`ed before), else under the agent.
 */
export interface LiveAgentSpan {
  add(plan: SpanPlan): void;
  /** Starts a span that stays open until `end` (a subagent's), which ends it at its plan's `endMs` then. */
  open(plan: SpanPlan): void;
  end(attributes: Attributes): void;
}

export interface OtlpSession {
  /** Where spans go, for messages. */
  url: string;
  /** Creates the spans of a planned run (parents first) and hands them to the batch processor. */
  emit(plans: SpanPlan[]): Promise<void>;
  /** Starts an `invoke_agent` span now, for a capture that lasts as long as a server runs. */
  startAgent(name: string, attributes: Attributes): LiveAgentSpan;
  /** Sends what is queued, waiting at most the export timeout; never throws. */
  close(): Promise<void>;
  /**
   * Ends the session without sending what is queued (spans handed over and not yet exported are
   * dropped, silently): for a command that stops on an error midway through a run's spans.
   */
  discard(): Promise<void>;
}

/** The batch processor's bounds: at most this many spans wait, and one request carries at most a batch. */
const MAX_QUEUE = 2048;
const BATCH = 512;
/**
 * The characters of requests' texts (`--content full`) handed over before the queue is flushed: a
 * long session's spans each carry their whole conversation, so a batch of them would hold gigabytes.
 */
const LATE_TEXT_CHARS = 32 * 1024 * 1024;
const REACH_TIMEOUT_MS = 2000;
/** How much longer than an export's deadline the batch processor and `close` wait, as a backstop. */
const DEADLINE_MARGIN_MS = 1000;

/** Whether a TCP connection to the URL's host and port opens within the time given. */
function reachable(url: string, deadlineMs: number): Promise<string | null> {
  const timeoutMs = Math.min(REACH_TIMEOUT_MS, deadlineMs);
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({
      host: hostname.replace(/^\[|\]$/g, ""),
      port: Number(port || (protocol === "https:" ? 443 : 80)),
    });
    // The verdict waits one turn of the event loop: after the process was held up (a busy machine, a
    // synchronous start-up step) the timer and a connection that opened meanwhile are due together,
    // and timers run before I/O, so without the extra turn a reachable endpoint would be declared down.
    const timer = setTimeout(() => setImmediate(() => done(`no connection within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    let decided = false;
    const done = (problem: string | null) => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    socket.once("connect", () => done(null));
    socket.once("error", (error) => done(error.message));
  });
}

/** What an exporter reports of one batch; code 0 is success (ExportResultCode, in @opentelemetry/core). */
type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];
const FAILED: ExportResult = { code: 1 };

/** An OTLP exporter behind a check and a deadline, and what closing the session needs of it. */
interface GuardedExporter extends SpanExporter {
  /** Resolves once no export is in flight; each one ends by its deadline, so this is bounded too. */
  settled(): Promise<void>;
}

/**
 * The exporter, behind a check that drops everything once the endpoint has failed, saying so once.
 * Each export must end within `deadline.ms`, counted from when the batch was handed over: the SDK's
 * own timeout covers a request only until the response headers arrive, so a collector that sends
 * them and then trickles its body would hold the export (and the process) forever. At the deadline
 * the batch fails and `cut` tears the connections down; whatever the SDK reports later is ignored.
 */
function guarded(
  inner: SpanExporter,
  url: string,
  warn: (message: string) => void,
  check: Promise<string | null>,
  deadline: { ms: number; cut(): void },
): GuardedExporter {
  let failed = false;
  const inFlight = new Set<Promise<void>>();
  const fail = (reason: string) => {
    if (failed) return;
    failed = true;
    warn(
      `OpenTelemetry export to ${url} failed (${reason}); spans are dropped from here on, and further failures are not reported`,
    );
  };
  const exportBounded = (spans: ReadableSpan[], done: (result: ExportResult) => void) => {
    let finish!: () => void;
    const flight = new Promise<void>((resolve) => (finish = resolve));
    inFlight.add(flight);
    const settle = (result: ExportResult) => {
      if (!inFlight.delete(flight)) return;
      clearTimeout(timer);
      finish();
      done(result);
    };
    const timer = setTimeout(() => {
      fail(`no complete answer within ${deadline.ms} ms`);
      deadline.cut();
      settle(FAILED);
    }, deadline.ms);
    check.then((problem) => {
      if (problem) fail(problem);
      if (failed) return settle(FAILED);
      inner.export(spans, (result) => {
        if (!inFlight.has(flight)) return;
        if (result.code !== 0) fail(result.error?.message ?? "the endpoint refused the spans");
        settle(result);
      });
    });
  };
  return {
    export: exportBounded,
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    settled: async () => {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** The span of a plan, its attributes with `late` (the plan's late attributes, made now). */
function startSpan(provider: BasicTracerProvider, plan: SpanPlan, parent: Context, late: Attributes = {}): Span {
  const span = provider.getTracer("payload-probe").startSpan(
    plan.name,
    {
      kind: plan.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
      startTime: hrTime(plan.startMs),
      attributes: { ...plan.attributes, ...late },
      root: plan.parent === null,
    },
    parent,
  );
  if (plan.errorType) span.setStatus({ code: SpanStatusCode.ERROR });
  return span;
}

/** The SDK's own exporter for the target, sending through `agent`, which the deadline can tear down. */
function otlpExporter(settings: OtlpSettings, target: OtlpTarget, agent: HttpAgent): SpanExporter {
  const options = {
    url: target.url,
    headers: settings.headers,
    timeoutMillis: target.timeoutMs,
    httpAgentOptions: () => agent,
  };
  return target.protocol === "http/json" ? new JsonExporter(options) : new ProtobufExporter(options);
}

/** A keep-alive agent as the SDK makes by default, trusting the extra CAs for https. */
function exportAgent(settings: OtlpSettings, url: string): HttpAgent {
  if (!url.startsWith("https:")) return new HttpAgent({ keepAlive: true });
  const ca = trustedCas(settings.warn);
  return new HttpsAgent({ keepAlive: true, ...(ca !== undefined && { ca }) });
}

/** The exporter to the endpoint itself: guarded, on an agent of its own that `disconnect` tears down. */
function endpointExporter(settings: OtlpSettings, target: OtlpTarget): GuardedExporter & { disconnect(): void } {
  const agent = exportAgent(settings, target.url);
  const disconnect = () => agent.destroy();
  const inner = otlpExporter(settings, target, agent);
  const deadline = { ms: target.timeoutMs, cut: disconnect };
  return {
    ...guarded(inner, target.url, settings.warn, reachable(target.url, target.timeoutMs), deadline),
    disconnect,
  };
}

/**
 * An exporter that, once told to drop, ends every batch at once without sending it. A dropped batch
 * reports success: dropping is what was asked, and a failed one would stop the processor's shutdown
 * before it shuts the exporter down.
 */
function droppable(inner: SpanExporter): SpanExporter & { drop(): void } {
  let dropping = false;
  return {
    export: (spans, done) => (dropping ? done({ code: 0 }) : inner.export(spans, done)),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    drop: () => {
      dropping = true;
    },
  };
}

interface Pipeline {
  provider: BasicTracerProvider;
  processor: SpanProcessor;
  /** From now on, batches the processor hands over are dropped, not sent. */
  drop(): void;
  /** Resolves once every export handed to the endpoint has ended (each within its deadline). */
  settled(): Promise<void>;
  /** Closes every connection to the endpoint, so none keeps the process alive. */
  disconnect(): void;
}

function buildPipeline(settings: OtlpSettings, target: OtlpTarget): Pipeline {
  const endpoint = settings.exporter ? undefined : endpointExporter(settings, target);
  const exporter = droppable(settings.exporter ?? endpoint!);
  const processor = new BatchSpanProcessor(exporter, {
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: BATCH,
    scheduledDelayMillis: batchDelayMs(),
    // Ours ends every export by the deadline; the processor's own limit only backs it up, so that it
    // never gives up on a batch whose outcome (and so the exit code) is still to come.
    exportTimeoutMillis: target.timeoutMs + DEADLINE_MARGIN_MS,
  });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the env detector, override our service name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "payload-probe" }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  return {
    provider,
    processor,
    drop: exporter.drop,
    settled: async () => endpoint?.settled(),
    disconnect: () => endpoint?.disconnect(),
  };
}

/**
 * The spans of a planned run, parents first, handed to the batch processor. The queue is bounded: a
 * long run is handed over a batch at a time, or sooner where its requests' texts are large.
 */
async function emitPlans(provider: BasicTracerProvider, processor: SpanProcessor, plans: SpanPlan[]): Promise<void> {
  const spans = new Map<string, Span>();
  let lateChars = 0;
  for (const [index, plan] of plans.entries()) {
    const parent = plan.parent === null ? undefined : spans.get(plan.parent);
    const late = plan.lateAttributes?.() ?? {};
    const span = startSpan(provider, plan, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT, late);
    spans.set(plan.id, span);
    span.end(hrTime(plan.endMs));
    lateChars += Object.values(late).reduce<number>((n, v) => n + (typeof v === "string" ? v.length : 0), 0);
    if ((index + 1) % BATCH === 0 || lateChars > LATE_TEXT_CHARS) {
      await processor.forceFlush();
      lateChars = 0;
    }
  }
}

export function openOtlpSession(settings: OtlpSettings): OtlpSession {
  const target = settings.target ?? resolveOtlpTarget(undefined);
  const { url } = target;
  const { provider, processor, drop, settled, disconnect } = buildPipeline(settings, target);
  return {
    url,
    emit: (plans) => emitPlans(provider, processor, plans),
    startAgent(name, attributes) {
      const agent = startSpan(
        provider,
        { id: "agent", parent: null, name, kind: "internal", startMs: Date.now(), endMs: 0, attributes },
        ROOT_CONTEXT,
      );
      const context = trace.setSpan(ROOT_CONTEXT, agent);
      const opened = new Map<string, { span: Span; plan: SpanPlan; context: Context }>();
      const parentOf = (plan: SpanPlan) => (plan.parent === null ? undefined : opened.get(plan.parent)?.context);
      return {
        add: (plan) => startSpan(provider, plan, parentOf(plan) ?? context).end(hrTime(plan.endMs)),
        open(plan) {
          const span = startSpan(provider, plan, parentOf(plan) ?? context);
          opened.set(plan.id, { span, plan, context: trace.setSpan(ROOT_CONTEXT, span) });
        },
        end(more) {
          // A subagent's plan was stretched by its later requests: its figures and end are read now.
          for (const { span, plan } of opened.values()) {
            span.setAttributes(plan.attributes);
            span.end(hrTime(plan.endMs));
          }
          agent.setAttributes(more);
          agent.end(hrTime(Date.now()));
        },
      };
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), target.timeoutMs + DEADLINE_MARGIN_MS);
        timer.unref();
      });
      const outcome = await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
      // The last batch's outcome decides whether the export failed, and it ends by its deadline.
      await settled();
      disconnect();
      if (outcome === "late")
        settings.warn(`OpenTelemetry export to ${url} did not finish in time; unsent spans were dropped`);
    },
    async discard() {
      drop();
      // The queue drains into the dropping exporter at once; an export already in flight ends by its deadline.
      await provider.shutdown().catch(() => undefined);
      await settled();
      disconnect();
    },
  };
}
