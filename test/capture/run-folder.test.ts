/**
 * Issue 21: a run writes beside its folder and swaps it in at close; a write that fails mid-run keeps
 * the previous run, and leftovers of runs that died are kept, never silently deleted. Real SQLite
 * files and folders; the failing write meets a real lock held by a second connection.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openCaptureRun } from "../../src/capture/capture-run.js";
import { liveRunDir } from "../../src/capture/run-folder.js";
import { StorageError } from "../../src/errors.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  removeTempDirs();
});

/** A run of p1 that closed with one line in requests.jsonl; returns that file's text. */
function finishedRun(runsDir: string, line: string): string {
  const run = openCaptureRun({ name: "p1", runsDir });
  writeFileSync(join(run.liveDir, "requests.jsonl"), `${line}\n`);
  run.close();
  return readFileSync(join(runsDir, "p1", "requests.jsonl"), "utf8");
}

describe("a run folder swapped in at close (issue 21)", () => {
  it("is written beside runs/p1 while open, and replaces it, leaving nothing else, when it closes", () => {
    const runsDir = tempDir("run-folder-");
    const previous = finishedRun(runsDir, '{"first":true}');
    const run = openCaptureRun({ name: "p1", runsDir });
    expect(run.liveDir).toBe(liveRunDir(runsDir, "p1"));
    writeFileSync(join(run.liveDir, "requests.jsonl"), '{"second":true}\n');
    expect(readFileSync(join(runsDir, "p1", "requests.jsonl"), "utf8")).toBe(previous);
    run.close("error");
    expect(readFileSync(join(runsDir, "p1", "requests.jsonl"), "utf8")).toBe('{"second":true}\n');
    expect(readdirSync(runsDir).filter((entry) => entry.startsWith(".p1."))).toEqual([]);
  });

  it("replaces the view pages written into it with the run they were made from; another page is a stranger", () => {
    const runsDir = tempDir("run-folder-");
    finishedRun(runsDir, '{"first":true}');
    // What `view p1` and `view p1 --diff p2@pi` write by default (src/cli/view.ts).
    writeFileSync(join(runsDir, "p1", "view.html"), "<!doctype html>");
    writeFileSync(join(runsDir, "p1", "view-diff-p2@pi.html"), "<!doctype html>");
    expect(finishedRun(runsDir, '{"second":true}')).toBe('{"second":true}\n');
    expect(readdirSync(join(runsDir, "p1")).sort()).toEqual([
      "payloads.jsonl",
      "requests.index.jsonl",
      "requests.jsonl",
    ]);
    writeFileSync(join(runsDir, "p1", "notes.html"), "mine");
    expect(() => openCaptureRun({ name: "p1", runsDir })).toThrow(/also holds "notes\.html"/);
    expect(readFileSync(join(runsDir, "p1", "notes.html"), "utf8")).toBe("mine");
  });

  it("keeps the previous run when a write fails mid-run, and the next run keeps the partial one", () => {
    const runsDir = tempDir("run-folder-");
    const previous = finishedRun(runsDir, '{"first":true}');
    // SQLite's wait for the lock short (5 s by default): the point is that the write fails, not when.
    process.env.PAYLOAD_PROBE_DB_WAIT = "0.1";
    closers.push(() => delete process.env.PAYLOAD_PROBE_DB_WAIT);
    const run = openCaptureRun({ name: "p1", runsDir });
    writeFileSync(join(run.liveDir, "requests.jsonl"), '{"partial":true}\n');
    const holder = new Database(join(runsDir, "payload-probe.db"));
    closers.push(() => holder.close());
    holder.exec("BEGIN IMMEDIATE");
    expect(() => run.capture.addEvent("request", {})).toThrow(StorageError);
    holder.exec("ROLLBACK");
    // The mock and the proxy close without the error in hand: the run knows its database failed.
    expect(() => run.close("captured")).toThrow(
      /SQLITE_BUSY.*this run stays in .*\.p1\.new-\d+, .* keeps the previous run/,
    );
    expect(readFileSync(join(runsDir, "p1", "requests.jsonl"), "utf8")).toBe(previous);
    expect(readFileSync(join(run.liveDir, "requests.jsonl"), "utf8")).toBe('{"partial":true}\n');

    const next = openCaptureRun({ name: "p1", runsDir });
    next.close();
    const kept = join(runsDir, `p1.interrupted-${process.pid}`);
    expect(readFileSync(join(kept, "requests.jsonl"), "utf8")).toBe('{"partial":true}\n');
  });

  it("puts back a previous run that a swap had set aside when it stopped half-way", () => {
    const runsDir = tempDir("run-folder-");
    const aside = join(runsDir, ".p1.old-999999999");
    mkdirSync(aside, { recursive: true });
    writeFileSync(join(aside, "requests.jsonl"), '{"previous":true}\n');
    const run = openCaptureRun({ name: "p1", runsDir });
    expect(existsSync(aside)).toBe(false);
    expect(readFileSync(join(runsDir, "p1", "requests.jsonl"), "utf8")).toBe('{"previous":true}\n');
    run.close();
  });

  it("does not open, nor touch any folder, when the folder to replace holds a stranger", () => {
    const runsDir = tempDir("run-folder-");
    finishedRun(runsDir, "{}");
    writeFileSync(join(runsDir, "p1", "notes.txt"), "mine");
    expect(() => openCaptureRun({ name: "p1", runsDir })).toThrow(/notes\.txt/);
    expect(existsSync(liveRunDir(runsDir, "p1"))).toBe(false);
    expect(readFileSync(join(runsDir, "p1", "notes.txt"), "utf8")).toBe("mine");
  });
});
