import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CreateMessageRequest, CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { readWireLog } from "../../src/stub-mcp/wire-log.js";
import { cleanupStubs, connectStdio, methodsOf, ROOT, runToExit, spawnHttp, tempDir, tempWireLog } from "./harness.js";

afterEach(cleanupStubs);

const fixture = (name: string) => `fixtures/stub-servers/${name}.json`;

function declaredTools(name: string): unknown[] {
  const parsed = JSON.parse(readFileSync(join(ROOT, fixture(name)), "utf8")) as { tools: Record<string, unknown>[] };
  return parsed.tools.map(({ name: toolName, description, inputSchema }) => ({
    name: toolName,
    description,
    inputSchema,
  }));
}

const text = (value: string, isError = false) => ({ content: [{ type: "text", text: value }], isError });

/** A client able to sample, answering from the prompt it was given; records every sampling request. */
function samplingClient(seen: CreateMessageRequest["params"][]) {
  return {
    options: { capabilities: { sampling: {} } },
    configure: (client: Client) =>
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        seen.push(request.params);
        const prompt = request.params.messages[0]?.content;
        const asked = prompt && "type" in prompt && prompt.type === "text" ? prompt.text : "?";
        return { model: "scripted", role: "assistant", content: { type: "text", text: `ANSWER(${asked})` } };
      }),
  };
}

describe("configurable-stub: the two-server fixtures", () => {
  it("server a lists its tools with the fixture's schemas unchanged and fills the result templates", async () => {
    const wireLog = tempWireLog();
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("a")], wireLog);
    expect(client.getServerVersion()?.name).toBe("a");
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    expect((await client.listTools()).tools).toEqual(declaredTools("a"));
    expect(await client.callTool({ name: "tool1", arguments: { value: "first" } })).toEqual(text("A_TOOL1:first"));
    expect(await client.callTool({ name: "tool2", arguments: { id: 5 } })).toEqual(text("A_TOOL2:5"));
    const lines = readWireLog(wireLog);
    expect(methodsOf(lines)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
      "tools/call",
    ]);
    expect(lines.every((line) => line.server === "a")).toBe(true);
  });

  it("server b answers its own tools, and --name overrides the fixture's name", async () => {
    const wireLog = tempWireLog();
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("b"), "--name", "b2"], wireLog);
    expect((await client.listTools()).tools).toEqual(declaredTools("b"));
    expect(await client.callTool({ name: "tool2", arguments: { count: 2 } })).toEqual(text("B_TOOL2:2"));
    expect(await client.callTool({ name: "tool1", arguments: { query: "q" } })).toEqual(text("B_TOOL1:q"));
    expect(client.getServerVersion()?.name).toBe("b2");
    expect(new Set(readWireLog(wireLog).map((line) => line.server))).toEqual(new Set(["b2"]));
  });

  it("rejects a call to a tool the fixture does not declare", async () => {
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("a")], tempWireLog());
    await expect(client.callTool({ name: "a_tool1", arguments: {} })).rejects.toThrow("Unknown tool: a_tool1");
  });
});

describe("configurable-stub: instructions, resources, prompts", () => {
  it("returns the instructions in initialize and advertises resources and prompts", async () => {
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("rich")], tempWireLog());
    expect(client.getInstructions()).toBe(
      "RICH-INSTRUCTIONS: call rich_note before answering questions about the stub notes.",
    );
    expect(client.getServerCapabilities()).toEqual({ tools: {}, resources: {}, prompts: {} });
  });

  it("lists and reads the resource, and rejects an unknown URI", async () => {
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("rich")], tempWireLog());
    expect((await client.listResources()).resources).toEqual([
      {
        uri: "stub://rich/notes.txt",
        name: "notes",
        description: "A small fixed text resource.",
        mimeType: "text/plain",
      },
    ]);
    expect((await client.readResource({ uri: "stub://rich/notes.txt" })).contents).toEqual([
      { uri: "stub://rich/notes.txt", mimeType: "text/plain", text: "RICH-RESOURCE-TEXT: three notes, all fixed." },
    ]);
    await expect(client.readResource({ uri: "stub://rich/missing" })).rejects.toThrow("Resource not found");
  });

  it("lists the prompt and fills its messages from the arguments", async () => {
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("rich")], tempWireLog());
    expect((await client.listPrompts()).prompts).toEqual([
      {
        name: "summarize",
        description: "Ask for a one-line summary of a topic.",
        arguments: [{ name: "topic", description: "What to summarize", required: true }],
      },
    ]);
    expect(await client.getPrompt({ name: "summarize", arguments: { topic: "caching" } })).toEqual({
      description: "Ask for a one-line summary of a topic.",
      messages: [{ role: "user", content: { type: "text", text: "RICH-PROMPT: summarize caching in one line." } }],
    });
    await expect(client.getPrompt({ name: "summarize", arguments: {} })).rejects.toThrow(
      "Missing required argument: topic",
    );
  });
});

describe("configurable-stub: sampling", () => {
  it("asks the client to sample inside the tool call and returns what it sampled", async () => {
    const wireLog = tempWireLog();
    const seen: CreateMessageRequest["params"][] = [];
    const sampler = samplingClient(seen);
    const { client } = await connectStdio(
      "configurable-stub",
      ["--fixture", fixture("sampler")],
      wireLog,
      sampler.options,
      sampler.configure,
    );
    expect(await client.callTool({ name: "ask_model", arguments: { question: "What is 2+2?" } })).toEqual(
      text("SAMPLED:ANSWER(What is 2+2?)"),
    );
    expect(seen).toEqual([
      { messages: [{ role: "user", content: { type: "text", text: "What is 2+2?" } }], maxTokens: 256 },
    ]);
    // The client's answer to the nested request arrives between the call and its result.
    expect(methodsOf(readWireLog(wireLog))).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/call",
      "(response)",
    ]);
  });

  it("turns a client that cannot sample into a tool error", async () => {
    const { client } = await connectStdio("configurable-stub", ["--fixture", fixture("sampler")], tempWireLog());
    const result = (await client.callTool({ name: "ask_model", arguments: { question: "q" } })) as ReturnType<
      typeof text
    >;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^SAMPLING_FAILED:/);
  });
});

describe("configurable-stub: fault modes", () => {
  const connectFaults = (wireLog = tempWireLog()) =>
    connectStdio("configurable-stub", ["--fixture", fixture("faults")], wireLog);

  it("ok answers normally", async () => {
    const { client } = await connectFaults();
    expect(await client.callTool({ name: "ok", arguments: {} })).toEqual(text("FAULTS_OK"));
  });

  it("crash: the process exits mid-call, the call fails and the transport closes", async () => {
    const wireLog = tempWireLog();
    const connection = await connectFaults(wireLog);
    const closed = new Promise<void>((resolve) => (connection.client.onclose = resolve));
    await expect(connection.client.callTool({ name: "crash", arguments: {} })).rejects.toThrow(/Connection closed/);
    await closed;
    expect(connection.stderr()).toContain("stub-mcp: crashing on purpose while calling crash");
    expect(methodsOf(readWireLog(wireLog)).at(-1)).toBe("tools/call");
  });

  it("hang: the call never answers, so a short client timeout rejects it, and the server keeps serving", async () => {
    const wireLog = tempWireLog();
    const { client } = await connectFaults(wireLog);
    await expect(client.callTool({ name: "hang", arguments: {} }, undefined, { timeout: 300 })).rejects.toThrow(
      /Request timed out/,
    );
    expect(await client.callTool({ name: "ok", arguments: {} })).toEqual(text("FAULTS_OK"));
    expect(methodsOf(readWireLog(wireLog)).slice(2)).toEqual(["tools/call", "notifications/cancelled", "tools/call"]);
  });

  it("garbage: the client reports the junk line as an error but still gets the result", async () => {
    const { client, errors } = await connectFaults();
    expect(errors).toEqual([]);
    expect(await client.callTool({ name: "garbage", arguments: {} })).toEqual(text("FAULTS_AFTER_GARBAGE"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SyntaxError);
  });

  it("error: the call returns isError with the fixture's text", async () => {
    const { client } = await connectFaults();
    expect(await client.callTool({ name: "error", arguments: {} })).toEqual(text("FAULTS_TOOL_ERROR", true));
  });

  it("--fault garbage-on-start: junk precedes the handshake, which the client survives", async () => {
    const { client, errors } = await connectStdio(
      "configurable-stub",
      ["--fixture", fixture("a"), "--fault", "garbage-on-start"],
      tempWireLog(),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SyntaxError);
    expect((await client.listTools()).tools).toHaveLength(2);
  });
});

describe("configurable-stub: Streamable HTTP", () => {
  it("serves the fixture over HTTP to the SDK client and logs what it received", async () => {
    const wireLog = tempWireLog();
    const { url } = await spawnHttp(["--fixture", fixture("a")], wireLog);
    const client = new Client({ name: "stub-mcp-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      expect((await client.listTools()).tools).toEqual(declaredTools("a"));
      expect(await client.callTool({ name: "tool1", arguments: { value: "first" } })).toEqual(text("A_TOOL1:first"));
    } finally {
      await client.close();
    }
    const lines = readWireLog(wireLog);
    expect(methodsOf(lines)).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    expect(lines.every((line) => line.server === "a")).toBe(true);
  });

  it("carries a sampling request over the HTTP tool call", async () => {
    const seen: CreateMessageRequest["params"][] = [];
    const sampler = samplingClient(seen);
    const { url } = await spawnHttp(["--fixture", fixture("sampler")], tempWireLog());
    const client = new Client({ name: "stub-mcp-test", version: "1.0.0" }, sampler.options);
    sampler.configure(client);
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      expect(await client.callTool({ name: "ask_model", arguments: { question: "via http" } })).toEqual(
        text("SAMPLED:ANSWER(via http)"),
      );
    } finally {
      await client.close();
    }
    expect(seen).toHaveLength(1);
  });

  it("--http-fail 500 answers every request with HTTP 500, and the SDK client cannot connect", async () => {
    const wireLog = tempWireLog();
    const { url } = await spawnHttp(["--fixture", fixture("a"), "--http-fail", "500"], wireLog);
    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
    };
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initialize),
    });
    expect(response.status).toBe(500);
    expect((await fetch(url)).status).toBe(500);
    const client = new Client({ name: "stub-mcp-test", version: "1.0.0" });
    await expect(client.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/500/);
    expect(methodsOf(readWireLog(wireLog))).toEqual(["initialize", "initialize"]);
  });
});

describe("configurable-stub: bad input", () => {
  it("exits 2 naming the fixture file and the field that is wrong", async () => {
    const file = join(tempDir(), "broken.json");
    writeFileSync(file, JSON.stringify({ name: "x", tools: [{ name: "t", result: "R" }] }));
    const { code, stderr } = await runToExit("configurable-stub", ["--fixture", file]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(`${file}: field "tools[0].inputSchema": expected a JSON object`);
  });

  it("exits 2 when --fixture is missing or a flag is unknown", async () => {
    expect(await runToExit("configurable-stub", [])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--fixture"),
    });
    expect(await runToExit("configurable-stub", ["--fixture", fixture("a"), "--port", "1"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--port"),
    });
  });

  it("exits 2 when --sse and --http are both given", async () => {
    expect(await runToExit("configurable-stub", ["--fixture", fixture("a"), "--sse", "0", "--http", "0"])).toEqual({
      code: 2,
      stderr: 'command line: field "--sse": expected either --sse <port> or --http <port>, not both\n',
    });
  });
});
