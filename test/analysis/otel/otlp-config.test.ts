import { afterEach, describe, expect, it } from "vitest";
import { batchDelayMs, resolveOtlpTarget } from "../../../src/analysis/otel/otlp-config.js";
import { UserError } from "../../../src/errors.js";

const NAMES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TIMEOUT",
  "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
  "OTEL_BSP_SCHEDULE_DELAY",
];
const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
const setEnv = (values: Record<string, string>) => {
  for (const name of NAMES) delete process.env[name];
  Object.assign(process.env, values);
};
afterEach(() => {
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

describe("where spans go (the OTLP exporter specification's endpoint rules)", () => {
  it("a base endpoint gets /v1/traces; a URL already ending in it is kept", () => {
    setEnv({});
    expect(resolveOtlpTarget("http://collector:4318").url).toBe("http://collector:4318/v1/traces");
    expect(resolveOtlpTarget("http://collector:4318/otlp/").url).toBe("http://collector:4318/otlp/v1/traces");
    expect(resolveOtlpTarget("https://c.example/v1/traces").url).toBe("https://c.example/v1/traces");
  });

  it("without an endpoint: the traces variable as it is, else the general one plus /v1/traces, else localhost:4318", () => {
    setEnv({});
    expect(resolveOtlpTarget(undefined).url).toBe("http://localhost:4318/v1/traces");
    setEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://phoenix:6006" });
    expect(resolveOtlpTarget(undefined).url).toBe("http://phoenix:6006/v1/traces");
    setEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:2/custom" });
    expect(resolveOtlpTarget(undefined).url).toBe("http://b:2/custom");
    expect(resolveOtlpTarget("http://flag:3").url).toBe("http://flag:3/v1/traces");
  });

  it("protocol and timeout from the variables, the traces-specific one first", () => {
    setEnv({});
    expect(resolveOtlpTarget(undefined)).toMatchObject({ protocol: "http/protobuf", timeoutMs: 10_000 });
    setEnv({
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
    });
    expect(resolveOtlpTarget(undefined)).toMatchObject({ protocol: "http/json", timeoutMs: 2500 });
  });

  it("the batch delay from OTEL_BSP_SCHEDULE_DELAY (ms, 0 sends each span at once), else 1 s", () => {
    setEnv({});
    expect(batchDelayMs()).toBe(1000);
    setEnv({ OTEL_BSP_SCHEDULE_DELAY: "0" });
    expect(batchDelayMs()).toBe(0);
    setEnv({ OTEL_BSP_SCHEDULE_DELAY: "250" });
    expect(batchDelayMs()).toBe(250);
    for (const value of ["", "soon", "-5"]) {
      setEnv({ OTEL_BSP_SCHEDULE_DELAY: value });
      expect(batchDelayMs()).toBe(1000);
    }
  });

  it("a URL that is not http(s) and the gRPC protocol are usage errors naming where they came from", () => {
    setEnv({});
    expect(() => resolveOtlpTarget("collector:4318")).toThrow(UserError);
    expect(() => resolveOtlpTarget("ftp://c")).toThrow(
      /OpenTelemetry endpoint "ftp:\/\/c": expected an http or https URL/,
    );
    setEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "nope" });
    expect(() => resolveOtlpTarget(undefined)).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "nope"/);
    setEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(() => resolveOtlpTarget("http://c:4318")).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL "grpc": expected http\/protobuf/,
    );
  });
});
