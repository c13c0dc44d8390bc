import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { RunDatabase } from "../../src/capture/sqlite.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { UserError } from "../../src/errors.js";
import { runHandProbe, twoTurnProbe } from "./hand-runs.js";

const collect = <T>(items: Iterable<T>): T[] => [...items];

describe("resolveRun", () => {
  let dir: string;
  let runsDir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pp-load-"));
    runsDir = join(dir, "runs");
    await runHandProbe(dir, "hand", twoTurnProbe("hand", "read"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a run folder by path and by probe name, one record per request", async () => {
    const byPath = collect(resolveRun(join(runsDir, "hand"), { runsDir }).records());
    const byName = resolveRun("hand", { runsDir });
    expect(byPath.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(byName.count()).toBe(3);
    expect(collect(byName.records()).map((r) => r.roles.length)).toEqual([2, 4, 6]);
  });

  it("yields only request payloads, in seq order", async () => {
    const payloads = collect(resolveRun("hand", { runsDir }).payloads());
    expect(payloads.map((p) => p.seq)).toEqual([1, 2, 3]);
    expect(JSON.parse(payloads[0]!.body).messages[0].role).toBe("system");
  });

  it("names file and line of a corrupt record", async () => {
    const broken = join(dir, "broken");
    mkdirSync(broken);
    const lines = readFileSync(join(runsDir, "hand", "requests.jsonl"), "utf8").split("\n");
    lines[1] = lines[1]!.slice(0, 40);
    writeFileSync(join(broken, "requests.jsonl"), lines.join("\n"));
    expect(() => collect(resolveRun(broken, { runsDir }).records())).toThrow(UserError);
    expect(() => collect(resolveRun(broken, { runsDir }).records())).toThrow(
      `${join(broken, "requests.jsonl")}: field "line 2"`,
    );
  });

  it("finds <probe>@N and run ids in the database, older runs from the database itself", async () => {
    const db = new RunDatabase(join(runsDir, "payload-probe.db"));
    const record = (run: string, seq: number): RequestRecord =>
      ({
        ...JSON.parse(readFileSync(join(runsDir, "hand", "requests.jsonl"), "utf8").split("\n")[0]!),
        run,
        seq,
      }) as RequestRecord;
    db.startRun("old-run", "dbprobe", join(dir, "gone"));
    db.addRequest(record("old-run", 1));
    db.addPayload(
      "old-run",
      1,
      "request",
      JSON.stringify({ type: "request", seq: 1, kind: "loop", api: "openai-completions", url: "x", body: "{}" }),
    );
    db.finishRun("old-run", "passed");
    db.startRun("new-run", "dbprobe", join(dir, "gone"));
    db.addRequest(record("new-run", 1));
    db.addRequest(record("new-run", 2));
    db.finishRun("new-run", "passed");
    db.close();
    expect(resolveRun("dbprobe@1", { runsDir }).count()).toBe(2);
    const older = resolveRun("dbprobe@2", { runsDir });
    expect(older.label).toBe("old-run");
    expect(collect(older.records()).map((r) => r.run)).toEqual(["old-run"]);
    expect(collect(older.payloads()).map((p) => p.body)).toEqual(["{}"]);
    expect(resolveRun("new-run", { runsDir }).count()).toBe(2);
    expect(() => resolveRun("dbprobe@3", { runsDir })).toThrow(/holds 2 run/);
    expect(() => resolveRun("nothing-here", { runsDir })).toThrow(UserError);
  });

  it("a run read from the database stops reading its payloads early without a busy connection (issue 35)", async () => {
    const db = new RunDatabase(join(runsDir, "payload-probe.db"));
    const payload = (seq: number) =>
      JSON.stringify({ type: "request", seq, kind: "loop", api: "openai-completions", url: "x", body: `{"n":${seq}}` });
    db.startRun("early-run", "early", join(dir, "gone-early"));
    const line = readFileSync(join(runsDir, "hand", "requests.jsonl"), "utf8").split("\n")[0]!;
    for (const seq of [1, 2, 3]) {
      db.addRequest({ ...JSON.parse(line), run: "early-run", seq } as RequestRecord);
      db.addPayload("early-run", seq, "request", payload(seq));
    }
    db.finishRun("early-run", "passed");
    db.close();
    const source = resolveRun("early-run", { runsDir });
    const first = (payloads: Iterable<{ seq: number }>) => {
      for (const p of payloads) return p.seq;
    };
    expect(first(source.lazyPayloads())).toBe(1);
    expect(first(source.payloads())).toBe(1);
  });
});
