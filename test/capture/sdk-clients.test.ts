/**
 * The official OpenAI and Anthropic clients, pointed at the capture proxy in front of a slow mock,
 * for all three wire APIs, streamed and not. What each client sent and received is observed through
 * the `fetch` option both SDKs take, below the SDK and above the network.
 */
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { baseUrlFor } from "../../src/providers/models.js";
import type { WireApi } from "../../src/providers/types.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl } from "./http-harness.js";
import { expectRelayedWhole, expectSdkRecord, type Observed, observingFetch } from "./observing-fetch.js";

/** The mock waits this long before each chunk after the first: a provider that takes its time. */
const CHUNK_DELAY_MS = 120;
const SYSTEM = "You are a careful assistant. Ünïcödé keeps bytes and characters apart.";
const DEVELOPER = "Answer in one line.";

const readTool = {
  name: "read",
  description: "Reads a file of the workspace.",
  schema: { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] },
};

let runs: string;
let mock: MockServer;
let proxy: CaptureProxy;
const sent: Observed[] = [];
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  runs = tempDir("sdk-clients-");
  const script = Array.from({ length: 6 }, (_, i) =>
    i % 2 === 0 ? { call: "read", args: { path: `notes-${i}.txt` } } : { text: `Answer number ${i}.` },
  );
  mock = await startMockServer(
    { name: "sdk", markers: {}, script, modelId: "mock-model" },
    { runsDir: runs, chunkDelayMs: CHUNK_DELAY_MS },
  );
  proxy = await startCaptureProxy({ upstream: mock.baseUrl, runsDir: runs, name: "sdk-proxy" });
  const fetch = observingFetch(sent);
  openai = new OpenAI({ apiKey: "sk-test", baseURL: proxy.url, fetch, maxRetries: 0 });
  anthropic = new Anthropic({
    apiKey: "sk-ant-test",
    baseURL: baseUrlFor("anthropic-messages", proxy.url),
    fetch,
    maxRetries: 0,
  });
});

afterAll(async () => {
  await proxy?.close();
  await mock?.close();
  removeTempDirs();
});

/** The APIs these two SDKs speak; Gemini's and Bedrock's clients have their own tests (sdk-gemini, sdk-bedrock-converse). */
type OpenAiOrAnthropic = Exclude<WireApi, "google-generative-ai" | "bedrock-converse">;

/** Each API's request with a system text, a tool and a user turn, and how it reports usage to the client. */
const CALLS: Record<
  OpenAiOrAnthropic,
  (stream: boolean) => Promise<{ events: number; usage: { input: number; output: number } }>
> = {
  async "openai-completions"(stream) {
    const request = {
      model: "mock-model",
      messages: [
        { role: "system" as const, content: SYSTEM },
        { role: "user" as const, content: "Read the notes." },
      ],
      tools: [
        {
          type: "function" as const,
          function: { name: readTool.name, description: readTool.description, parameters: readTool.schema },
        },
      ],
    };
    if (!stream) {
      const done = await openai.chat.completions.create(request);
      return { events: 1, usage: { input: done.usage!.prompt_tokens, output: done.usage!.completion_tokens } };
    }
    let events = 0;
    let usage = { input: -1, output: -1 };
    for await (const chunk of await openai.chat.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    })) {
      events++;
      if (chunk.usage) usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
    }
    return { events, usage };
  },
  async "anthropic-messages"(stream) {
    const request = {
      model: "mock-model",
      max_tokens: 256,
      system: [{ type: "text" as const, text: SYSTEM, cache_control: { type: "ephemeral" as const } }],
      messages: [{ role: "user" as const, content: "Read the notes." }],
      tools: [{ name: readTool.name, description: readTool.description, input_schema: readTool.schema }],
    };
    if (!stream) {
      const done = await anthropic.messages.create(request);
      return { events: 1, usage: { input: done.usage.input_tokens, output: done.usage.output_tokens } };
    }
    let events = 0;
    const usage = { input: -1, output: -1 };
    for await (const event of await anthropic.messages.create({ ...request, stream: true })) {
      events++;
      if (event.type === "message_start") usage.input = event.message.usage.input_tokens;
      if (event.type === "message_delta") usage.output = event.usage.output_tokens;
    }
    return { events, usage };
  },
  async "openai-responses"(stream) {
    const request = {
      model: "mock-model",
      instructions: SYSTEM,
      input: [
        { role: "developer" as const, content: DEVELOPER },
        { role: "user" as const, content: "Read the notes." },
      ],
      tools: [
        {
          type: "function" as const,
          name: readTool.name,
          description: readTool.description,
          parameters: readTool.schema,
          strict: false,
        },
      ],
    };
    if (!stream) {
      const done = await openai.responses.create(request);
      return { events: 1, usage: { input: done.usage!.input_tokens, output: done.usage!.output_tokens } };
    }
    let events = 0;
    let usage = { input: -1, output: -1 };
    for await (const event of await openai.responses.create({ ...request, stream: true })) {
      events++;
      if (event.type === "response.completed")
        usage = { input: event.response.usage!.input_tokens, output: event.response.usage!.output_tokens };
    }
    return { events, usage };
  },
};

/** What each API's record must say of the request above. */
const EXPECTED: Record<OpenAiOrAnthropic, { tools: string[]; system: string; roles: string[] }> = {
  "openai-completions": { tools: ["read"], system: SYSTEM, roles: ["system", "user"] },
  "anthropic-messages": { tools: ["read"], system: SYSTEM, roles: ["system", "user"] },
  "openai-responses": { tools: ["read"], system: `${SYSTEM}\n${DEVELOPER}`, roles: ["system", "developer", "user"] },
};

/** An open run is written in its live folder (src/capture/run-folder.ts). */
const payloadsOf = (server: { liveDir: string }) =>
  jsonl<{ type: string; seq: number; body: string }>(join(server.liveDir, "payloads.jsonl"));

const cases = (["openai-completions", "anthropic-messages", "openai-responses"] as const).flatMap((api) =>
  [true, false].map((stream) => ({ api, stream })),
);

describe("official SDK clients through the proxy in front of the mock", () => {
  it.each(cases)("$api, stream $stream: bytes, chunks, timing and record", async ({ api, stream }) => {
    const before = sent.length;
    const answer = await CALLS[api](stream);
    expect(sent.length).toBe(before + 1);
    const seen = sent.at(-1)!;
    const { seq, received } = expectRelayedWhole(payloadsOf(mock), seen);

    // Streamed: the first chunk arrived while the slow upstream still had chunks to send.
    if (stream) {
      const sseEvents = received.split("\n\n").filter((e) => e.trim() !== "" && !e.includes("[DONE]")).length;
      expect(answer.events).toBe(sseEvents);
      expect(seen.received.length).toBeGreaterThan(2);
      expect(seen.endedAt - seen.received[0]!.at).toBeGreaterThan((sseEvents - 2) * CHUNK_DELAY_MS);
    }

    // Wait for the proxy's record: its capture runs after the response has been relayed.
    await untilInFolder(proxy.liveDir, () => jsonl<RequestRecord>(join(proxy.liveDir, "requests.jsonl")).length >= seq);
    expect(jsonl<RequestRecord>(join(proxy.liveDir, "requests.jsonl"))).toHaveLength(seq);
    const record = jsonl<RequestRecord>(join(proxy.liveDir, "requests.jsonl")).at(-1)!;
    expectSdkRecord(record, { api, ...EXPECTED[api] }, seen, answer.usage);
    expect(record.response?.kind).toBe(seq % 2 === 1 ? "tool_calls" : "text");
  });
});
