/**
 * Google's official client, @google/genai, pointed at the capture proxy in front of a slow mock,
 * streamed (SSE, the only stream the SDK asks for) and not, as sdk-clients.test.ts does for the
 * other three APIs; and Gemini's JSON-array stream, its query key and a stream cut before its
 * final chunk, over plain HTTP. What the client sent and received is observed through the
 * `httpOptions.fetch` the SDK takes.
 */
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { filesContaining, jsonl } from "./http-harness.js";
import { expectRelayedWhole, expectSdkRecord, type Observed, observingFetch } from "./observing-fetch.js";

/** The mock waits this long before each chunk after the first: a provider that takes its time. */
const CHUNK_DELAY_MS = 120;
const SYSTEM = "You are a careful assistant. Ünïcödé keeps bytes and characters apart.";
/** Shaped as a Google API key, so the secret scanner would know it too; it must reach no file. */
const API_KEY = "AIzaSyTEST0000000000000000000000000000000";

let runs: string;
let mock: MockServer;
let proxy: CaptureProxy;
const sent: Observed[] = [];
let ai: GoogleGenAI;

beforeAll(async () => {
  runs = tempDir("sdk-gemini-");
  // Odd turns answer with text (streamed in pieces), even ones with a call.
  const script = Array.from({ length: 6 }, (_, i) =>
    i % 2 === 0
      ? { text: `Answer number ${i + 1}, in a few words.` }
      : { call: "read", args: { path: `notes-${i}.txt` } },
  );
  mock = await startMockServer(
    { name: "gemini", markers: {}, script, modelId: "mock-model" },
    { runsDir: runs, chunkDelayMs: CHUNK_DELAY_MS },
  );
  proxy = await startCaptureProxy({
    routes: [{ prefix: "/gemini", upstream: mock.baseUrl.replace(/\/v1$/, "") }],
    runsDir: runs,
    name: "gemini-proxy",
  });
  const fetch = observingFetch(sent);
  ai = new GoogleGenAI({ apiKey: API_KEY, httpOptions: { baseUrl: `${proxy.origin}/gemini`, fetch } });
});

afterAll(async () => {
  await proxy?.close();
  await mock?.close();
  removeTempDirs();
});

const request = {
  model: "mock-model",
  contents: [{ role: "user", parts: [{ text: "Read the notes." }] }],
  config: {
    systemInstruction: SYSTEM,
    tools: [
      {
        functionDeclarations: [
          {
            name: "read",
            description: "Reads a file of the workspace.",
            parametersJsonSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
          },
        ],
      },
    ],
  },
};

/** One call through the SDK: the chunks it handed over, and the usage it reported. */
async function call(stream: boolean): Promise<{ events: number; usage: { input: number; output: number } }> {
  const usageOf = (metadata: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined) => ({
    input: metadata?.promptTokenCount ?? -1,
    output: metadata?.candidatesTokenCount ?? -1,
  });
  if (!stream) return { events: 1, usage: usageOf((await ai.models.generateContent(request)).usageMetadata) };
  let events = 0;
  let usage = { input: -1, output: -1 };
  for await (const chunk of await ai.models.generateContentStream(request)) {
    events++;
    if (chunk.usageMetadata) usage = usageOf(chunk.usageMetadata);
  }
  return { events, usage };
}

/** An open run is written in its live folder (src/capture/run-folder.ts). */
const payloadsOf = (server: { liveDir: string }) =>
  jsonl<{ type: string; seq: number; body: string; url: string }>(join(server.liveDir, "payloads.jsonl"));
const recordsOf = (server: { liveDir: string }) => jsonl<RequestRecord>(join(server.liveDir, "requests.jsonl"));

describe("@google/genai through the proxy in front of the mock", () => {
  // The streamed turn is a text, which Gemini streams in pieces; the unstreamed one a call.
  it.each([true, false])("stream %s: bytes, chunks, timing and record", async (stream) => {
    const before = sent.length;
    const answer = await call(stream);
    expect(sent.length).toBe(before + 1);
    const seen = sent.at(-1)!;
    expect(seen.url).toContain(stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    const { seq, received } = expectRelayedWhole(payloadsOf(mock), seen);

    // Streamed: every SSE event reached the SDK, the first while the slow upstream still had more to send.
    if (stream) {
      const sseEvents = received.split("\n\n").filter((e) => e.trim() !== "").length;
      expect(answer.events).toBe(sseEvents);
      expect(sseEvents).toBeGreaterThan(1);
      expect(seen.endedAt - seen.received[0]!.at).toBeGreaterThan((sseEvents - 1.5) * CHUNK_DELAY_MS);
    }

    await untilInFolder(proxy.liveDir, () => recordsOf(proxy).length >= seq);
    expect(recordsOf(proxy)).toHaveLength(seq);
    const record = recordsOf(proxy).at(-1)!;
    const want = { api: "google-generative-ai", tools: ["read"], system: SYSTEM, roles: ["system", "user"] };
    expectSdkRecord(record, want, seen, answer.usage);
    expect(record.model).toBe("mock-model");
    expect(record.response?.kind).toBe(seq % 2 === 1 ? "text" : "tool_calls");
  });

  it("the JSON-array stream with ?key=: relayed chunk by chunk, recorded whole, the key stored nowhere", async () => {
    const url = `${proxy.origin}/gemini/v1/models/mock-model:streamGenerateContent?key=${API_KEY}`;
    const response = await fetch(url, { method: "POST", body: JSON.stringify({ contents: request.contents }) });
    expect(response.headers.get("content-type")).toBe("application/json");
    const pieces: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) pieces.push(decoder.decode(chunk, { stream: true }));
    const objects = JSON.parse(pieces.join("")) as { candidates: { finishReason?: string }[] }[];
    expect(pieces.length).toBeGreaterThan(1);
    expect(objects.at(-1)!.candidates[0]!.finishReason).toBe("STOP");
    const seq = payloadsOf(mock).filter((p) => p.type === "request").length;
    await untilInFolder(proxy.liveDir, () => recordsOf(proxy).length >= seq);
    expect(recordsOf(proxy)).toHaveLength(seq);
    const record = recordsOf(proxy).at(-1)!;
    expect(record).toMatchObject({ api: "google-generative-ai", model: "mock-model", ending: "complete" });
    expect(record.response?.text).toBe(`Answer number ${seq}, in a few words.`);
    const stored = payloadsOf(proxy).find((p) => p.seq === record.seq && p.type === "request")!;
    expect(stored.url).toContain("key=");
    expect(stored.url).not.toContain(API_KEY);
    expect(filesContaining(runs, API_KEY)).toEqual([]);
  });
});

describe("the mock's Gemini endpoints besides a turn", () => {
  it("countTokens and the model list answer without a script step; a bad body is a 400 in Google's shape", async () => {
    const origin = mock.baseUrl.replace(/\/v1$/, "");
    const steps = payloadsOf(mock).filter((p) => p.type === "request").length;
    const counted = await fetch(`${origin}/v1beta/models/mock-model:countTokens`, {
      method: "POST",
      body: JSON.stringify({ contents: request.contents }),
    });
    expect(((await counted.json()) as { totalTokens: number }).totalTokens).toBeGreaterThan(0);
    const listed = (await (await fetch(`${origin}/v1beta/models`)).json()) as { models: { name: string }[] };
    expect(listed.models.map((m) => m.name)).toEqual(["models/mock-model"]);
    const bad = await fetch(`${origin}/v1beta/models/mock-model:generateContent`, {
      method: "POST",
      body: JSON.stringify({ contents: "hello" }),
    });
    expect(bad.status).toBe(400);
    const error = ((await bad.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(String(error.message)).toContain("contents");
    // The 400 is kept as a side payload; the next turn still gets the script's next step.
    const next = await ai.models.generateContent({ model: "mock-model", contents: "Go on." });
    expect(next.candidates?.[0]?.content?.parts?.length).toBeGreaterThan(0);
    const requests = payloadsOf(mock).filter((p) => p.type === "request");
    expect(requests.length).toBe(steps + 2);
    const records = recordsOf(mock);
    expect(records.at(-1)!.seq).toBe(steps + 2);
  });
});

describe("a Gemini stream cut before its final chunk", () => {
  const piece = JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "Half of " }] } }] });
  // What an upstream sends before it stops: one chunk without finishReason, as SSE or as the array's start.
  it.each([
    { form: "SSE", query: "?alt=sse", contentType: "text/event-stream", sent: `data: ${piece}\n\n` },
    { form: "JSON array", query: "", contentType: "application/json", sent: `[${piece}` },
  ])("$form: is recorded as truncated, with the text that came", async ({ query, contentType, sent }) => {
    const cut = await serveHttp(
      async (_request, response: ServerResponse) => {
        response.writeHead(200, { "content-type": contentType });
        response.end(sent);
      },
      (error) => ({ status: 500, message: error.message }),
      0,
      "127.0.0.1",
    );
    const cutRuns = tempDir("sdk-gemini-cut-");
    const cutProxy = await startCaptureProxy({ upstream: `http://127.0.0.1:${cut.port}`, runsDir: cutRuns });
    try {
      const response = await fetch(`${cutProxy.url}/v1beta/models/m:streamGenerateContent${query}`, {
        method: "POST",
        body: JSON.stringify({ contents: request.contents }),
      });
      expect(await response.text()).toBe(sent);
      await untilInFolder(cutProxy.liveDir, () => recordsOf(cutProxy).length >= 1);
      expect(recordsOf(cutProxy)).toHaveLength(1);
      const record = recordsOf(cutProxy)[0]!;
      expect(record.ending).toBe("truncated");
      expect(record.error).toContain("finishReason");
      expect(record.response?.text).toBe("Half of ");
    } finally {
      await cutProxy.close();
      await cut.close();
    }
  });
});
