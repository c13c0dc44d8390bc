/**
 * Bodies stored in parts (src/capture/body-parts.ts, payload-rows.ts): cut and joined again
 * character for character whatever the JSON looks like; a run's parts written once, in the folder
 * and the database, and every body read back as sent; a tampered part or a killed run; and a run
 * folder and database written by payload-probe before parts (format 3, test/fixtures/format-3-run:
 * three Anthropic requests written by 9d463de's Capture and RunDatabase, request 1 shorter than a
 * parted body, 2 and 3 longer), read as before, then migrated by a writer and read beside a new run;
 * a long conversation's part lists stored in chunks, and a run from before chunks (format 4,
 * test/fixtures/format-4-run) read as before.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type PartedBody, resolveRun } from "../../src/analysis/load-run.js";
import { cutBody, joinBody, PART_MIN_CHARS, PARTED_MIN_CHARS, partHash } from "../../src/capture/body-parts.js";
import { CHUNK_MAX_ENTRIES, chunkLists, joinLists } from "../../src/capture/part-lists.js";
import { DATABASE_FORMAT } from "../../src/capture/run-format.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { captureRun, growingBodies, manyMessageBodies, REPLY, rows } from "../fixtures/long-capture.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const OLD_RUN = join(PROJECT_ROOT, "test/fixtures/format-3-run");
/** Written by b8f3e9a's Capture and RunDatabase (format 4): parts, no chunks; request 1 whole, 2 and 3 parted. */
const FORMAT_4_RUN = join(PROJECT_ROOT, "test/fixtures/format-4-run");

describe("a body cut into parts and joined again", () => {
  it("gives back every character of any JSON: whitespace, CRLF, key order, escapes, brackets inside strings", () => {
    const pretty = growingBodies(3, (b) => JSON.stringify(b, null, "\t").replaceAll("\n", "\r\n"))[2]!;
    const odd = `  {"messages" : [ ${JSON.stringify({ s: `]}[{"\\\\\\"${"x".repeat(PART_MIN_CHARS)}`, u: "\u2028\ud83d\ude42" })} ,\n\t1e3 , true, null, "${"y".repeat(PART_MIN_CHARS)}" ], "model":"m", "tools":[], "pad": "${"z".repeat(PARTED_MIN_CHARS)}" } `;
    for (const body of [...growingBodies(3).slice(1), pretty, odd]) {
      const cut = cutBody(body);
      expect(cut).not.toBeNull();
      expect(joinBody(cut!.skeleton, cut!.parts)).toBe(body);
      expect(cut!.skeleton.length).toBe(cut!.parts.length + 1);
      // Each part is one whole element: JSON by itself.
      for (const part of cut!.parts) expect(() => JSON.parse(part)).not.toThrow();
    }
    const oddParts = cutBody(odd)!.parts;
    expect(oddParts.map((p) => JSON.parse(p))).toEqual([JSON.parse(odd).messages[0], JSON.parse(odd).messages[4]]);
  });

  it("declines what is short, not an object, or cut off, and joins any text it does cut, mutated at random", () => {
    const body = growingBodies(2)[1]!;
    expect(cutBody(body.slice(0, PARTED_MIN_CHARS - 1))).toBeNull();
    expect(cutBody(`[${body}]`)).toBeNull();
    expect(cutBody(`data: ${body}`)).toBeNull();
    expect(cutBody(body.slice(0, -1))).toBeNull();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let cutCount = 0;
    for (let i = 0; i < 300; i++) {
      const at = random(body.length);
      const mutated = body.slice(0, at) + '"]}[{,\\ '[random(8)] + body.slice(at + random(3));
      const cut = cutBody(mutated);
      if (cut) {
        cutCount++;
        expect(joinBody(cut.skeleton, cut.parts)).toBe(mutated);
      }
    }
    expect(cutCount).toBeGreaterThan(0);
  });
});

describe("a run's bodies stored in parts", () => {
  it("writes each part once, folder and database, and reads every body back as sent, by folder and by run id", async () => {
    const runs = tempDir();
    const bodies = growingBodies(12);
    const run = await captureRun(runs, "long", bodies);
    const payloads = join(runs, "long", "payloads.jsonl");
    const stored = rows(payloads);
    const parts = stored.filter((r) => r.type === "part");
    expect(new Set(parts.map((p) => p.hash)).size).toBe(parts.length);
    // The first body is shorter than a parted one: stored whole, as every body was before parts.
    const requests = stored.filter((r) => r.type === "request");
    const chunks = new Set(requests.flatMap((r) => (r.chunks as string[] | undefined) ?? []));
    // 24 tools, the system block and a tool call and its result a turn, each stored once (the first
    // message is too short to be a part), besides the chunks of the part lists.
    expect(parts.filter((p) => !chunks.has(p.hash as string)).length).toBe(24 + 1 + 2 * 11);
    expect(requests.map((r) => typeof r.body)).toEqual(["string", ...bodies.slice(1).map(() => "undefined")]);
    expect(requests.slice(1).every((r) => typeof r.bodyHash === "string")).toBe(true);
    const sent = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
    expect(statSync(payloads).size).toBeLessThan(sent * 0.25);

    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(DATABASE_FORMAT);
    expect((db.prepare("SELECT count(*) AS n FROM parts WHERE run_id = ?").get(run) as { n: number }).n).toBe(
      parts.length,
    );
    db.close();

    for (const spec of [join(runs, "long"), run]) {
      const source = resolveRun(spec, { runsDir: runs });
      expect([...source.payloads()].map((p) => p.body)).toEqual(bodies);
      expect([...source.lazyPayloads()].map((p) => p.load().body)).toEqual(bodies);
      expect(source.payload(7, "request")?.body).toBe(bodies[6]);
      expect(source.payload(7, "response")?.body).toBe(REPLY);
      expect([...(source.responses?.() ?? [])].length).toBe(12);
    }
  });

  it("a part changed or missing in the database is named with the file, run and request", async () => {
    const runs = tempDir();
    const run = await captureRun(runs, "long", growingBodies(3));
    const path = join(runs, "payload-probe.db");
    const raw = new Database(path);
    const read = () => [...resolveRun(run, { runsDir: runs }).payloads()];
    raw.prepare("UPDATE parts SET text = replace(text, 'careful', 'CAREFUL') WHERE run_id = ?").run(run);
    expect(read).toThrow(`${path}: run ${run}, request 2: its body joined from its parts does not match its bodyHash`);
    raw.prepare("DELETE FROM parts WHERE run_id = ? AND text LIKE '%CAREFUL%'").run(run);
    raw.close();
    expect(read).toThrow(/request 2: part [\w-]{22} of its body is not in the run/);
  });

  it("a part changed on disk is named with its file and line; a run killed mid-row reads up to its last whole row", async () => {
    const runs = tempDir();
    const bodies = growingBodies(4);
    await captureRun(runs, "long", bodies);
    const payloads = join(runs, "long", "payloads.jsonl");
    const text = readFileSync(payloads, "utf8");

    const torn = text.slice(0, text.lastIndexOf('{"type":"request"') + 200);
    writeFileSync(payloads, torn);
    const warnings: string[] = [];
    const source = resolveRun(join(runs, "long"), { runsDir: runs, warn: (m) => warnings.push(m) });
    expect([...source.payloads()].map((p) => p.body)).toEqual(bodies.slice(0, 3));
    expect(warnings.join()).toContain("is cut off");

    const lines = text.split("\n");
    const part = lines.findIndex((l) => l.startsWith('{"type":"part"') && l.includes("reads a file and says"));
    lines[part] = lines[part]!.replace("reads a file and says", "reads a file and SAYS");
    writeFileSync(payloads, lines.join("\n"));
    // The first row that names the part: the request after it.
    const line = lines.findIndex((l, i) => i > part && l.startsWith('{"type":"request"')) + 1;
    expect(() => [...resolveRun(join(runs, "long"), { runsDir: runs }).payloads()]).toThrow(
      `payloads.jsonl: field "line ${line}": its body joined from its parts does not match its bodyHash`,
    );
  });
});

describe("a run folder and database from before parts (format 3)", () => {
  it("read as before; a writer migrates the database to the current format and both runs read whole", async () => {
    const runs = tempDir();
    cpSync(join(OLD_RUN, "long-old"), join(runs, "long-old"), { recursive: true });
    copyFileSync(join(OLD_RUN, "payload-probe.db"), join(runs, "payload-probe.db"));
    const oldDb = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(oldDb.pragma("user_version", { simple: true })).toBe(3);
    oldDb.close();
    const oldBodies = rows(join(runs, "long-old", "payloads.jsonl"))
      .filter((r) => r.type === "request")
      .map((r) => r.body as string);
    expect(oldBodies.map((b) => b.length > PARTED_MIN_CHARS)).toEqual([false, true, true]);
    const oldRun = "long-old-20261204-212900000-1";
    const readOld = () =>
      [join(runs, "long-old"), oldRun].map((spec) =>
        [...resolveRun(spec, { runsDir: runs }).payloads()].map((p) => p.body),
      );
    expect(readOld()).toEqual([oldBodies, oldBodies]);

    const bodies = growingBodies(3);
    const newRun = await captureRun(runs, "long-new", bodies);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(DATABASE_FORMAT);
    db.close();
    expect(readOld()).toEqual([oldBodies, oldBodies]);
    expect([...resolveRun(newRun, { runsDir: runs }).payloads()].map((p) => p.body)).toEqual(bodies);
    expect(rows(join(runs, "long-new", "payloads.jsonl")).some((r) => r.type === "part")).toBe(true);
  });

  it("compare-run-files finds the old run and the same bodies captured now, in parts, identical apart from times", async () => {
    const runs = tempDir();
    const old = rows(join(OLD_RUN, "long-old", "payloads.jsonl"));
    const bodiesOf = (type: string) => old.filter((r) => r.type === type).map((r) => r.body as string);
    // The old capture's bodies, replies, url and timing: only the storage differs.
    await captureRun(runs, "long-old", bodiesOf("request"), bodiesOf("response"));
    expect(rows(join(runs, "long-old", "payloads.jsonl")).filter((r) => r.type === "part").length).toBeGreaterThan(0);
    const compare = spawnSync(
      process.execPath,
      [join(PROJECT_ROOT, "scripts/compare-run-files.mjs"), OLD_RUN, runs, "long-old"],
      { encoding: "utf8" },
    );
    expect(compare.stdout).toContain("long-old: identical apart from times");
    expect(compare.status).toBe(0);
  });
});

const listBytes = (row: Record<string, unknown>) => JSON.stringify([row.chunks ?? [], row.skeleton, row.parts]).length;

describe("a long conversation's part lists, cut into chunks", () => {
  it("cuts where the content says and after CHUNK_MAX_ENTRIES, the same way for a list and its extension", () => {
    const entries = (n: number, hash: (i: number) => string) => ({
      skeleton: Array.from({ length: n + 1 }, (_, i) => `,${i}`),
      parts: Array.from({ length: n }, (_, i) => hash(i)),
    });
    // No hash begins with "A": only the forced cuts.
    const forced = chunkLists(entries(600, (i) => `h${i}`.padEnd(22, "x")));
    expect(forced.chunks.length).toBe(2);
    expect(forced.tail.parts.length).toBe(600 - 2 * CHUNK_MAX_ENTRIES);
    expect(forced.tail.skeleton.length).toBe(forced.tail.parts.length + 1);
    const texts = new Map(forced.chunks.map((c) => [c.hash, c.text]));
    const fail = (what: string) => new Error(what);
    expect(joinLists([...texts.keys()], forced.tail, (h) => texts.get(h), fail)).toEqual(
      entries(600, (i) => `h${i}`.padEnd(22, "x")),
    );
    // Real hashes: a longer list keeps every chunk of the shorter one.
    const real = (n: number) => entries(n, (i) => partHash(`part ${i}`));
    const short = chunkLists(real(500)).chunks.map((c) => c.hash);
    const long = chunkLists(real(700)).chunks.map((c) => c.hash);
    expect(short.length).toBeGreaterThan(2);
    expect(long.slice(0, short.length)).toEqual(short);
    expect(() => joinLists(["missing"], forced.tail, () => undefined, fail)).toThrow(
      "chunk missing of its part list is not in the run",
    );
    expect(() => joinLists(["bad"], forced.tail, () => '{"skeleton":[","],"parts":[]}', fail)).toThrow(
      "chunk bad of its part list is not a chunk",
    );
  });

  it("rows list their chunks and what follows; every body and its stored lists read back as sent, folder and database alike", async () => {
    const runs = tempDir();
    const bodies = manyMessageBodies(30);
    const run = await captureRun(runs, "long", bodies);
    const payloads = join(runs, "long", "payloads.jsonl");
    const stored = rows(payloads);
    const requests = stored.filter((r) => r.type === "request");
    // Each chunk is written once, before the first row that names it.
    const written = new Map<string, number>();
    for (const [i, r] of stored.entries()) if (r.type === "part") written.set(r.hash as string, i);
    expect(written.size).toBe(stored.filter((r) => r.type === "part").length);
    for (const [i, r] of stored.entries())
      for (const hash of (r.chunks as string[] | undefined) ?? []) expect(written.get(hash)).toBeLessThan(i);
    expect(requests.every((r) => (r.chunks as string[]).length > 0)).toBe(true);
    // The lists the rows keep are a small share of the whole lists every row named before chunks (a
    // row keeps about 64 entries after its last chunk: the share falls as the conversation grows).
    const whole = bodies.reduce((n, body) => {
      const cut = cutBody(body)!;
      return n + listBytes({ skeleton: cut.skeleton, parts: cut.parts.map(partHash) });
    }, 0);
    const kept = requests.reduce((n, r) => n + listBytes(r), 0);
    expect(kept).toBeLessThan(whole * 0.25);

    // The database holds the same rows.
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    const dbRows = db.prepare("SELECT data FROM payloads WHERE run_id = ? ORDER BY rowid").all(run) as {
      data: string;
    }[];
    db.close();
    expect(dbRows.map((r) => JSON.parse(r.data))).toEqual(stored.filter((r) => r.type !== "part"));

    for (const spec of [join(runs, "long"), run]) {
      const source = resolveRun(spec, { runsDir: runs });
      expect([...source.payloads()].map((p) => p.body)).toEqual(bodies);
      expect(source.payload(30, "request")?.body).toBe(bodies[29]);
    }
    // What a part-by-part reader sees: the whole lists, as a body stored before chunks listed them.
    const lazy = [...resolveRun(join(runs, "long"), { runsDir: runs }).lazyPayloads()];
    for (const [i, payload] of lazy.entries()) {
      const body = payload.stored().body as PartedBody;
      const cut = cutBody(bodies[i]!)!;
      expect(body.skeleton).toEqual(cut.skeleton);
      expect(body.parts).toEqual(cut.parts.map(partHash));
      expect(joinBody(body.skeleton, body.parts.map(body.partText))).toBe(bodies[i]);
    }
  });

  it("a run killed while writing a request's chunks or its row reads every request before it", async () => {
    const runs = tempDir();
    const bodies = manyMessageBodies(12, 200, 40);
    await captureRun(runs, "long", bodies);
    const payloads = join(runs, "long", "payloads.jsonl");
    const text = readFileSync(payloads, "utf8");
    const lastRequest = text.lastIndexOf('{"type":"request"');
    const lastChunk = text.lastIndexOf('{"type":"part"', text.lastIndexOf('","text":"{\\"skeleton\\"'));
    expect(lastChunk).toBeGreaterThan(0);
    const requestsBefore = (end: number) => text.slice(0, end).split('{"type":"request"').length - 1;
    for (const end of [lastRequest + 100, lastChunk + 60]) {
      writeFileSync(payloads, text.slice(0, end));
      const warnings: string[] = [];
      const source = resolveRun(join(runs, "long"), { runsDir: runs, warn: (m) => warnings.push(m) });
      const whole = requestsBefore(end) - (end === lastRequest + 100 ? 1 : 0);
      expect(whole).toBeGreaterThan(0);
      expect([...source.payloads()].map((p) => p.body)).toEqual(bodies.slice(0, whole));
      expect(warnings.join()).toContain("is cut off");
    }
  });

  it("a chunk missing from the database is named with the file, run and request", async () => {
    const runs = tempDir();
    const run = await captureRun(runs, "long", manyMessageBodies(2));
    const path = join(runs, "payload-probe.db");
    const raw = new Database(path);
    raw.prepare(`DELETE FROM parts WHERE run_id = ? AND text LIKE '{"skeleton":%'`).run(run);
    raw.close();
    expect(() => [...resolveRun(run, { runsDir: runs }).payloads()]).toThrow(
      new RegExp(`${path}: run ${run}, request 1: chunk [\\w-]{22} of its part list is not in the run`),
    );
  });
});

describe("a run folder and database from before chunks (format 4)", () => {
  it("read as before; a writer migrates the database and both runs read whole; compare-run-files matches a run captured now", async () => {
    const runs = tempDir();
    cpSync(join(FORMAT_4_RUN, "long-old"), join(runs, "long-old"), { recursive: true });
    copyFileSync(join(FORMAT_4_RUN, "payload-probe.db"), join(runs, "payload-probe.db"));
    const version = () => {
      const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
      const format = db.pragma("user_version", { simple: true });
      db.close();
      return format;
    };
    expect(version()).toBe(4);
    const old = rows(join(runs, "long-old", "payloads.jsonl"));
    expect(old.filter((r) => r.type === "request").map((r) => typeof r.bodyHash)).toEqual([
      "undefined",
      "string",
      "string",
    ]);
    const oldRun = "long-old-20261205-030000000-1";
    const readOld = () =>
      [join(runs, "long-old"), oldRun].map((spec) =>
        [...resolveRun(spec, { runsDir: runs }).payloads()].map((p) => p.body),
      );
    const oldBodies = readOld()[0]!;
    expect(oldBodies.map((b) => b.length > PARTED_MIN_CHARS)).toEqual([false, true, true]);
    expect(readOld()).toEqual([oldBodies, oldBodies]);

    const newRun = await captureRun(runs, "long-new", manyMessageBodies(2));
    expect(version()).toBe(DATABASE_FORMAT);
    expect(readOld()).toEqual([oldBodies, oldBodies]);
    expect([...resolveRun(newRun, { runsDir: runs }).payloads()].map((p) => p.body)).toEqual(manyMessageBodies(2));

    // The old run's bodies captured by this build compare equal to the old folder's.
    const again = tempDir();
    const bodiesOf = (type: string) =>
      type === "request" ? oldBodies : old.filter((r) => r.type === type).map((r) => r.body as string);
    await captureRun(again, "long-old", bodiesOf("request"), bodiesOf("response"));
    const compare = spawnSync(
      process.execPath,
      [join(PROJECT_ROOT, "scripts/compare-run-files.mjs"), FORMAT_4_RUN, again, "long-old"],
      { encoding: "utf8" },
    );
    expect(compare.stdout).toContain("long-old: identical apart from times");
    expect(compare.status).toBe(0);
  });
});
