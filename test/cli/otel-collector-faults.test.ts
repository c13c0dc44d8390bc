/**
 * Collectors that misbehave, as real servers on 127.0.0.1: one that takes the request and never
 * answers, one that sends its headers and then trickles the body forever, one that resets the
 * connection, one that keeps answering 503. Every export must end by its deadline
 * (OTEL_EXPORTER_OTLP_TIMEOUT, made short here) with the exit codes the help gives: `export otel`
 * exits 1 saying once why, `run --otel` keeps the run's own code and warns.
 *
 * The five CLIs run at once, before the tests: each spends most of its time waiting on its collector
 * (the deadline, or the SDK's back-off of about a second before it tries again). That wait is what
 * is tested, so it stays; run one after another, the five would wait five times over.
 */
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { sharedRun } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

/**
 * Short, but long enough for a CLI on a loaded machine to reach the collector and, for `reset`, to
 * hear its answer after the SDK's one retry (0.8–1.2 s later) before the deadline cuts it.
 */
const DEADLINE_MS = 2000;
for (const name of ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS"])
  delete process.env[name];

type Fault = "silent" | "trickle" | "reset" | "unavailable";

interface FaultyCollector {
  url: string;
  /** Requests that reached it: the CLI did try to send. */
  requests: number;
  close(): Promise<void>;
}

function answer(fault: Fault, response: ServerResponse): void {
  if (fault === "unavailable") response.writeHead(503).end("busy");
  if (fault !== "trickle") return;
  response.writeHead(200, { "content-type": "application/x-protobuf" });
  const drip = setInterval(() => response.write("\0"), 50);
  response.on("close", () => clearInterval(drip));
}

/** A collector with the given fault; `close` drops every connection it still holds. */
async function startCollector(fault: Fault): Promise<FaultyCollector> {
  const sockets = new Set<Socket>();
  const collector = { url: "", requests: 0, close: async () => {} };
  const server: Server =
    fault === "reset"
      ? createTcpServer((socket) =>
          socket.once("data", () => {
            collector.requests++;
            socket.resetAndDestroy();
          }),
        )
      : createHttpServer((request, response) => {
          collector.requests++;
          request.resume();
          request.on("end", () => answer(fault, response));
        });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  collector.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  collector.close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return collector;
}

/** What the file started, stopped after it even when it timed out waiting for a CLI. */
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
  removeTempDirs();
});

/**
 * The built CLI against a collector with `fault`, the export deadline short, to its exit; the collector is
 * closed and the CLI's process group stopped whatever happens.
 */
async function cliAgainst(fault: Fault, args: (url: string) => string[]) {
  const collector = await startCollector(fault);
  const { child, done } = startCliIn(tempDir("otel-faults-"), args(collector.url), PROJECT_ROOT, {
    OTEL_EXPORTER_OTLP_TIMEOUT: String(DEADLINE_MS),
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
    await collector.close();
  };
  stops.push(stop);
  try {
    return { result: await done, requests: collector.requests };
  } finally {
    await stop();
  }
}

const otelWarnings = (stderr: string) => stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));

const WHY: Record<Fault, RegExp> = {
  silent: new RegExp(`no complete answer within ${DEADLINE_MS} ms|Request timed out`),
  trickle: new RegExp(`no complete answer within ${DEADLINE_MS} ms`),
  reset: /ECONNRESET/,
  unavailable: new RegExp(`no complete answer within ${DEADLINE_MS} ms|retryable status`),
};

const FAULTS = ["silent", "trickle", "reset", "unavailable"] as const;
type Outcome = Awaited<ReturnType<typeof cliAgainst>>;
let exported: Record<Fault, Outcome>;
let ranWithOtel: Outcome;

beforeAll(async () => {
  const runs = join(tempDir("otel-faults-runs-"), "runs");
  // The run starts while the exports' run is still being made.
  const run = cliAgainst("trickle", (url) => ["run", "p1", "--runs", runs, "--no-db", "--otel", url]);
  const exports = sharedRun("p1").then(({ dir }) =>
    Promise.all(FAULTS.map((fault) => cliAgainst(fault, (url) => ["export", "otel", dir, "--endpoint", url]))),
  );
  const [ran, outcomes] = await Promise.all([run, exports]);
  ranWithOtel = ran;
  exported = Object.fromEntries(FAULTS.map((fault, index) => [fault, outcomes[index]!])) as Record<Fault, Outcome>;
});

describe("export otel against a collector that misbehaves", () => {
  it.each(FAULTS)("%s: ends by the deadline, exit 1, one warning saying why", (fault) => {
    const { result, requests } = exported[fault];
    expect(requests).toBeGreaterThan(0);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/not sent: http:\/\/127\.0\.0\.1:\d+\/v1\/traces did not take the spans/);
    const warnings = otelWarnings(result.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(WHY[fault]);
  });
});

describe("run --otel against a collector that trickles its body", () => {
  it("prints the result, warns once and exits with the run's own code", () => {
    const { result, requests } = ranWithOtel;
    expect(requests).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/expect: held/);
    expect(result.code).toBe(0);
    const warnings = otelWarnings(result.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(WHY.trickle);
  });
});
