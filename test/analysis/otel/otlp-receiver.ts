/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 for tests: it accepts POST /v1/traces in both
 * encodings the exporter offers and decodes them with the official OpenTelemetry protocol
 * definitions (the protobufjs code @opentelemetry/otlp-transformer 0.200 generated from
 * opentelemetry-proto, installed as the dev dependency `otlp-proto-generated`), not by hand.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { conditionWaiters } from "../../fixtures/condition-waiters.js";

interface ProtoMessage {
  resourceSpans: Array<{
    resource?: { attributes: ProtoKeyValue[] };
    scopeSpans: Array<{ spans: ProtoSpan[] }>;
  }>;
}
interface ProtoKeyValue {
  key: string;
  value: ProtoAnyValue;
}
interface ProtoAnyValue {
  value?: string;
  stringValue?: string;
  boolValue?: boolean;
  intValue?: { toString(): string } | number;
  doubleValue?: number;
  arrayValue?: { values: ProtoAnyValue[] };
}
interface ProtoSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: { toString(): string } | number;
  endTimeUnixNano: { toString(): string } | number;
  attributes: ProtoKeyValue[];
  status?: { code: number };
}
interface MessageType {
  decode(bytes: Uint8Array): ProtoMessage;
  fromObject(object: unknown): ProtoMessage;
  verify(object: unknown): string | null;
}

const generated = createRequire(import.meta.url)("otlp-proto-generated/build/src/generated/root.js");
const ExportTraceServiceRequest: MessageType =
  generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** OTLP span kinds (trace.proto `SpanKind`). */
export const SPAN_KIND = { internal: 1, client: 3 } as const;

export type Value = string | number | boolean | Value[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, Value>;
  statusCode: number;
  resource: Record<string, Value>;
}

export interface ReceivedExport {
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  spans: ReceivedSpan[];
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** The generated AnyValue names its set oneof member in `value` (protobufjs's oneof getter). */
function decodeValue(value: ProtoAnyValue): Value {
  switch (value.value) {
    case "stringValue":
      return value.stringValue!;
    case "boolValue":
      return value.boolValue!;
    case "intValue":
      return Number(value.intValue!.toString());
    case "doubleValue":
      return value.doubleValue!;
    case "arrayValue":
      return value.arrayValue!.values.map(decodeValue);
    default:
      throw new Error(`unexpected attribute value kind ${value.value}`);
  }
}

const attributesOf = (list: ProtoKeyValue[] = []) =>
  Object.fromEntries(list.map((kv) => [kv.key, decodeValue(kv.value)]));

function spansOf(message: ProtoMessage): ReceivedSpan[] {
  return message.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((span) => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId ?? new Uint8Array()),
        name: span.name,
        kind: span.kind,
        startNs: BigInt(span.startTimeUnixNano.toString()),
        endNs: BigInt(span.endTimeUnixNano.toString()),
        attributes: attributesOf(span.attributes),
        statusCode: span.status?.code ?? 0,
        resource: attributesOf(rs.resource?.attributes),
      })),
    ),
  );
}

/**
 * OTLP/JSON is the protobuf JSON mapping except that trace and span ids are hex, not base64
 * (OTLP specification, "JSON Protobuf Encoding"): those are turned into bytes, the rest is read
 * by the generated `fromObject` (which takes 64-bit integers as the strings that mapping writes)
 * and the message it builds is held to the definitions by `verify`.
 */
function decodeJson(text: string): ProtoMessage {
  const ids = new Set(["traceId", "spanId", "parentSpanId"]);
  const object = JSON.parse(text, (key, value) =>
    ids.has(key) && typeof value === "string" ? Buffer.from(value, "hex") : value,
  );
  const message = ExportTraceServiceRequest.fromObject(object);
  const problem = ExportTraceServiceRequest.verify(message);
  if (problem) throw new Error(`OTLP/JSON body does not match the trace definitions: ${problem}`);
  return message;
}

export interface OtlpReceiver {
  url: string;
  exports: ReceivedExport[];
  spans(): ReceivedSpan[];
  /** Resolves once at least `count` spans have arrived (no deadline of its own: the test's timeout bounds it). */
  waitForSpans(count: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 on a port the OS picks (over TLS when given a key and certificate); every decoded export is kept in order. */
export async function startOtlpReceiver(tls?: { key: string; cert: string }): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const spans = () => exports.flatMap((e) => e.spans);
  const arrivals = conditionWaiters();
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers["content-type"] ?? "";
      try {
        if (request.url !== "/v1/traces") throw new Error(`unexpected path ${request.url}`);
        const message = contentType.startsWith("application/json")
          ? decodeJson(body.toString("utf8"))
          : ExportTraceServiceRequest.decode(body);
        exports.push({ contentType, headers: request.headers, spans: spansOf(message) });
        arrivals.changed();
        response
          .writeHead(200, { "content-type": contentType })
          .end(contentType.startsWith("application/json") ? "{}" : "");
      } catch (error) {
        response.writeHead(400).end((error as Error).message);
      }
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handle) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    exports,
    spans,
    waitForSpans: (count) => arrivals.until(() => spans().length >= count).then(spans),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
