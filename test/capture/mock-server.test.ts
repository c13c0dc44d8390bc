import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import {
  type CliServer,
  chatBody,
  jsonl,
  MAIN,
  parseReply,
  postChat,
  startCli,
  writeTinyProbe,
} from "./http-harness.js";

const servers: MockServer[] = [];
const clis: CliServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(clis.splice(0).map((c) => c.stop()));
  removeTempDirs();
});

async function mock(): Promise<{ server: MockServer; runs: string }> {
  const runs = tempDir("mock-test-");
  const server = await startMockServer((await writeTinyProbe(runs)).model, { runsDir: runs });
  servers.push(server);
  return { server, runs };
}

describe("mock server", () => {
  it("answers the script's tool call, then its text, as SSE the runtime's parser reads; each request is recorded", async () => {
    const { server, runs } = await mock();
    expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    const first = await postChat(`${server.baseUrl}/chat/completions`, chatBody("read notes.txt"));
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/event-stream");
    const call = await parseReply(first);
    expect(call.message.toolCalls).toEqual([{ id: "call_1_1", name: "read", arguments: '{"path":"notes.txt"}' }]);

    const second = await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("again")));
    expect(second.message).toEqual({ role: "assistant", text: "ALL DONE", toolCalls: [] });

    // While it serves, the mock writes beside its run folder (src/capture/run-folder.ts).
    expect(server.dir).toBe(join(runs, "tiny-mock"));
    const dir = server.liveDir;
    const records = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.kind, r.model, r.roles.join(">"), r.markers.notes, r.response?.kind])).toEqual([
      [1, "loop", "mock-model", "user", 1, "tool_calls"],
      [2, "loop", "mock-model", "user", 0, "text"],
    ]);
    const payloads = jsonl(join(dir, "payloads.jsonl"));
    expect(payloads.filter((p) => p.type === "request").map((p) => p.body)).toEqual([
      chatBody("read notes.txt"),
      chatBody("again"),
    ]);

    await server.close();
    servers.length = 0;
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT probe, status, request_count FROM runs").all()).toEqual([
      { probe: "tiny-mock", status: "captured", request_count: 2 },
    ]);
    db.close();
  });

  it("stores the events told beside it with the run, secrets replaced with the markers its bodies get; none, no events file", async () => {
    const { server, runs } = await mock();
    // A GitHub token as a tool read it, then sent back to the model in the next request's body.
    const token = `ghp_${"Zq7Rt2Lm9Vx4Nb8Kc1Hd6Jf3Pw5Sy0Ga2Ue7"}`;
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody("read notes.txt")));
    server.addEvent("tool_result", { id: "call_1_1", name: "read", content: `the token is ${token}` }, 2);
    await parseReply(await postChat(`${server.baseUrl}/chat/completions`, chatBody(`the file says ${token}`)));
    await server.close();
    servers.length = 0;

    const lookup = { runsDir: runs };
    const fromFolder = [...resolveRun(server.dir, lookup).events()];
    expect([...resolveRun(server.runId, lookup).events()]).toEqual(fromFolder);
    expect(fromFolder).toEqual([
      {
        idx: 0,
        seq: 2,
        type: "tool_result",
        id: "call_1_1",
        name: "read",
        content: expect.stringMatching(/^the token is \[redacted:github/),
      },
    ]);
    const marker = /\[redacted:[^\]]+\]/.exec(fromFolder[0]!.content as string)![0];
    const bodies = [...resolveRun(server.dir, lookup).payloads()].map((p) => p.body);
    expect(bodies[1]).toContain(marker);
    expect(JSON.stringify(fromFolder) + bodies.join("")).not.toContain(token);

    const quiet = await mock();
    await parseReply(await postChat(`${quiet.server.baseUrl}/chat/completions`, chatBody("read notes.txt")));
    await quiet.server.close();
    servers.length = 0;
    expect(readdirSync(quiet.server.dir).sort()).toEqual(["payloads.jsonl", "requests.index.jsonl", "requests.jsonl"]);
  });

  it("an exhausted script answers 500 naming the request, and keeps serving; unknown paths and methods are 404", async () => {
    const { server } = await mock();
    for (const text of ["one", "two"])
      expect((await postChat(`${server.baseUrl}/chat/completions`, chatBody(text))).status).toBe(200);
    for (const n of [3, 4]) {
      const exhausted = await postChat(`${server.baseUrl}/chat/completions`, chatBody("more"));
      expect(exhausted.status).toBe(500);
      expect(((await exhausted.json()) as { error: { message: string } }).error.message).toMatch(
        new RegExp(`request ${n} was made but the probe's model.script has only 2 step`),
      );
    }
    const unknown = await fetch(`${server.baseUrl}/embeddings`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
      /no such endpoint: POST \/v1\/embeddings \(the mock serves POST \/v1\/chat\/completions, POST \/v1\/messages, POST \/v1\/responses, GET \/v1\/models, POST \/v1beta\/models\/\{model\}:generateContent, :streamGenerateContent, :countTokens \(also under \/v1\), GET \/v1beta\/models, POST \/model\/\{modelId\}\/converse, \/converse-stream\)/,
    );
    expect((await fetch(`${server.baseUrl}/messages`)).status).toBe(404);
    expect((await postChat(`${server.baseUrl.replace(/\/v1$/, "")}/chat/completions`, chatBody("x"))).status).toBe(404);
    expect(jsonl(join(server.liveDir, "requests.jsonl"))).toHaveLength(2);
  });

  it("invalid bodies get a 400 in the OpenAI error shape naming what is wrong, take no script step, and are kept as side payloads", async () => {
    const { server, runs } = await mock();
    const url = `${server.baseUrl}/chat/completions`;
    const cases: [string, string | null, string, RegExp][] = [
      ["null", null, "invalid_type", /expected a JSON object, got null/],
      ["[]", null, "invalid_type", /expected a JSON object, got an array/],
      ['"x"', null, "invalid_type", /expected a JSON object, got a string/],
      ["{oops", null, "invalid_json", /not valid JSON/],
      ['{"model":"m"}', "messages", "missing_required_parameter", /Missing required parameter: 'messages'/],
      [chatBody("hi", { tools: "notalist" }), "tools", "invalid_type", /expected an array of tools, got a string/],
      [chatBody("hi", { tools: [null] }), "tools[0]", "invalid_type", /'tools\[0\]': expected an object, got null/],
      [chatBody("hi", { model: 7 }), "model", "invalid_type", /'model': expected a string, got a number/],
      [
        '{"messages":[{"content":"no role"}]}',
        "messages[0].role",
        "missing_required_parameter",
        /Missing required parameter: 'messages\[0\]\.role'/,
      ],
    ];
    for (const [body, param, code, message] of cases) {
      const response = await postChat(url, body);
      expect(response.status, body).toBe(400);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(Object.keys(error).sort()).toEqual(["code", "message", "param", "type"]);
      expect(error).toMatchObject({ type: "invalid_request_error", param, code });
      expect(error.message).toMatch(message);
    }
    // The script's first step is still there for the first valid request.
    const reply = await parseReply(await postChat(url, chatBody("read notes.txt")));
    expect(reply.message.toolCalls.map((c) => c.name)).toEqual(["read"]);
    await server.close();
    servers.length = 0;
    const payloads = jsonl(join(runs, "tiny-mock", "payloads.jsonl")).filter((p) => p.type === "request");
    expect(payloads.map((p) => p.kind)).toEqual([...cases.map(() => "side"), "loop"]);
    expect(payloads.map((p) => p.body)).toEqual([...cases.map(([body]) => body), chatBody("read notes.txt")]);
    expect(payloads[0]!.unreadable).toBe("Invalid type for 'body': expected a JSON object, got null.");
    expect(jsonl<RequestRecord>(join(runs, "tiny-mock", "requests.jsonl")).map((r) => r.seq)).toEqual([
      cases.length + 1,
    ]);
  });

  it("a second mock on a port in use exits 2 and leaves the live mock's run folder untouched", async () => {
    const runs = tempDir("mock-busy-");
    const { file } = await writeTinyProbe(runs);
    const cli = await startCli(["mock", file, "--runs", runs]);
    clis.push(cli);
    expect((await postChat(`${cli.url}/chat/completions`, chatBody("one"))).status).toBe(200);
    const port = new URL(cli.url).port;
    const second = spawnSync(process.execPath, [MAIN, "mock", file, "--runs", runs, "--port", port], {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(second.status).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    // The live mock's folder, beside runs/tiny-mock until it stops.
    const live = readdirSync(runs).find((entry) => entry.startsWith(".tiny-mock.new-"))!;
    expect(jsonl(join(runs, live, "requests.jsonl"))).toHaveLength(1);
    expect((await postChat(`${cli.url}/chat/completions`, chatBody("two"))).status).toBe(200);
    expect(await cli.stop()).toBe(0);
    clis.length = 0;
    expect(jsonl<RequestRecord>(join(runs, "tiny-mock", "requests.jsonl")).map((r) => r.seq)).toEqual([1, 2]);
  });

  it("the CLI prints LISTENING first, serves and records, and finishes the run on SIGTERM (exit 0)", async () => {
    const runs = tempDir("mock-cli-");
    const { file } = await writeTinyProbe(runs);
    const cli = await startCli(["mock", file, "--runs", runs, "--port", "0"]);
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const reply = await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("read notes.txt")));
    expect(reply.message.toolCalls.map((c) => c.name)).toEqual(["read"]);
    expect(await cli.stop()).toBe(0);
    // The proxy's live line per request and its summary, under the mock's name.
    expect(cli.stderr().split("\n")).toEqual([
      expect.stringMatching(/^#1 openai-completions \S+ tools \d+ tokens \d+ status 200 c1 main new conversation$/),
      expect.stringMatching(
        /^mock: 1 request\(s\): 1 recorded \(openai-completions 1\), 0 side; status 200×1; \d+ tokens/,
      ),
      "",
    ]);
    expect(jsonl(join(runs, "tiny-mock", "requests.jsonl"))).toHaveLength(1);
    const db = new Database(join(runs, "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT status FROM runs").all()).toEqual([{ status: "captured" }]);
    db.close();
  });

  it("--help exits 0; a missing probe exits 2 naming the file; a bad port exits 2; --sigv4 without keys exits 2", () => {
    const env = { ...process.env };
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [MAIN, "mock", ...args], {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
        timeout: 120_000,
        env,
      });
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: payload-probe mock <probe>/);
    const missing = run("no-such-probe");
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/mock: no probe "no-such-probe" in probes\/\n/);
    expect(run("p1", "--port", "http").status).toBe(2);
    const keyless = run("p1", "--sigv4");
    expect([keyless.status, keyless.stderr]).toEqual([
      2,
      "payload-probe: mock: --sigv4 expected AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment\n",
    ]);
  });
});
