/**
 * Google's Code Assist API (a Gemini CLI signed in with Google) through the proxy's Code Assist route:
 * an upstream on 127.0.0.1 answering as cloudcode-pa does, requests shaped as the CLI 0.61.0 sends
 * them (code_assist/converter.ts). Its generate methods wrap a Gemini request and reply, and each
 * becomes a full Gemini record; its other methods are side payloads; the bearer token is in no file.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { filesContaining, jsonl, writeTinyProbe } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

const TOKEN = "ya29.payload-probe-test-0123456789abcdef";

/** A Gemini response chunk as Code Assist wraps it. */
const wrapped = (text: string, finish?: string) => ({
  response: {
    candidates: [{ content: { role: "model", parts: [{ text }] }, ...(finish && { finishReason: finish }) }],
    ...(finish && { usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 3, totalTokenCount: 43 } }),
  },
  traceId: "trace-1",
});

function answer(request: IncomingMessage, response: ServerResponse): void {
  const method = /:([A-Za-z]+)$/.exec(new URL(request.url ?? "/", "http://x").pathname)?.[1];
  if (request.headers.authorization !== `Bearer ${TOKEN}`) {
    response.writeHead(401).end();
    return;
  }
  const json = (value: unknown) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
  };
  const reply: Record<string, unknown> = {
    loadCodeAssist: { currentTier: { id: "free-tier" }, cloudaicompanionProject: "p-1" },
    countTokens: { totalTokens: 3 },
    generateContent: wrapped("Done.", "STOP"),
  };
  if (method !== undefined && reply[method] !== undefined) {
    json(reply[method]);
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of [wrapped("Hello"), wrapped(" there.", "STOP")])
    response.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  response.end();
}

async function codeAssistUpstream(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => answer(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A generate body as the CLI builds it: `{model, project, user_prompt_id, request: {…}}`. */
const generateBody = {
  model: "gemini-2.5-pro",
  project: "p-1",
  user_prompt_id: "prompt-1",
  request: {
    contents: [
      { role: "user", parts: [{ text: "List the files." }] },
      { role: "model", parts: [{ functionCall: { name: "list_directory", args: { path: "." } } }] },
      { role: "user", parts: [{ functionResponse: { name: "list_directory", response: { output: "a.txt" } } }] },
    ],
    systemInstruction: { role: "user", parts: [{ text: "You are the Gemini CLI." }] },
    tools: [{ functionDeclarations: [{ name: "list_directory", parameters: { type: "object" } }] }],
    generationConfig: { temperature: 0 },
    session_id: "session-1",
  },
};

describe("capture proxy: Google's Code Assist API", () => {
  it("reads the generate methods' wrapped requests and replies as full Gemini records, the rest as side payloads", async () => {
    const runs = tempDir("code-assist-");
    const proxy = await startCaptureProxy({
      routes: [{ prefix: "/code-assist", upstream: await codeAssistUpstream() }],
      runsDir: runs,
      database: false,
    });
    closers.push(() => proxy.close());
    const post = async (method: string, body: unknown, query = "") => {
      const response = await fetch(`${proxy.origin}/code-assist/v1internal:${method}${query}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    await post("loadCodeAssist", { metadata: { ideType: "IDE_UNSPECIFIED" } });
    await post("countTokens", { request: { model: "models/gemini-2.5-pro", contents: generateBody.request.contents } });
    const streamed = await post("streamGenerateContent", generateBody, "?alt=sse");
    expect(streamed).toContain('"traceId":"trace-1"');
    await post("generateContent", generateBody);
    await proxy.close();

    const captured = join(runs, "proxy");
    const records = jsonl<RequestRecord>(join(captured, "requests.jsonl"));
    expect(records.map((record) => [record.seq, record.api, record.model])).toEqual([
      [3, "google-generative-ai", "gemini-2.5-pro"],
      [4, "google-generative-ai", "gemini-2.5-pro"],
    ]);
    const toolsJson = JSON.stringify(generateBody.request.tools);
    const messagesJson = generateBody.request.contents.map((content) => JSON.stringify(content)).join(",");
    for (const record of records)
      expect(record).toMatchObject({
        tools: ["list_directory"],
        toolsBytes: Buffer.byteLength(toolsJson),
        systemBytes: Buffer.byteLength("You are the Gemini CLI."),
        messagesBytes: Buffer.byteLength(messagesJson),
        roles: ["system", "user", "assistant", "tool"],
        status: 200,
        ending: "complete",
      });
    expect(records.map((record) => record.response?.text)).toEqual(["Hello there.", "Done."]);
    expect(records[0]!.usage).toMatchObject({ inputTokens: 40, outputTokens: 3 });
    const requests = jsonl<{ type: string; kind: string; url: string }>(join(captured, "payloads.jsonl")).filter(
      (row) => row.type === "request",
    );
    expect(requests.map((row) => row.kind)).toEqual(["side", "side", "loop", "loop"]);
    expect(filesContaining(runs, TOKEN)).toEqual([]);
  });

  it("the mock answers as Code Assist: a user on the free tier with a project, generate replies wrapped in {response, traceId}, other methods empty", async () => {
    const runs = tempDir("code-assist-mock-");
    const mock = await startMockServer((await writeTinyProbe(runs)).model, { runsDir: runs });
    closers.push(() => mock.close());
    const origin = new URL(mock.baseUrl).origin;
    const post = async (method: string, body: unknown, query = "") => {
      const response = await fetch(`${origin}/v1internal:${method}${query}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    expect(JSON.parse(await post("loadCodeAssist", {}))).toMatchObject({
      currentTier: { id: "free-tier" },
      cloudaicompanionProject: "payload-probe-mock",
    });
    expect(JSON.parse(await post("retrieveUserQuota", { project: "payload-probe-mock" }))).toEqual({});
    const streamed = await post("streamGenerateContent", generateBody, "?alt=sse");
    const chunks = streamed
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { response: { modelVersion: string }; traceId: string });
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ response: { modelVersion: "gemini-2.5-pro" }, traceId: "probe-trace" });
    const whole = JSON.parse(await post("generateContent", generateBody)) as { response: { candidates: unknown[] } };
    expect(whole.response.candidates).toHaveLength(1);
    await mock.close();
    // Only the generate methods took script steps and are records, read through the wrapper.
    const records = jsonl<RequestRecord>(join(mock.dir, "requests.jsonl"));
    expect(records.map((record) => [record.api, record.model, record.tools])).toEqual([
      ["google-generative-ai", "gemini-2.5-pro", ["list_directory"]],
      ["google-generative-ai", "gemini-2.5-pro", ["list_directory"]],
    ]);
    expect(records.map((record) => record.response?.calls)).toEqual([["read"], []]);
  });
});
