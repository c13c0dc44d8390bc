import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Capture } from "../../src/capture/capture.js";
import { RunDatabase } from "../../src/capture/sqlite.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { createScriptedModel } from "../../src/providers/scripted-model.js";
import { jsonlObjects } from "../fixtures/jsonl-rows.js";
import { extensionTool, removeTempDirs, scriptedAgent, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

/** A capture into a temp folder's JSONL files only (no database, no tokenizer). */
function fileCapture(run: string, keepRecords?: boolean): { dir: string; capture: Capture } {
  const dir = tempDir();
  const capture = new Capture({
    run,
    probe: "capture-test",
    dir,
    db: null,
    markers: {},
    codecFor: () => openaiCompletions,
    tokens: false,
    keepRecords,
  });
  return { dir, capture };
}

const countLines = (path: string) =>
  existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;

describe("capture around the transport (docs/architecture.md)", () => {
  it("writes each request's record to requests.jsonl and SQLite before the agent executes that response's tool calls", async () => {
    const dir = tempDir();
    const db = new RunDatabase(join(dir, "runs.db"));
    db.startRun("run-1", "capture-test", dir);
    const capture = new Capture({
      run: "run-1",
      probe: "capture-test",
      dir,
      db,
      markers: { echo: { in: "messages", match: "ECHO" } },
      codecFor: () => openaiCompletions,
      tokens: false,
    });
    const seenAtExecution: { jsonl: number; sqlite: number }[] = [];
    const dbFile = join(dir, "runs.db");
    const scripted = createScriptedModel(openaiCompletions, {
      loop: [{ call: "look" }, { call: "look" }, { text: "DONE" }],
    });
    const { agent } = await scriptedAgent([], {
      transport: capture.wrap(scripted),
      extensions: [
        (api) =>
          api.registerTool(
            extensionTool("look", {
              execute: async () => {
                const reader = new Database(dbFile, { readonly: true });
                const sqlite = (reader.prepare("SELECT count(*) AS n FROM requests").get() as { n: number }).n;
                reader.close();
                seenAtExecution.push({ jsonl: countLines(join(dir, "requests.jsonl")), sqlite });
                return { content: "ECHO" };
              },
            }),
          ),
      ],
    });
    await agent.prompt("go");
    capture.close();
    db.finishRun("run-1", "captured");
    db.close();
    expect(seenAtExecution).toEqual([
      { jsonl: 1, sqlite: 1 },
      { jsonl: 2, sqlite: 2 },
    ]);
    const records = jsonlObjects<RequestRecord>(join(dir, "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.response?.kind, r.markers.echo])).toEqual([
      [1, "tool_calls", 0],
      [2, "tool_calls", 1],
      [3, "text", 2],
    ]);
    expect(records).toEqual(capture.records);
  });

  it("payloads.jsonl holds the exact wire body and the response text, and nothing that could be a credential", async () => {
    const { dir, capture } = fileCapture("run-2");
    const bodies: string[] = [];
    const scripted = createScriptedModel(openaiCompletions, { loop: [{ text: "DONE" }] });
    const { agent } = await scriptedAgent([], {
      transport: capture.wrap(async (request) => {
        bodies.push(request.body);
        return scripted(request);
      }),
    });
    await agent.prompt("hi");
    capture.close();
    const rows = jsonlObjects<Record<string, unknown>>(join(dir, "payloads.jsonl"));
    expect(rows.map((r) => Object.keys(r))).toEqual([
      ["type", "seq", "kind", "api", "url", "body"],
      ["type", "seq", "body"],
    ]);
    expect(rows[0]!.body).toBe(bodies[0]);
    expect(rows[1]).toMatchObject({ type: "response", seq: 1 });
    expect(String(rows[1]!.body)).toContain('"content":"DONE"');
    expect(readFileSync(join(dir, "payloads.jsonl"), "utf8")).not.toMatch(
      /authorization|bearer|api[-_]?key|x-api-key/i,
    );
  });

  it("keeps its records in memory for a probe run, and none when told not to (the mock and proxy serve indefinitely)", async () => {
    const kept: number[] = [];
    for (const keepRecords of [true, false]) {
      const { dir, capture } = fileCapture("run-3", keepRecords);
      const { agent } = await scriptedAgent([], {
        transport: capture.wrap(createScriptedModel(openaiCompletions, { loop: [{ call: "look" }, { text: "DONE" }] })),
      });
      await agent.prompt("hi");
      capture.close();
      expect(jsonlObjects(join(dir, "requests.jsonl"))).toHaveLength(2);
      kept.push(capture.records.length);
    }
    expect(kept).toEqual([2, 0]);
  });
});

describe("the secrets a record counts (issue 36)", () => {
  it("counts its own bodies' secrets: an agent event's, replaced before it, are not added to the next record", async () => {
    const { capture } = fileCapture("run-events");
    const key = `ghp_${"k3Y".repeat(12)}`;
    capture.addEvent("tool_result", { tool: "read", output: `GITHUB_TOKEN=${key}` });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "nothing secret" }] });
    const request = { kind: "loop" as const, api: "openai-completions" as const, url: "/v1/chat/completions", body };
    const outcome = { body: "", status: 200, firstByteMs: null, ending: "complete" as const };
    const clean = await capture.recordExchange(request, outcome, new Date().toISOString(), 1);
    expect(clean.record?.secrets).toBeUndefined();
    const withKey = { ...request, body: body.replace("nothing secret", `use ${key}`) };
    const counted = await capture.recordExchange(withKey, outcome, new Date().toISOString(), 1);
    expect(counted.record?.secrets).toEqual({ replaced: 1, kinds: { "github-token": 1 } });
    capture.close();
  });
});
