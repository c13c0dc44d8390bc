import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { UserError } from "../../src/errors.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import type { Probe } from "../../src/probes/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { readWireLog } from "../../src/stub-mcp/wire-log.js";
import { jsonlObjects } from "../fixtures/jsonl-rows.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const loadP1 = (): Promise<Probe> => loadProbeFile(join(PROJECT_ROOT, "probes/p1.yaml"), PROJECT_ROOT);
/** p1 in its own runs folder and workspace, so it collides with nothing; the stub is a real child process. */
const runIsolated = (probe: Probe) => {
  const base = tempDir("p1-test-");
  return runProbe(probe, { runsDir: join(base, "runs"), workspaceRoot: join(base, "ws") });
};

interface WireMessage {
  role: string;
  content: unknown;
}

describe("p1 end to end: MCP proxy mode (experiments.md p1, issue 2)", () => {
  it("reproduces the documented run and every expectation holds", async () => {
    const result = await runIsolated(await loadP1());
    expect(result.failures).toEqual([]);

    const records = jsonlObjects<RequestRecord>(join(result.dir, "requests.jsonl"));
    expect(records).toHaveLength(4);
    expect(records.map((r) => r.tools)).toEqual(Array(4).fill(["read", "mcp"]));
    expect(new Set(records.map((r) => r.toolsBytes)).size).toBe(1);
    expect(records.map((r) => r.roles.join(">"))).toEqual([
      "system>user",
      "system>user>assistant>tool",
      "system>user>assistant>tool>assistant>tool",
      "system>user>assistant>tool>assistant>tool>assistant>tool",
    ]);
    expect(records.map((r) => r.markers.schema)).toEqual([0, 1, 1, 1]);
    expect(records.map((r) => r.markers.result)).toEqual([0, 0, 0, 1]);

    // The tool results as the model saw them, in the last request's wire body.
    const payloads = jsonlObjects<{ type: string; seq: number; body: string }>(join(result.dir, "payloads.jsonl"));
    const last = JSON.parse(payloads.find((p) => p.type === "request" && p.seq === 4)!.body) as {
      messages: WireMessage[];
    };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => m.content as string);
    expect(results[1]).toMatch(/^Tool "stub_echo" not found\. .*Did you mean: probe-stub_stub_echo$/);
    expect(results[2]).toBe("STUB_ECHO:PROBE-77");

    // The stub heard the handshake, the listing and one call, and nothing before request 3's answer ran.
    const wire = readWireLog(join(result.dir, "mcp-wire.jsonl"));
    expect(wire.map((line) => (line.message as { method: string }).method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
    ]);
    expect((wire[3]!.message as { params: unknown }).params).toMatchObject({
      name: "stub_echo",
      arguments: { value: "PROBE-77" },
    });
    expect(wire.every((line) => line.ts >= records[2]!.ts)).toBe(true);
    const events = jsonlObjects<{ idx: number; type: string; id?: string }>(join(result.dir, "events.jsonl"));
    const thirdCall = events.find((e) => e.type === "tool_call" && e.id === "call_3_1")!;
    const connect = events.find((e) => e.type === "mcp_connect")!;
    expect(connect.idx).toBeGreaterThan(thirdCall.idx);

    // The run is also in the database, next to the run folder: its events read back the same from both.
    const db = new Database(join(result.dir, "..", "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT status, request_count FROM runs WHERE id = ?").get(result.runId)).toEqual({
      status: "passed",
      request_count: 4,
    });
    db.close();
    const lookup = { runsDir: join(result.dir, "..") };
    const fromDatabase = [...resolveRun(result.runId, lookup).events()];
    expect(fromDatabase).toEqual([...resolveRun(result.dir, lookup).events()]);
    expect(fromDatabase).toEqual(events);
  });

  it("without a database, events.jsonl still numbers its events 0, 1, 2, … (idx once advanced only with one)", async () => {
    const base = tempDir("p1-nodb-");
    const result = await runProbe(await loadP1(), {
      runsDir: join(base, "runs"),
      workspaceRoot: join(base, "ws"),
      database: false,
    });
    const events = jsonlObjects<{ idx: number }>(join(result.dir, "events.jsonl"));
    expect(events.length).toBeGreaterThan(3);
    expect(events.map((e) => e.idx)).toEqual(events.map((_, i) => i));
  });

  it("an expectation that disagrees with the run fails, naming the request and the field", async () => {
    const probe = await loadP1();
    probe.expect.each["markers.schema"] = [0, 0, 1, 1];
    probe.expect.wire["probe-stub"]!.firstMessageBefore = 3;
    const result = await runIsolated(probe);
    expect(result.failures).toEqual([
      "request 2: markers.schema expected 0, got 1",
      "wire probe-stub: expected its first message between request 2 and request 3, it came at wire line 1",
    ]);
  });

  it("a server command that does not exist is an input error naming the server and the config file", async () => {
    const probe = await loadProbeFile(join(PROJECT_ROOT, "fixtures/bad/missing-command.yaml"), PROJECT_ROOT);
    const failure = await runIsolated(probe).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UserError);
    const config = join(PROJECT_ROOT, "fixtures/bad/mcp-missing-command.json");
    expect((failure as UserError).file).toBe(config);
    expect((failure as UserError).field).toBe("mcpServers.ghost.command");
    expect((failure as UserError).message).toContain("spawn payload-probe-no-such-command ENOENT");
  });
});
