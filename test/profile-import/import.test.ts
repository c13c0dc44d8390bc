import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import { loadProbeFile, resolveProbePath } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { importProfile } from "../../src/profile-import/import-run.js";
import { writeImportedProfile } from "../../src/profile-import/write.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
import { copySharedRuns, type SharedRun, sharedRun } from "../fixtures/shared-runs.js";
import { userErrorOf } from "../fixtures/user-error.js";

const base = mkdtempSync(join(tmpdir(), "pp-profile-import-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/**
 * Runs a committed probe into `<base>/<label>/runs`, optionally with a profile file in place of its
 * own; its workspace is `<base>/<workspace>/ws`.
 */
async function run(name: string, label: string, profile?: string, workspace = label): Promise<string> {
  const probe = await loadProbeFile(resolveProbePath(name, PROJECT_ROOT), PROJECT_ROOT);
  const result = await runProbe(profile ? { ...probe, agent: { ...probe.agent, profile } } : probe, {
    runsDir: join(base, label, "runs"),
    workspaceRoot: join(base, workspace, "ws"),
    database: false,
  });
  return result.dir;
}

interface SentRequest {
  api: WireApi;
  body: string;
}

function requestsOf(runDir: string): SentRequest[] {
  return readFileSync(join(runDir, "payloads.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SentRequest & { type: string })
    .filter((row) => row.type === "request");
}

/** Imports a profile from a run folder into a file of its own, the way the CLI does. */
function importFrom(
  runDir: string,
  file: string,
): { file: string; summary: ReturnType<typeof importProfile>["summary"] } {
  const { profile, summary } = importProfile([resolveRun(runDir, { runsDir: join(base, "none") })], "test");
  const path = join(base, file);
  writeImportedProfile(profile, path, true);
  return { file: path, summary };
}

/** toolsChars and systemChars as the capture computes them, from the wire body alone. */
function sizes({ api, body }: SentRequest): { toolsChars: number; systemChars: number } {
  const d = codecFor(api).dissect(body);
  return { toolsChars: (d.toolsJson ?? "").length, systemChars: d.systemParts.join("\n").length };
}

describe("profile import round trip: the imported profile sends the same bodies (issue 11)", () => {
  // p1: tools and the MCP gateway; p3: a skills block; p4: skill expansion; the other two: the other wire APIs.
  for (const name of ["p1", "p3", "p4", "p1-anthropic", "p1-responses"]) {
    it(`${name}: every request body is identical, also in another workspace (no path is frozen)`, async () => {
      const { dir: first, workspaceRoot: rootA } = await sharedRun(name);
      const { file, summary } = importFrom(first, `${name}.json`);
      expect(summary.requests).toBe(requestsOf(first).length);
      const again = await run(name, `${name}-imported`, file);
      const rootB = join(base, `${name}-imported`, "ws");
      const bodies = (dir: string, root: string) => requestsOf(dir).map((r) => r.body.replaceAll(root, "<ws>"));
      expect(bodies(again, rootB)).toEqual(bodies(first, rootA));
      expect(bodies(first, rootA).length).toBeGreaterThan(0);
    });
  }
});

describe("profile import from a capture the mock made (an agent outside this process)", () => {
  it("p1's bodies sent to `mock` over HTTP, imported from the mock's run, are sent again unchanged", async () => {
    const sent = requestsOf(await run("p1", "mock-agent"));
    const probe = await loadProbeFile(resolveProbePath("p1", PROJECT_ROOT), PROJECT_ROOT);
    const runsDir = join(base, "mock-capture");
    const mock = await startMockServer(
      { name: probe.name, markers: probe.markers, script: probe.model.script },
      { runsDir, database: false },
    );
    try {
      for (const { body } of sent) {
        const reply = await fetch(`${mock.baseUrl}/chat/completions`, { method: "POST", body });
        expect(reply.status).toBe(200);
        await reply.text();
      }
    } finally {
      await mock.close();
    }
    const { file } = importFrom(mock.dir, "from-mock.json");
    const again = requestsOf(await run("p1", "mock-rerun", file, "mock-agent"));
    expect(again.map((r) => r.body)).toEqual(sent.map((r) => r.body));
  });
});

describe("profile import from several runs of one agent", () => {
  it("p1 (tools, gateway), p3 (skills block) and p4 imported together: one profile sends all three runs' bodies", async () => {
    const names = ["p1", "p3", "p4"];
    const first: SharedRun[] = [];
    for (const name of names) first.push(await sharedRun(name));
    const { profile, summary } = importProfile(
      first.map(({ dir }) => resolveRun(dir, { runsDir: join(base, "none") })),
      "trio",
    );
    expect(summary.skillsPreamble).toBe(true);
    const file = join(base, "trio.json");
    writeImportedProfile(profile, file, true);
    for (const [i, name] of names.entries()) {
      const again = await run(name, "trio-imported", file);
      const bodies = (dir: string, root: string) => requestsOf(dir).map((r) => r.body.replaceAll(root, "<ws>"));
      expect(bodies(again, join(base, "trio-imported", "ws"))).toEqual(bodies(first[i]!.dir, first[i]!.workspaceRoot));
    }
  });
});

/** Another agent's wording: every request of a capture rewritten the same way, as a real agent would send it. */
function rewordP3(body: string): string {
  const wire = JSON.parse(body) as {
    messages: { role: string; content: unknown }[];
    tools: {
      function: { description: string; parameters: { properties: Record<string, Record<string, unknown>> } };
    }[];
  };
  const read = wire.tools[0]!.function;
  read.description = "Opens one file and hands back its lines.";
  read.parameters.properties.path!.description = "Which file";
  // A structure the runtime does not build: the import must keep this schema as sent.
  read.parameters.properties.offset!.minimum = 1;
  read.parameters.properties.limit!.description =
    "Stop after this many lines; by default the whole file up to the size cap is returned.";
  const system = wire.messages[0]!;
  system.content = (system.content as string)
    .replace(/^[^\n]*/, "You are an agent for a terminal; be careful and complete.")
    .replace("Available tools:\n- read: Read file contents", "Tools at hand:\n- read: Opens a file")
    .replace("Guidelines:\n", "House rules:\n")
    .replace(/\n- Keep your answers short\./, "\n- Answer in full sentences, but never more than needed.")
    .replace(
      /\n\n([^\n]*)\n([^\n]*)\n([^\n]*)\n\n<available_skills>/,
      "\n\nSkills you may use:\nOpen one with read when it fits.\nPaths inside are relative to the skill.\n\n<available_skills>",
    )
    .replace("Current working directory: ", "Your working directory is: ");
  return JSON.stringify(wire);
}

interface GatewaySchema {
  properties: Record<string, { anyOf?: unknown[] }>;
}

function rewordP1Gateway(body: string): string {
  const wire = JSON.parse(body) as {
    tools: { function: { name: string; description: string; parameters: GatewaySchema } }[];
  };
  const mcp = wire.tools.find((t) => t.function.name === "mcp")!.function;
  mcp.description = mcp.description
    .replace(/^[^\n]*/, "One tool for every MCP server: look tools up, then call them here.")
    .replace(/\n\n[^\n]*$/, "\n\nOnly one mode runs per call.");
  // Another adapter version's structure (as pi-mcp-adapter 2.32.1 sends it): each `args` alternative
  // described, no `target`. The import must keep this schema as sent.
  const { target: _target, ...properties } = mcp.parameters.properties;
  properties.args!.anyOf = [
    { type: "string", description: "The arguments, JSON-encoded" },
    { type: "object", properties: {}, additionalProperties: true, description: "The arguments as an object" },
  ];
  mcp.parameters.properties = properties;
  return JSON.stringify(wire);
}

describe("profile import from a hand-altered capture reproduces its sizes exactly", () => {
  for (const [name, reword, wording] of [
    ["p3", rewordP3, ["You are an agent", "Tools at hand:", "House rules:", "Skills you may use:", "Your working"]],
    ["p1", rewordP1Gateway, ["One tool for every MCP server", "Only one mode runs per call.", "JSON-encoded"]],
  ] as const) {
    it(`${name}: other tool descriptions and prompt wording → the same toolsChars and systemChars per request`, async () => {
      const captured = await run(name, `${name}-altered-capture`);
      const path = join(captured, "payloads.jsonl");
      const rows = readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      for (const row of rows) if (row.type === "request") row.body = reword(row.body);
      writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
      const altered = requestsOf(captured);
      for (const text of wording) expect(altered.every((r) => r.body.includes(text))).toBe(true);
      expect(altered.map((r) => r.body)).not.toEqual(requestsOf((await sharedRun(name)).dir).map((r) => r.body));

      const { file } = importFrom(captured, `${name}-altered.json`);
      // The capture's own workspace, so the paths in the bodies are the capture's too.
      const again = requestsOf(await run(name, `${name}-altered-rerun`, file, `${name}-altered-capture`));
      expect(again.map(sizes)).toEqual(altered.map(sizes));
      expect(again.map((r) => r.body)).toEqual(altered.map((r) => r.body));
    });
  }
});

describe("profile import refuses input it cannot use", () => {
  it("a folder that is not a run names itself", () => {
    const error = userErrorOf(() => resolveRun(join(base, "nowhere"), { runsDir: join(base, "none") }));
    expect(error.message).toContain(`no run "${join(base, "nowhere")}"`);
  });

  it("a run with no agent requests names the run", async () => {
    await copySharedRuns(["p1"], join(base, "empty-source", "runs"));
    const source = join(base, "empty-source", "runs", "p1");
    writeFileSync(join(source, "payloads.jsonl"), "");
    const error = userErrorOf(() => importProfile([resolveRun(source, { runsDir: join(base, "none") })], "x"));
    expect(error.message).toBe(
      `run ${source} has no agent requests (loop requests with a wire body): nothing to import`,
    );
  });
});
