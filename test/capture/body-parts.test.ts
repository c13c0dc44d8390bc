/**
 * Bodies stored in parts (src/capture/body-parts.ts, payload-rows.ts): cut and joined again
 * character for character whatever the JSON looks like; a run's parts written once, in the folder
 * and the database, and every body read back as sent; a tampered part or a killed run; and a run
 * folder and database written by payload-probe before parts (format 3, test/fixtures/format-3-run:
 * three Anthropic requests written by 9d463de's Capture and RunDatabase, request 1 shorter than a
 * parted body, 2 and 3 longer), read as before, then migrated by a writer and read beside a new run.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { cutBody, joinBody, PART_MIN_CHARS, PARTED_MIN_CHARS } from "../../src/capture/body-parts.js";
import { Capture } from "../../src/capture/capture.js";
import { DATABASE_FORMAT } from "../../src/capture/run-format.js";
import { RunDatabase } from "../../src/capture/sqlite.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { anthropicMessages } from "../../src/providers/anthropic-messages.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const OLD_RUN = join(PROJECT_ROOT, "test/fixtures/format-3-run");

const tool = (i: number) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}: ${"reads a file and says what it holds. ".repeat(12)}`,
  input_schema: { type: "object", properties: { path: { type: "string" } } },
});

/** The bodies of a conversation that grows by a tool call and its result per request, as an agent sends them. */
function growingBodies(count: number, format: (body: object) => string = (b) => JSON.stringify(b)): string[] {
  const messages: object[] = [{ role: "user", content: "Read the files one at a time." }];
  const bodies: string[] = [];
  for (let turn = 1; turn <= count; turn++) {
    const system = [{ type: "text", text: "You are a careful coding agent. ".repeat(40) }];
    const tools = Array.from({ length: 24 }, (_, i) => tool(i));
    bodies.push(format({ model: "claude-sonnet-4-5", max_tokens: 1024, stream: true, system, tools, messages }));
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${turn}`, name: "tool_1", input: {} }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: `line "${turn}" \\ é 🙂\n`.repeat(200) }],
    });
  }
  return bodies;
}

const REPLY = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

/** A capture of `bodies` into `runs/<name>` and `runs/payload-probe.db`, as the proxy's worker records them. */
async function captureRun(
  runs: string,
  name: string,
  bodies: string[],
  replies = bodies.map(() => REPLY),
): Promise<string> {
  const dir = join(runs, name);
  const db = new RunDatabase(join(runs, "payload-probe.db"));
  const run = `${name}-20261204-213000000-${process.pid}`;
  db.startRun(run, name, dir);
  const capture = new Capture({
    run,
    probe: name,
    dir,
    db,
    markers: {},
    codecFor: () => anthropicMessages,
    tokens: false,
  });
  for (const [i, body] of bodies.entries()) {
    const request = {
      kind: "loop" as const,
      api: "anthropic-messages" as const,
      url: "http://127.0.0.1:1/v1/messages",
      body,
    };
    await capture.recordExchange(
      request,
      { body: replies[i]!, status: 200, firstByteMs: 5, ending: "complete" },
      new Date().toISOString(),
      10,
    );
  }
  capture.close();
  db.finishRun(run, "captured");
  db.close();
  return run;
}

const rows = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

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
    // 24 tools, the system block and a tool call and its result a turn, each stored once (the first
    // message is too short to be a part).
    expect(parts.length).toBe(24 + 1 + 2 * 11);
    // The first body is shorter than a parted one: stored whole, as every body was before parts.
    const requests = stored.filter((r) => r.type === "request");
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
