/**
 * `--cache-diagnostics` on the command line (the real CLI proxy in front of the mock, the official
 * Anthropic client), and the chain's edge cases: an OpenAI request's own prompt_cache_options merged
 * into, a compressed body left alone, a non-2xx answer teaching nothing.
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { DiagnosticsChain } from "../../src/capture/diagnostics-chain.js";
import { serveHttp } from "../../src/capture/http.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { baseUrlFor } from "../../src/providers/models.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl, startCli } from "./http-harness.js";

afterEach(removeTempDirs);

describe("proxy --cache-diagnostics (the CLI)", () => {
  it("asks on the agent's behalf: the second turn's record holds the provider's hit and the added field", async () => {
    const runs = tempDir("chain-cli-");
    const script = [{ text: "one" }, { text: "two" }];
    const mock = await startMockServer({ name: "m", markers: {}, script }, { runsDir: runs, database: false });
    const proxy = await startCli([
      "proxy",
      "--upstream",
      mock.baseUrl.replace(/\/v1$/, ""),
      "--cache-diagnostics",
      "--runs",
      runs,
      "--name",
      "chained",
      "--no-db",
    ]);
    try {
      const client = new Anthropic({
        apiKey: "sk-ant-x",
        baseURL: baseUrlFor("anthropic-messages", proxy.url),
        maxRetries: 0,
      });
      const turn = { model: "scripted", max_tokens: 10, system: "S" };
      const first = await client.messages.create({ ...turn, messages: [{ role: "user", content: "hi" }] });
      const second = await client.messages.create({
        ...turn,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "one" },
          { role: "user", content: "and?" },
        ],
      });
      expect(second.diagnostics).toBeNull();
      expect(await proxy.stop()).toBe(0);
      // The live line of each exchange (stderr) carries the provider's word beside the prefix.
      expect(proxy.stderr()).toMatch(/#2 anthropic-messages .*; provider \(anthropic\): hit, agrees/);
      const records = jsonl<RequestRecord>(join(runs, "chained", "requests.jsonl"));
      expect(records.map((r) => r.cacheDiagnostics?.verdict)).toEqual(["first-turn", "hit"]);
      expect(records[1]!.cacheDiagnostics).toMatchObject({
        comparedWith: first.id,
        added: ["diagnostics.previous_message_id"],
      });
    } finally {
      await proxy.stop();
      await mock.close();
    }
  });
});

describe("the chain's edge cases", () => {
  const responsesBody = (extra: Record<string, unknown> = {}) =>
    Buffer.from(JSON.stringify({ model: "m", input: [{ role: "user", content: "hi" }], ...extra }));
  const answered = (chain: DiagnosticsChain, body: Buffer, id: string) =>
    chain.answered(chain.chain("openai-responses", body, undefined)!, {
      status: 200,
      bytes: Buffer.from(JSON.stringify({ id, object: "response" })),
    });

  it("merges into the agent's own prompt_cache_options, keeping its ttl", async () => {
    const chain = new DiagnosticsChain();
    await answered(chain, responsesBody(), "resp_1");
    const chained = chain.chain("openai-responses", responsesBody({ prompt_cache_options: { ttl: "30m" } }), undefined);
    expect(JSON.parse(chained!.amended!.bytes.toString()).prompt_cache_options).toEqual({
      ttl: "30m",
      comparison_response_id: "resp_1",
    });
  });

  it("adds before the closing brace, leaving the agent's bytes as they were", async () => {
    const chain = new DiagnosticsChain();
    await answered(chain, responsesBody(), "resp_9");
    const spaced = Buffer.from('{ "model": "m",\n  "input": [{"role": "user", "content": "hi"}] }\n');
    const amended = chain.chain("openai-responses", spaced, undefined)!.amended!.bytes.toString();
    expect(amended).toBe(
      '{ "model": "m",\n  "input": [{"role": "user", "content": "hi"}] ,"prompt_cache_options":{"comparison_response_id":"resp_9"}}\n',
    );
  });

  it("leaves a compressed body, another API and an error answer alone", async () => {
    const chain = new DiagnosticsChain();
    expect(chain.chain("openai-responses", gzipSync(responsesBody()), "gzip")).toBeNull();
    expect(chain.chain("openai-completions", responsesBody(), undefined)).toBeNull();
    const first = chain.chain("openai-responses", responsesBody(), undefined)!;
    await chain.answered(first, { status: 500, bytes: Buffer.from('{"id":"resp_err"}') });
    expect(chain.chain("openai-responses", responsesBody(), undefined)!.amended).toBeUndefined();
  });
});

describe("bodies --cache-diagnostics cannot extend safely go as sent (issue 35)", () => {
  /** An upstream that keeps each body and its content-length, answering with the next Responses id. */
  async function upstreamKeeping() {
    const received: { body: string; length: string | undefined }[] = [];
    const service = await serveHttp(
      async (incoming, response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of incoming) chunks.push(chunk as Buffer);
        received.push({ body: Buffer.concat(chunks).toString("utf8"), length: incoming.headers["content-length"] });
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: `resp_${received.length}`, object: "response", output: [] }));
      },
      (error) => ({ status: 500, message: error.message }),
      0,
      "127.0.0.1",
    );
    return { url: `http://127.0.0.1:${service.port}/v1`, received, close: () => service.close() };
  }

  const input = '"input":[{"role":"user","content":"hi"}]';
  const bodies = {
    first: `{"model":"m",${input}}`,
    array: `[{"model":"m",${input}}]`,
    string: '"just a string"',
    null: "null",
    optionsNotObject: `{"model":"m",${input},"prompt_cache_options":"30m"}`,
    optionsTwice: `{"model":"m",${input},"prompt_cache_options":{"ttl":"30m"},"prompt_cache_options":{}}`,
    idThere: `{"model":"m",${input},"prompt_cache_options":{"comparison_response_id":null}}`,
    modelTwice: `{"model":"m","model":"m",${input}}`,
    options: `{ "model": "m", ${input}, "prompt_cache_options": { "ttl": "30m" } }`,
  };

  it("leaves non-objects and unsafe fields byte for byte, says why in the record, and inserts into the rest", async () => {
    const upstream = await upstreamKeeping();
    const runs = tempDir("chain-unsafe-");
    const proxy = await startCaptureProxy({
      upstream: upstream.url,
      runsDir: runs,
      database: false,
      cacheDiagnostics: true,
    });
    try {
      for (const body of Object.values(bodies))
        await fetch(`${proxy.url}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
    } finally {
      await proxy.close();
      await upstream.close();
    }
    const sent = upstream.received.map((r) => r.body);
    expect(sent.slice(0, 7)).toEqual(Object.values(bodies).slice(0, 7));
    // A duplicated key elsewhere survives: the field is inserted as text, nothing re-serialized.
    expect(sent[7]).toBe(
      `{"model":"m","model":"m",${input},"prompt_cache_options":{"comparison_response_id":"resp_7"}}`,
    );
    expect(sent[8]).toBe(
      `{ "model": "m", ${input}, "prompt_cache_options": { "ttl": "30m" ,"comparison_response_id":"resp_8"} }`,
    );
    for (const { body, length } of upstream.received) expect(length).toBe(String(Buffer.byteLength(body)));
    const records = jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl"));
    const left = Object.fromEntries(records.map((r) => [r.seq, r.cacheDiagnostics?.leftAsSent]));
    expect(left).toEqual({
      1: undefined,
      5: "prompt_cache_options.comparison_response_id was not added: the body's prompt_cache_options is not an object",
      6: "prompt_cache_options.comparison_response_id was not added: the body names prompt_cache_options 2 times",
      7: "prompt_cache_options.comparison_response_id was not added: the body's prompt_cache_options already has comparison_response_id",
      8: undefined,
      9: undefined,
    });
    expect(records.find((r) => r.seq === 5)?.cacheDiagnostics?.verdict).toBe("unavailable");
  });

  it("an Anthropic body whose diagnostics is not an object goes as sent", () => {
    const chain = new DiagnosticsChain();
    const body = Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}],"diagnostics":null}');
    expect(chain.chain("anthropic-messages", body, undefined)).toMatchObject({
      leftAsSent: "diagnostics.previous_message_id was not added: the body already has a diagnostics member",
    });
    const empty = chain.chain("anthropic-messages", Buffer.from("{ }"), undefined)!;
    expect(empty.amended!.bytes.toString()).toBe('{ "diagnostics":{"previous_message_id":null}}');
  });
});
