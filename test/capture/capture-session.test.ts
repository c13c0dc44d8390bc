/**
 * The capture session's order (src/capture/capture-session.ts), told by the parts themselves: the
 * capture starts, then the parts in order; the capture closes first, then each part started, in
 * reverse order; every close runs whatever threw before it, and the first error is the one rethrown.
 * The end-to-end cases (a proxy's or mock's close that fails, with --view and --otel) are in
 * test/cli/capture-session.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { FinishedExchange } from "../../src/capture/capture.js";
import { type Recording, runCaptureSession, type SessionPart } from "../../src/capture/capture-session.js";

/** A recording and parts that write what happens to them in `log`; `fail` names the steps that throw. */
function session(fail: string[] = []) {
  const log: string[] = [];
  const step = (name: string) => {
    log.push(name);
    if (fail.includes(name)) throw new Error(`${name} failed`);
  };
  const recording: Recording = {
    runId: "r1",
    dir: "/runs/r",
    liveDir: "/runs/.r.new-1",
    close: async () => step("close capture"),
  };
  const part = (name: string, starts = true): SessionPart => ({
    ...(starts && { start: async () => step(`start ${name}`) }),
    onFinished: (exchange) => log.push(`${name} told #${exchange.seq}`),
    close: async () => step(`close ${name}`),
  });
  let tell: ((exchange: FinishedExchange) => void) | undefined;
  const start = async (onFinished: (exchange: FinishedExchange) => void) => {
    tell = onFinished;
    step("start capture");
    return recording;
  };
  const parts = [part("otel", false), part("log", false), part("view")];
  const exchange = (seq: number) => tell!({ seq } as FinishedExchange);
  return { log, start, parts, exchange };
}

describe("a capture session", () => {
  it("starts the capture then its parts, tells every part of each exchange, and closes in reverse after the capture", async () => {
    const { log, start, parts, exchange } = session();
    const result = await runCaptureSession(start, parts, async () => {
      exchange(1);
      return 7;
    });
    expect(result).toBe(7);
    expect(log).toEqual([
      "start capture",
      "start view",
      "otel told #1",
      "log told #1",
      "view told #1",
      "close capture",
      "close view",
      "close log",
      "close otel",
    ]);
  });

  it("closes every part when the capture's close throws, and rethrows that error", async () => {
    const { log, start, parts } = session(["close capture"]);
    await expect(runCaptureSession(start, parts, async () => 0)).rejects.toThrow("close capture failed");
    expect(log.slice(-4)).toEqual(["close capture", "close view", "close log", "close otel"]);
  });

  it("a part that cannot start is not closed, the others and the capture are, and its error is the one rethrown", async () => {
    const { log, start, parts } = session(["start view", "close log"]);
    let used = false;
    const run = runCaptureSession(start, parts, async () => {
      used = true;
      return 0;
    });
    await expect(run).rejects.toThrow("start view failed");
    expect(used).toBe(false);
    expect(log).toEqual(["start capture", "start view", "close capture", "close log", "close otel"]);
  });

  it("the session's own error wins over a close that fails after it", async () => {
    const { start, parts } = session(["close otel"]);
    const run = runCaptureSession(start, parts, async () => {
      throw new Error("the command could not be pointed");
    });
    await expect(run).rejects.toThrow("the command could not be pointed");
  });
});
