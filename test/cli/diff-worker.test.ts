import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffItems, diffRuns } from "../../src/analysis/diff.js";
import { WORKER_MIN_BYTES } from "../../src/analysis/diff-record-reader.js";
import { type DiffFormat, writeDiff } from "../../src/analysis/diff-render.js";
import { resolveRun } from "../../src/analysis/load-run.js";
import { LineWriter } from "../../src/analysis/output.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runCommittedProbes } from "../fixtures/probe-runs.js";

/**
 * A long diff through the built CLI, where run B is read in a worker thread, against the same diff
 * in this process, where the sources run unbuilt and every run is read on the main thread.
 */
function cli(...args: string[]) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

async function inProcess(a: string, b: string, format: DiffFormat): Promise<string> {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  const [ra, rb] = [resolveRun(a, { runsDir: dir }), resolveRun(b, { runsDir: dir })];
  await writeDiff(
    diffRuns(diffItems(ra, false), diffItems(rb, false), { a: ra.count(), b: rb.count() }),
    { a: ra.label, b: rb.label },
    new LineWriter(stream),
    format,
  );
  return Buffer.concat(chunks).toString("utf8");
}

/** Sessions of 24 requests, as a capture writes them, varied in every field a diff reads. */
function writeRun(folder: string, base: RequestRecord, variant: "a" | "b"): void {
  mkdirSync(folder, { recursive: true });
  const lines: string[] = [];
  for (let size = 0, seq = 1; size < WORKER_MIN_BYTES + 1024 * 1024; seq++) {
    const step = (seq - 1) % 24;
    const kind = seq % 97 === 0 ? "sampling" : "loop";
    const roles = [
      "system",
      "user",
      ...Array.from({ length: step }, (_, i) => (i === 12 ? "user" : i % 2 ? "tool" : "assistant")),
    ];
    const tools = variant === "b" && step >= 2 ? [...base.tools, "a_tool1"] : base.tools;
    const prefix: RequestRecord["prefix"] =
      kind !== "loop"
        ? null
        : step === 0
          ? { sharedBytes: 0, breakAt: null, breakDetail: null }
          : variant === "b" && step === 2
            ? ({
                sharedBytes: 6402,
                breakAt: "tools",
                breakDetail: "tools[8] added: a_tool1",
                sharedTokens: 1205,
              } as RequestRecord["prefix"])
            : ({
                sharedBytes: 9000 + step * 1000,
                breakAt: null,
                breakDetail: null,
                sharedTokens: 1900 + step * 250,
              } as RequestRecord["prefix"]);
    const record: RequestRecord = {
      ...base,
      seq,
      kind,
      tools,
      roles,
      prefix,
      toolsBytes: base.toolsBytes + (tools.length - base.tools.length) * 813,
      messagesBytes: 300 + step * 900 + (seq % 7),
      bodyBytes: 9000 + step * 900,
      markers: { source: step % 3, ...(step > 20 ? { late: 1 } : {}) },
      tokens:
        seq % 501 === 0
          ? null
          : {
              encoding: "o200k_base",
              tools: 1204 + (tools.length - base.tools.length) * 153,
              system: 416,
              messages: 70 + step * 200,
              total: 1690 + step * 200,
            },
      hashes: {
        tools: `tools-${tools.length}`,
        system: "system",
        body: `${variant === "b" && step >= 2 ? "b" : "a"}-${seq}`.padEnd(64, "0"),
      },
    };
    const line = `${JSON.stringify(record)}\n`;
    lines.push(line);
    size += line.length;
  }
  writeFileSync(join(folder, "requests.jsonl"), lines.join(""));
}

const dir = mkdtempSync(join(tmpdir(), "pp-diff-worker-"));
beforeAll(async () => {
  const base = (await runCommittedProbes(["p1"]))[0]!;
  writeRun(join(dir, "long-a"), base, "a");
  writeRun(join(dir, "long-b"), base, "b");
  writeRun(join(dir, "long-corrupt"), base, "b");
  appendFileSync(join(dir, "long-corrupt", "requests.jsonl"), '{"v":1,"seq":\n');
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("diff of long runs (one read in a worker thread)", () => {
  it("prints exactly what the diff on the main thread prints, as text and as JSON", async () => {
    expect(statSync(join(dir, "long-b", "requests.jsonl")).size).toBeGreaterThan(WORKER_MIN_BYTES);
    const text = cli("diff", join(dir, "long-a"), join(dir, "long-b"));
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/breaks in tools: tools\[8\] added: a_tool1/);
    expect(text.out).toBe(await inProcess(join(dir, "long-a"), join(dir, "long-b"), "text"));
    const json = cli("diff", join(dir, "long-a"), join(dir, "long-b"), "--json");
    expect(json.out).toBe(await inProcess(join(dir, "long-a"), join(dir, "long-b"), "json"));
  }, 60_000);

  it("a corrupt line in the run the worker reads exits 2 naming file and line", () => {
    const lines = readFileSync(join(dir, "long-corrupt", "requests.jsonl"), "utf8")
      .trimEnd()
      .split("\n").length;
    const { code, err } = cli("diff", join(dir, "long-a"), join(dir, "long-corrupt"));
    expect(code).toBe(2);
    expect(err).toContain(
      `${join(dir, "long-corrupt", "requests.jsonl")}: field "line ${lines}": expected one JSON value per line`,
    );
    expect(err).not.toMatch(/\n\s+at /);
  }, 60_000);
});
