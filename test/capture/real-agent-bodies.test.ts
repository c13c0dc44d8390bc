/**
 * What real agents sent, replayed: the bodies Claude Code, Codex and the Gemini CLI sent through `record`
 * (test/fixtures/real-agents/, each file saying how it was captured) posted again, byte for byte, to
 * the mock serving the script they were captured against, and each request's record checked against
 * what the fixture says it must be: its tools by name, where its cache prefix broke and its
 * conversation's role.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl } from "./http-harness.js";

afterEach(removeTempDirs);

const DIR = join(PROJECT_ROOT, "test/fixtures/real-agents");

interface Fixture {
  about: string;
  agent: string;
  version: string;
  /** The mock's script the bodies were captured against (a path from the project's root). */
  script: string;
  requests: {
    seq: number;
    /** The request's path and query as the mock got it. */
    path: string;
    body: string;
    /**
     * The record's tools, where its cache prefix broke (null: nowhere, or its first request), and its
     * conversation's role (the Gemini CLI's routing call, sent before the turn, is a side call).
     */
    expect: { tools: string[]; breakAt: string | null; role: string };
  }[];
}

const fixtures = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .map((name) => ({ name, ...(JSON.parse(readFileSync(join(DIR, name), "utf8")) as Fixture) }));

/** The fixture's bodies posted in order to a mock serving its script; the records the mock wrote. */
async function replay(fixture: Fixture): Promise<RequestRecord[]> {
  const runs = tempDir("real-bodies-");
  const probe = await loadProbeFile(join(PROJECT_ROOT, fixture.script), PROJECT_ROOT);
  const mock = await startMockServer(
    { name: probe.name, markers: probe.markers, script: probe.model.script },
    { runsDir: runs, database: false },
  );
  try {
    const origin = new URL(mock.baseUrl).origin;
    for (const request of fixture.requests) {
      const response = await fetch(`${origin}${request.path}`, {
        method: "POST",
        body: request.body,
        headers: { "content-type": "application/json" },
      });
      expect(response.status).toBe(200);
      await response.text();
    }
  } finally {
    await mock.close();
  }
  return jsonl<RequestRecord>(join(runs, `${probe.name}-mock`, "requests.jsonl"));
}

describe("bodies real agents sent, replayed to the mock: each record as its fixture says", () => {
  it.each(fixtures.map((fixture) => [fixture.name, fixture] as const))("%s", async (_name, fixture) => {
    const records = await replay(fixture);
    const verdict = (r: RequestRecord) => ({
      tools: r.tools,
      breakAt: r.prefix?.breakAt ?? null,
      role: r.conversation?.role,
    });
    expect(records.map(verdict)).toEqual(fixture.requests.map((request) => request.expect));
  });
});

describe("Codex 0.169's default model: its tools come in an additional_tools input item", () => {
  const codex = fixtures.find((fixture) => fixture.agent === "codex")!;

  it("eleven tools by name, their bytes as tools (about 24 KB), none of them as system or messages", async () => {
    const records = await replay(codex);
    for (const [i, record] of records.entries()) {
      const body = JSON.parse(codex.requests[i]!.body) as { tools?: unknown; input: Record<string, unknown>[] };
      expect(body.tools).toBeUndefined();
      const carrier = body.input.filter((item) => item.type === "additional_tools");
      expect(carrier).toHaveLength(1);
      const toolsText = JSON.stringify(carrier[0]!.tools);
      expect(record.tools).toHaveLength(11);
      expect(record.toolsBytes).toBe(Buffer.byteLength(toolsText));
      expect(record.toolsBytes).toBeGreaterThan(23_000);
      expect(record.toolsBytes).toBeLessThan(26_000);
      // The system is the developer messages' texts, one part each, and nothing of the tools item.
      const developer = body.input.filter((item) => item.type === "message" && item.role === "developer");
      expect(record.systemParts).toHaveLength(developer.length);
      expect(record.roles).not.toContain("additional_tools");
      expect(record.roles.filter((role) => role === "developer")).toHaveLength(developer.length);
      // By our count the tools are a sixth of the request or more, and the parts add up as before.
      const tokens = record.tokens!;
      expect(tokens.tools).toBeGreaterThan(tokens.total / 6);
      expect(tokens.tools + tokens.system + tokens.messages).toBeLessThan(tokens.total);
      // Tools, system and messages are all of the body but its envelope (model, settings, keys).
      expect(record.toolsBytes + record.systemBytes + record.messagesBytes).toBeGreaterThan(record.bodyBytes * 0.9);
    }
  });
});
