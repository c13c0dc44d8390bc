/**
 * `--otel URL` on run, mock and proxy, and the flags `export otel` shares with it. The exporter and
 * the SDK are imported only when spans are to be sent, so a command without the flag loads none of it.
 */

import type { OtelExport } from "../analysis/otel/otel-export.js";
import { resolveOtlpTarget } from "../analysis/otel/otlp-config.js";
import { CONTENT_MODES, type ContentMode } from "../analysis/otel/span-plan.js";
import type { SessionPart } from "../capture/capture-session.js";
import { UserError } from "../errors.js";

/** The flag's text for a command's --help. */
export const OTEL_FLAG_HELP = `  --otel URL    also send the run as OpenTelemetry GenAI spans to an OTLP/HTTP collector at URL
                (http://host:4318; OTEL_EXPORTER_OTLP_HEADERS and _PROTOCOL apply); sizes and
                hashes only. Each export ends within OTEL_EXPORTER_OTLP_TIMEOUT ms (10000), body
                included. An endpoint that cannot be reached, refuses or does not answer in time
                costs the run nothing (same exit code)
                and is reported once on stderr`;

/** `--header k=v` values as a header map; a value without `=` is a usage error. */
export function headerArgs(command: string, values: string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values ?? []) {
    const at = value.indexOf("=");
    if (at < 1) throw new UserError(`${command}: --header expected NAME=VALUE, got ${JSON.stringify(value)}`);
    headers[value.slice(0, at).trim()] = value.slice(at + 1).trim();
  }
  return headers;
}

export function contentArg(command: string, value: string | undefined): ContentMode {
  if (value === undefined) return "hashes";
  if ((CONTENT_MODES as readonly string[]).includes(value)) return value as ContentMode;
  throw new UserError(
    `${command}: --content expected one of ${CONTENT_MODES.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

const warnOnce = (message: string) => process.stderr.write(`payload-probe: ${message}\n`);

/**
 * An exporter for the given endpoint and options. Its settings are checked now (a bad URL or
 * protocol is a usage error before any work); the SDK loads in the background, so a run can start
 * meanwhile: the promise is awaited where the first spans are sent.
 */
export function openOtel(options: {
  endpoint?: string;
  headers?: Record<string, string>;
  content?: ContentMode;
}): Promise<OtelExport> {
  const target = resolveOtlpTarget(options.endpoint);
  const loading = import("../analysis/otel/otel-export.js").then(({ openOtelExport }) =>
    openOtelExport({ target, headers: options.headers }, { content: options.content ?? "hashes" }, warnOnce),
  );
  // A failure surfaces where the promise is awaited, not as an unhandled rejection while a run goes on.
  loading.catch(() => undefined);
  return loading;
}

/** `--otel URL`'s exporter (loading), or undefined when the flag was not given. */
export function otelFlag(url: string | undefined): Promise<OtelExport> | undefined {
  return url === undefined ? undefined : openOtel({ endpoint: url });
}

/**
 * `--otel`'s live export as a part of a capture session (capture/capture-session.ts): the agent's
 * span starts now, each record is sent as it is written, and once the capture has closed the span
 * ends with the run's id and what is left is sent (a bounded wait). Nothing when `otel` is undefined.
 */
export function otelLivePart(otel: OtelExport | undefined, name: string): SessionPart {
  const live = otel?.live(name);
  return {
    onFinished: (exchange) => exchange.record && live?.record(exchange.record),
    async close(recording) {
      live?.end(recording.runId);
      await otel?.close();
    },
  };
}
