/**
 * The mock answers Bedrock's Converse API as Bedrock does, proved with the official client
 * (@aws-sdk/client-bedrock-runtime, with the SDK's HTTP/1.1 handler) pointed at it: `Converse` gets one JSON response, and
 * `ConverseStream` AWS EventStream frames the SDK decodes into its events; both are captured as
 * Converse records with the model from the path. The mock checks each signature with the client's
 * keys (`--sigv4`): a client signing with other keys is refused as Bedrock refuses it. A body
 * Converse does not accept gets Bedrock's error shape and takes no step of the script.
 */
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const MODEL = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0";

const KEYS = { accessKeyId: "AKIAMOCKCONVERSE0001", secretAccessKey: "made-up/secret/for/the/mock" };

let mock: MockServer;
let client: BedrockRuntimeClient;

/** A client of the mock signing with `keys`, on the SDK's HTTP/1.1 handler (its default speaks HTTP/2 only). */
const clientWith = (keys: typeof KEYS) =>
  new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: mock.baseUrl.replace(/\/v1$/, ""),
    credentials: keys,
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler(),
  });

beforeAll(async () => {
  mock = await startMockServer(
    {
      name: "converse",
      markers: {},
      script: [{ call: "read", args: { path: "notes.txt" } }, { text: "The notes say hello." }],
    },
    { runsDir: tempDir("sdk-converse-"), keepRecords: true, database: false, awsKeys: KEYS },
  );
  client = clientWith(KEYS);
});

afterAll(async () => {
  client?.destroy();
  await mock?.close();
  removeTempDirs();
});

const tools = {
  tools: [
    { toolSpec: { name: "read", description: "Reads a file.", inputSchema: { json: { type: "object" } } } },
    { cachePoint: { type: "default" as const } },
  ],
};

describe("the mock as Bedrock's Converse endpoint", () => {
  it("Converse: a tool call as one JSON response; ConverseStream: text in EventStream frames the SDK reads", async () => {
    const messages = [{ role: "user" as const, content: [{ text: "What do my notes say?" }] }];
    const first = await client.send(
      new ConverseCommand({ modelId: MODEL, system: [{ text: "You read files." }], toolConfig: tools, messages }),
    );
    expect(first.stopReason).toBe("tool_use");
    const call = first.output?.message?.content?.[0]?.toolUse;
    expect(call).toMatchObject({ name: "read", input: { path: "notes.txt" } });
    expect(first.usage?.inputTokens).toBeGreaterThan(0);

    const result = { toolResult: { toolUseId: call!.toolUseId!, content: [{ text: "hello" }] } };
    const second = await client.send(
      new ConverseStreamCommand({
        modelId: MODEL,
        toolConfig: tools,
        messages: [...messages, first.output!.message!, { role: "user", content: [result] }],
      }),
    );
    const kinds: string[] = [];
    let text = "";
    for await (const event of second.stream!) {
      kinds.push(Object.keys(event)[0]!);
      text += event.contentBlockDelta?.delta?.text ?? "";
      if (event.metadata) expect(event.metadata.usage?.outputTokens).toBeGreaterThan(0);
    }
    expect(kinds).toEqual(["messageStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);
    expect(text).toBe("The notes say hello.");

    expect(mock.records.map((r) => [r.api, r.model, r.roles, r.response?.kind, r.usage?.source])).toEqual([
      ["bedrock-converse", MODEL, ["system", "user"], "tool_calls", "estimate"],
      ["bedrock-converse", MODEL, ["user", "assistant", "tool"], "text", "estimate"],
    ]);
  });

  it("with --sigv4, a request signed with other keys is refused 403 as Bedrock refuses it, neither captured nor a step", async () => {
    const stranger = clientWith({ ...KEYS, secretAccessKey: "another/made-up/secret" });
    const refused = stranger.send(
      new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "hi" }] }] }),
    );
    await expect(refused).rejects.toMatchObject({
      name: "InvalidSignatureException",
      $metadata: { httpStatusCode: 403 },
    });
    stranger.destroy();
    expect(mock.records).toHaveLength(2);
  });

  it("a body Converse does not accept: Bedrock's error shape, no step taken", async () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: "not blocks" }] });
    const unsigned = await fetch(`${mock.baseUrl.replace(/\/v1$/, "")}/model/m/converse`, { method: "POST", body });
    expect(unsigned.status).toBe(403);
    // The client sends the bad body in place of the one it built, signed as usual (signing comes after the build step).
    const sender = clientWith(KEYS);
    sender.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body: unknown; headers: Record<string, string> };
        request.body = body;
        request.headers["content-length"] = String(Buffer.byteLength(body));
        return next(args);
      },
      { step: "build" },
    );
    const sent = sender.send(
      new ConverseCommand({ modelId: "m", messages: [{ role: "user", content: [{ text: "x" }] }] }),
    );
    await expect(sent).rejects.toMatchObject({
      message: expect.stringContaining("messages[0].content"),
      $metadata: { httpStatusCode: 400 },
    });
    sender.destroy();
    expect(mock.records).toHaveLength(2);
  });
});
