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
import { trustedCas } from "../../extra-ca-certs.js";
import { type OtlpTarget, resolveOtlpTarget } from "./otlp-config.js";
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

/** A run's `invoke_agent` span while the run is going on: requests are added as they are captured. */
export interface LiveAgentSpan {
  add(plan: SpanPlan): void;
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
}

/** The batch processor's bounds: at most this many spans wait, and one request carries at most a batch. */
const MAX_QUEUE = 2048;
const BATCH = 512;
const REACH_TIMEOUT_MS = 2000;

/** Whether a TCP connection to the URL's host and port opens within the time given. */
function reachable(url: string): Promise<string | null> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({
      host: hostname.replace(/^\[|\]$/g, ""),
      port: Number(port || (protocol === "https:" ? 443 : 80)),
    });
    // The verdict waits one turn of the event loop: after the process was held up (a busy machine, a
    // synchronous start-up step) the timer and a connection that opened meanwhile are due together,
    // and timers run before I/O, so without the extra turn a reachable endpoint would be declared down.
    const timer = setTimeout(
      () => setImmediate(() => done(`no connection within ${REACH_TIMEOUT_MS} ms`)),
      REACH_TIMEOUT_MS,
    );
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

/** The exporter, behind a check that drops everything once the endpoint has failed, saying so once. */
function guarded(inner: SpanExporter, url: string, warn: (message: string) => void, check: Promise<string | null>) {
  let failed = false;
  const fail = (reason: string) => {
    if (failed) return;
    failed = true;
    warn(
      `OpenTelemetry export to ${url} failed (${reason}); spans are dropped from here on, and further failures are not reported`,
    );
  };
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      check.then((problem) => {
        if (problem) fail(problem);
        if (failed) return done({ code: 1 });
        inner.export(spans, (result) => {
          if (result.code !== 0) fail(result.error?.message ?? "the endpoint refused the spans");
          done(result);
        });
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  return exporter;
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

function startSpan(provider: BasicTracerProvider, plan: SpanPlan, parent: Context): Span {
  const span = provider.getTracer("payload-probe").startSpan(
    plan.name,
    {
      kind: plan.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
      startTime: hrTime(plan.startMs),
      attributes: plan.attributes,
      root: plan.parent === null,
    },
    parent,
  );
  if (plan.errorType) span.setStatus({ code: SpanStatusCode.ERROR });
  return span;
}

function buildProvider(
  settings: OtlpSettings,
  target: OtlpTarget,
): { provider: BasicTracerProvider; processor: SpanProcessor } {
  const { url } = target;
  const ca = url.startsWith("https:") ? trustedCas(settings.warn) : undefined;
  const options = {
    url,
    headers: settings.headers,
    timeoutMillis: target.timeoutMs,
    ...(ca !== undefined && { httpAgentOptions: { ca } }),
  };
  const otlp =
    settings.exporter ?? (target.protocol === "http/json" ? new JsonExporter(options) : new ProtobufExporter(options));
  const exporter = settings.exporter ? otlp : guarded(otlp, url, settings.warn, reachable(url));
  const processor = new BatchSpanProcessor(exporter, {
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: BATCH,
    scheduledDelayMillis: 1000,
    exportTimeoutMillis: target.timeoutMs,
  });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the env detector, override our service name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "payload-probe" }))
    .merge(detectResources({ detectors: [envDetector] }));
  return { provider: new BasicTracerProvider({ resource, spanProcessors: [processor] }), processor };
}

export function openOtlpSession(settings: OtlpSettings): OtlpSession {
  const target = settings.target ?? resolveOtlpTarget(undefined);
  const { url } = target;
  const { provider, processor } = buildProvider(settings, target);
  return {
    url,
    async emit(plans) {
      const spans = new Map<string, Span>();
      for (const [index, plan] of plans.entries()) {
        const parent = plan.parent === null ? undefined : spans.get(plan.parent);
        const span = startSpan(provider, plan, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);
        spans.set(plan.id, span);
        span.end(hrTime(plan.endMs));
        // The queue is bounded: a long run is handed over a batch at a time rather than overflowing it.
        if ((index + 1) % BATCH === 0) await processor.forceFlush();
      }
    },
    startAgent(name, attributes) {
      const agent = startSpan(
        provider,
        { id: "agent", parent: null, name, kind: "internal", startMs: Date.now(), endMs: 0, attributes },
        ROOT_CONTEXT,
      );
      const context = trace.setSpan(ROOT_CONTEXT, agent);
      return {
        add: (plan) => startSpan(provider, plan, context).end(hrTime(plan.endMs)),
        end(more) {
          agent.setAttributes(more);
          agent.end(hrTime(Date.now()));
        },
      };
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), target.timeoutMs + 1000);
        timer.unref();
      });
      const outcome = await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
      if (outcome === "late")
        settings.warn(`OpenTelemetry export to ${url} did not finish in time; unsent spans were dropped`);
    },
  };
}
