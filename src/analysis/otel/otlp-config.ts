/**
 * Where spans go and how, from flags and the OTEL_EXPORTER_OTLP_* variables, resolved without
 * loading the SDK: a command checks its settings (exit 2 on a bad URL or protocol) before any work,
 * while the exporter itself loads in the background.
 */

import { UserError } from "../../errors.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface OtlpTarget {
  /** The full traces URL (`…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** How long one export may take, retries included. */
  timeoutMs: number;
}

const TRACES_PATH = "v1/traces";
const DEFAULT_BASE = "http://localhost:4318";
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_BATCH_DELAY_MS = 1000;

const env = (name: string): string | undefined => process.env[name]?.trim() || undefined;

function parsedHttpUrl(url: string, from: string): URL {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return parsed;
  } catch {
    // Reported below with what was expected.
  }
  throw new UserError(`${from} "${url}": expected an http or https URL`);
}

/** A base URL gets `/v1/traces` as OTEL_EXPORTER_OTLP_ENDPOINT does; a URL already ending in it is kept. */
function withTracesPath(base: string, from: string): string {
  if (/\/v1\/traces\/?$/.test(parsedHttpUrl(base, from).pathname)) return base;
  return `${base.endsWith("/") ? base : `${base}/`}${TRACES_PATH}`;
}

/**
 * The traces URL as the OTLP exporter specification resolves it ("Endpoint URLs for OTLP/HTTP"):
 * the endpoint given, else the signal-specific variable as it is, else the general one plus
 * `/v1/traces`, else localhost:4318.
 */
function tracesUrl(endpoint: string | undefined): string {
  if (endpoint) return withTracesPath(endpoint, "OpenTelemetry endpoint");
  const specific = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (specific) return parsedHttpUrl(specific, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").href;
  return withTracesPath(env("OTEL_EXPORTER_OTLP_ENDPOINT") ?? DEFAULT_BASE, "OTEL_EXPORTER_OTLP_ENDPOINT");
}

function protocol(): OtlpProtocol {
  const name = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const value = env(name);
  if (value === undefined || value === "http/protobuf") return "http/protobuf";
  if (value === "http/json") return "http/json";
  throw new UserError(`${name} "${value}": expected http/protobuf or http/json (payload-probe exports over HTTP only)`);
}

function timeoutMs(): number {
  const value = Number(env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ?? env("OTEL_EXPORTER_OTLP_TIMEOUT"));
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}

/**
 * How long an ended span waits to be sent with others: OTEL_BSP_SCHEDULE_DELAY in ms, as the SDK's
 * batch processor reads it, else 1 s (the SDK's own default, 5 s, would hold a live capture's spans
 * back); a value that is not a number of ms is ignored, as a bad timeout is.
 */
export function batchDelayMs(): number {
  const value = Number(env("OTEL_BSP_SCHEDULE_DELAY") ?? Number.NaN);
  return Number.isFinite(value) && value >= 0 ? value : DEFAULT_BATCH_DELAY_MS;
}

export function resolveOtlpTarget(endpoint: string | undefined): OtlpTarget {
  return { url: tracesUrl(endpoint), protocol: protocol(), timeoutMs: timeoutMs() };
}
