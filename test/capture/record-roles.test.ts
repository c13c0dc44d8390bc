/**
 * A long session's records store their roles once where they repeat (src/capture/record-roles.ts):
 * a long list that shares most of an earlier record's is a reference to it, one hop to a record
 * written whole; every reader (the folder's records and summaries, the database's records) gives the
 * whole list, also when it starts reading partway; short lists, a probe's, stay whole.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { recordLines } from "../../src/analysis/record-file.js";
import { BASE_USES_MAX, REFERENCED_ROLES_MIN } from "../../src/capture/record-roles.js";
import { captureRun, growingBodies, manyMessageBodies, rows } from "../fixtures/long-capture.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

/** The spec's roles of a Messages body: system first, when it has one, then each message's. */
function rolesOf(body: string): string[] {
  const { system, messages } = JSON.parse(body) as { system?: unknown; messages: { role: string }[] };
  return [...(system ? ["system"] : []), ...messages.map((m) => m.role)];
}

describe("a long session's roles, stored once where they repeat", () => {
  it("are references to a record written whole, read back whole from the folder, its index and the database", async () => {
    const runs = tempDir();
    // A reference keeps at least half of its list: 200 roles and two more a request stay within that.
    const bodies = manyMessageBodies(80, 200, 2);
    const run = await captureRun(runs, "long", bodies);
    const requests = join(runs, "long", "requests.jsonl");
    const stored = rows(requests);
    const whole = stored.filter((r) => Array.isArray(r.roles));
    // A base serves BASE_USES_MAX records, then one is written whole again.
    expect(whole.map((r) => r.seq)).toEqual([1, 2 + BASE_USES_MAX]);
    for (const r of stored.filter((r) => !Array.isArray(r.roles)))
      expect(r.roles).toMatchObject({ base: (r.seq as number) < 2 + BASE_USES_MAX ? 1 : 2 + BASE_USES_MAX });

    const expected = bodies.map(rolesOf);
    expect(expected[0]!.length).toBeGreaterThanOrEqual(REFERENCED_ROLES_MIN);
    for (const spec of [join(runs, "long"), run]) {
      const source = resolveRun(spec, { runsDir: runs });
      expect([...source.records()].map((r) => r.roles)).toEqual(expected);
      expect([...source.summaries()].map((r) => r.roles)).toEqual(expected);
    }
    // The roles stored against what they would take written whole in every record.
    const bytes = (lists: unknown[]) => lists.reduce((n: number, roles) => n + JSON.stringify(roles).length, 0);
    expect(bytes(stored.map((r) => r.roles))).toBeLessThan(bytes(expected) * 0.3);

    // The database keeps the same lines in `record`, and its `roles` column no longer repeats them.
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    const dbRows = db.prepare("SELECT roles, record FROM requests WHERE run_id = ? ORDER BY seq").all(run) as {
      roles: string;
      record: string;
    }[];
    db.close();
    expect(dbRows.map((r) => r.record)).toEqual(readFileSync(requests, "utf8").split("\n").filter(Boolean));
    expect(new Set(dbRows.map((r) => r.roles))).toEqual(new Set([""]));
  });

  it("a reader starting partway reads a base by its offset; a broken reference or a torn last line are said", async () => {
    const runs = tempDir();
    const bodies = manyMessageBodies(12, 100, 2);
    await captureRun(runs, "long", bodies);
    const path = join(runs, "long", "requests.jsonl");
    const text = readFileSync(path, "utf8");
    const lines = text.split("\n").filter(Boolean);
    const offset = Buffer.byteLength(lines.slice(0, 5).join("\n")) + 1;
    const partway = [...recordLines(path, { start: { offset, line: 5 } })];
    expect(partway.map((r) => r.roles)).toEqual(bodies.slice(5).map(rolesOf));

    // A base read by its offset must be the record the reference names.
    const elsewhere = lines[7]!.replace(/"end":\d+/, '"end":3');
    writeFileSync(path, `${[...lines.slice(0, 7), elsewhere].join("\n")}\n`);
    expect(() => [...recordLines(path, { start: { offset, line: 5 } })]).toThrow(
      /requests\.jsonl: field "record 8": its roles refer to record 1 \(line ending at byte 3\), which has no \d+ roles written whole/,
    );
    const missing = lines[7]!.replace(/"base":1,/, '"base":9,');
    writeFileSync(path, `${[...lines.slice(0, 7), missing].join("\n")}\n`);
    expect(() => [...recordLines(path)]).toThrow(/field "record 8": its roles refer to record 9 /);

    writeFileSync(path, text.slice(0, text.length - 40));
    const warnings: string[] = [];
    const source = resolveRun(join(runs, "long"), { runsDir: runs, warn: (m) => warnings.push(m) });
    expect([...source.records()].map((r) => r.roles)).toEqual(bodies.slice(0, 11).map(rolesOf));
    expect(warnings.join()).toContain("is cut off");
  });

  it("short lists stay whole: such records are written as before", async () => {
    const runs = tempDir();
    const bodies = growingBodies(4);
    await captureRun(runs, "short", bodies);
    const stored = rows(join(runs, "short", "requests.jsonl"));
    // The system, then each message (a tool result's turn is a `tool` role).
    expect(stored.map((r) => (r.roles as string[]).length)).toEqual(bodies.map((b) => rolesOf(b).length));
  });
});
