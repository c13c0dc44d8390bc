/**
 * The mock answers Bedrock's Converse API as Bedrock does, proved with the official client
 * (@aws-sdk/client-bedrock-runtime, with the SDK's HTTP/1.1 handler) pointed at it: `Converse` gets one JSON response, and
 * `ConverseStream` AWS EventStream frames the SDK decodes into its events; both are captured as
 * Converse records with the model from the path. A body Converse does not accept gets Bedrock's
 * error shape and takes no step of the script.
 */
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const MODEL = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0";

let mock: MockServer;
let client: BedrockRuntimeClient;

beforeAll(async () => {
  mock = await startMockServer(
    {
      name: "converse",
      markers: {},
      script: [{ call: "read", args: { path: "notes.txt" } }, { text: "The notes say hello." }],
    },
    { runsDir: tempDir("sdk-converse-"), keepRecords: true, database: false },
  );
  client = new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: mock.baseUrl.replace(/\/v1$/, ""),
    credentials: { accessKeyId: "AKIAMOCKCONVERSE0001", secretAccessKey: "made-up/secret/for/the/mock" },
    maxAttempts: 1,
    // The client's default handler speaks HTTP/2 only; the mock serves HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
  });
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

  it("a body Converse does not accept: Bedrock's error shape, no step taken", async () => {
    const response = await fetch(`${mock.baseUrl.replace(/\/v1$/, "")}/model/m/converse`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "not blocks" }] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ message: expect.stringContaining("messages[0].content") });
  });
});
