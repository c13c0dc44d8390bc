import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  type CreateMessageResult,
  CreateMessageResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { fillTemplate } from "./template.js";
import { GARBAGE_LINE, textResult, unknownToolMessage } from "./tool-results.js";
import type { StubFixture, StubPrompt, StubTool, TextToolResult } from "./types.js";

/** MCP's code for a resource URI the server does not have. */
const RESOURCE_NOT_FOUND = -32002;
/** Enough for any stub answer; the sampling client decides what it really returns. */
const SAMPLING_MAX_TOKENS = 256;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Builds an SDK server that offers what the fixture declares, byte-exact: tool schemas go to
 * tools/list unchanged, and resources and prompts are advertised only when the fixture has them
 * (a client asks for resources/list or prompts/list only when they are advertised). `listChanged`
 * is advertised only by a fixture whose tool list can grow, so the other fixtures' handshakes stay as they were.
 */
export function createFixtureServer(fixture: StubFixture, serverName: string): Server {
  const tools = [...fixture.tools];
  const canGrow =
    fixture.addsToolAfterInit !== undefined ||
    fixture.tools.some((t) => t.addsTool !== undefined || t.removesTool !== undefined);
  const capabilities: ServerCapabilities = { tools: canGrow ? { listChanged: true } : {} };
  if (fixture.resources) capabilities.resources = {};
  if (fixture.prompts) capabilities.prompts = {};
  const server = new Server(
    { name: serverName, version: "1.0.0" },
    fixture.instructions === undefined ? { capabilities } : { capabilities, instructions: fixture.instructions },
  );

  /** Adds a tool to what tools/list returns and tells the client its list changed. */
  const addTool = async (tool: StubTool): Promise<void> => {
    if (!tools.some((t) => t.name === tool.name)) tools.push(tool);
    await server.sendToolListChanged();
  };
  const removeTool = async (name: string): Promise<void> => {
    const at = tools.findIndex((t) => t.name === name);
    if (at >= 0) tools.splice(at, 1);
    await server.sendToolListChanged();
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    ...fixture.toolsListExtra,
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, unknownToolMessage(request.params.name));
    // The notification goes out before the result, as a server that changes its tools mid-call would send it.
    if (tool.addsTool) await addTool(tool.addsTool);
    if (tool.removesTool) await removeTool(tool.removesTool);
    return callFixtureTool(server, tool, request.params.arguments ?? {}, extra);
  });
  const later = fixture.addsToolAfterInit;
  if (later)
    server.oninitialized = () => void setTimeout(() => void addTool(later.tool).catch(() => undefined), later.delayMs);
  if (fixture.resources) serveResources(server, fixture.resources);
  if (fixture.prompts) servePrompts(server, fixture.prompts);
  return server;
}

/** resources/list and resources/read over the fixture's resources (plain text). */
function serveResources(server: Server, resources: NonNullable<StubFixture["resources"]>): void {
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: resources.map(({ uri, name, description }) => ({ uri, name, description, mimeType: "text/plain" })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const resource = resources.find((r) => r.uri === request.params.uri);
    if (!resource) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`);
    return { contents: [{ uri: resource.uri, mimeType: "text/plain", text: resource.text }] };
  });
}

/** prompts/list and prompts/get over the fixture's prompts. */
function servePrompts(server: Server, prompts: StubPrompt[]): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: prompts.map(({ name, description, arguments: args }) => ({ name, description, arguments: args })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const prompt = prompts.find((p) => p.name === request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    return renderPrompt(prompt, request.params.arguments ?? {});
  });
}

/**
 * The event loop stopped for good: no stdin read, no reply, no JavaScript signal handler, as a server
 * stuck in a loop is. The thread waits on a value nothing ever changes, so it burns no CPU while the
 * client's timeouts run (a busy loop spent a core until the process was killed).
 */
function blockForever(): never {
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

async function callFixtureTool(
  server: Server,
  tool: StubTool,
  args: Record<string, unknown>,
  extra: Extra,
): Promise<TextToolResult> {
  switch (tool.fault) {
    case "crash":
      // The stderr line is what a client can quote when it reports the dead server.
      process.stderr.write(`stub-mcp: crashing on purpose while calling ${tool.name}\n`);
      return process.exit(1);
    case "hang":
      return new Promise<never>(() => {});
    case "block":
      return blockForever();
    case "garbage":
      process.stdout.write(GARBAGE_LINE);
      break;
    case "error":
      return textResult(fillTemplate(tool.result ?? "", args), true);
  }
  if (tool.sampling)
    return sampleForTool(server, fillTemplate(tool.sampling.prompt, args), tool.sampling.request ?? {}, extra);
  return textResult(fillTemplate(tool.result ?? "", args));
}

/**
 * Asks the client's model, tied to the running tool call so it also travels on that call's HTTP stream.
 * Sent as a plain request rather than through `createMessage`, whose own checks would stop params
 * (e.g. `tools`) that the test wants the client to see and refuse.
 */
async function sampleForTool(
  server: Server,
  prompt: string,
  request: Record<string, unknown>,
  extra: Extra,
): Promise<TextToolResult> {
  let sampled: CreateMessageResult;
  try {
    sampled = await server.request(
      {
        method: "sampling/createMessage",
        params: {
          messages: [{ role: "user", content: { type: "text", text: prompt } }],
          maxTokens: SAMPLING_MAX_TOKENS,
          ...request,
        },
      },
      CreateMessageResultSchema,
      { relatedRequestId: extra.requestId, signal: extra.signal },
    );
  } catch (error) {
    return textResult(`SAMPLING_FAILED:${(error as Error).message}`, true);
  }
  return textResult(`SAMPLED:${sampledText(sampled)}`);
}

function sampledText(result: CreateMessageResult): string {
  const blocks = Array.isArray(result.content) ? result.content : [result.content];
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
}

function renderPrompt(prompt: StubPrompt, args: Record<string, string>) {
  for (const argument of prompt.arguments ?? []) {
    if (argument.required && args[argument.name] === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${argument.name}`);
    }
  }
  return {
    description: prompt.description,
    messages: prompt.messages.map((m) => ({
      role: m.role,
      content: { type: "text" as const, text: fillTemplate(m.text, args) },
    })),
  };
}
