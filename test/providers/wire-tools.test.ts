/**
 * Tools wherever an API puts them, each body typed as the official SDK types its request (openai
 * 6.49.0, @anthropic-ai/sdk 1.16.0), so a shape the SDK does not accept fails to compile: client
 * functions, custom tools, namespaces, hosted and server tools, remote MCP servers, deferred tools
 * behind a tool search. Each is a tool of the dissection, by name, with its own JSON text.
 */

import type { MessageCreateParamsNonStreaming as BetaMessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/beta/messages/messages";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions/completions";
import type { ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { buildRecord } from "../../src/capture/record.js";
import { anthropicMessages } from "../../src/providers/anthropic-messages.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { openaiResponses } from "../../src/providers/openai-responses.js";
import type { WireDissection, WireRequest } from "../../src/providers/types.js";

const schema = { type: "object", properties: { path: { type: "string" } } };

/** The record of a body, as capture builds it (no response, no tokens). */
function recordOf(api: WireRequest["api"], body: string, d: WireDissection) {
  return buildRecord({
    run: "r",
    probe: "p",
    seq: 1,
    ts: "2026-12-04T00:00:00.000Z",
    durationMs: 1,
    request: { api, url: "http://127.0.0.1:9/v1", body, kind: "loop" },
    dissection: d,
    response: null,
    markers: {},
    prefix: null,
    tokens: null,
  });
}

describe("OpenAI Responses tools", () => {
  const namespace = {
    type: "namespace" as const,
    name: "crm",
    description: "Customer records.",
    tools: [
      { type: "function" as const, name: "lookup", description: "Find one.", parameters: schema },
      { type: "custom" as const, name: "note", description: "Free text." },
    ],
  };
  const topLevel: ResponseCreateParamsNonStreaming = {
    model: "gpt-5",
    input: "Hi",
    tools: [
      { type: "function", name: "read", parameters: schema, strict: false },
      { type: "custom", name: "patch", description: "Apply a patch.", format: { type: "text" } },
      namespace,
      { type: "web_search" },
      { type: "file_search", vector_store_ids: ["vs_1"] },
      { type: "computer_use_preview", display_width: 800, display_height: 600, environment: "linux" },
      { type: "mcp", server_label: "docs", server_url: "https://mcp.example.test" },
      { type: "tool_search" },
      { type: "function", name: "archive", parameters: schema, strict: false, defer_loading: true },
    ],
  };

  it("top-level tools: functions, custom tools, a namespace's tools, hosted tools, an MCP server, deferred ones", () => {
    const body = JSON.stringify(topLevel);
    const d = openaiResponses.dissect(body);
    expect(d.tools.map((t) => t.name)).toEqual([
      "read",
      "patch",
      "crm.lookup",
      "crm.note",
      "web_search",
      "file_search",
      "computer_use_preview",
      "mcp:docs",
      "tool_search",
      "archive",
    ]);
    // A namespace's name and description go with its first tool: the namespace holding it alone.
    expect(d.tools[2]!.json).toBe(JSON.stringify({ ...namespace, tools: [namespace.tools[0]] }));
    expect(d.tools[3]!.json).toBe(JSON.stringify(namespace.tools[1]));
    expect(d.toolsJson).toBe(JSON.stringify(topLevel.tools));
    const record = recordOf("openai-responses", body, d);
    expect(record.deferredTools).toEqual(["archive"]);
    expect(record.toolsBytes).toBe(Buffer.byteLength(JSON.stringify(topLevel.tools)));
  });

  it("additional_tools input items are tools: out of the system, the roles and the messages; bytes as tools", () => {
    const carried = [namespace, { type: "function" as const, name: "extra", parameters: schema, strict: true }];
    const params: ResponseCreateParamsNonStreaming = {
      model: "gpt-6.1-sol",
      tools: [{ type: "web_search" }],
      input: [
        { type: "additional_tools", role: "developer", tools: carried },
        { type: "message", role: "developer", content: [{ type: "input_text", text: "House rules." }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Go" }] },
      ],
    };
    const body = JSON.stringify(params);
    const d = openaiResponses.dissect(body);
    expect(d.tools.map((t) => t.name)).toEqual(["web_search", "crm.lookup", "crm.note", "extra"]);
    expect(d.systemParts).toEqual(["House rules."]);
    expect(d.roles).toEqual(["developer", "user"]);
    expect(d.messages.map((m) => m.role)).toEqual(["user"]);
    const all = [{ type: "web_search" }, ...carried];
    expect(d.toolsJson).toBe(JSON.stringify(all));
    const record = recordOf("openai-responses", body, d);
    expect(record.toolsBytes).toBe(Buffer.byteLength(JSON.stringify(all)));
    expect(record.systemBytes).toBe(Buffer.byteLength("House rules."));
    expect(record.deferredTools).toBeUndefined();
  });
});

describe("chat completions tools", () => {
  it("a custom tool names itself in `custom`, a function in `function`", () => {
    const params: ChatCompletionCreateParamsNonStreaming = {
      model: "gpt-5",
      messages: [{ role: "user", content: "Hi" }],
      tools: [
        { type: "function", function: { name: "read", parameters: schema } },
        { type: "custom", custom: { name: "patch", description: "Apply a patch." } },
      ],
    };
    expect(openaiCompletions.dissect(JSON.stringify(params)).tools.map((t) => t.name)).toEqual(["read", "patch"]);
  });
});

describe("Anthropic Messages tools", () => {
  it("server tools by their names; deferred tools behind a tool search marked as such", () => {
    const params: MessageCreateParamsNonStreaming = {
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      messages: [{ role: "user", content: "Hi" }],
      tools: [
        { name: "read", input_schema: { type: "object", properties: {} } },
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "code_execution_20250825", name: "code_execution" },
        { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
        { type: "bash_20250124", name: "bash" },
        { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" },
        {
          name: "archive",
          input_schema: { type: "object", properties: {} },
          defer_loading: true,
          cache_control: { type: "ephemeral" },
        },
      ],
    };
    const body = JSON.stringify(params);
    const d = anthropicMessages.dissect(body);
    expect(d.tools.map((t) => t.name)).toEqual([
      "read",
      "web_search",
      "code_execution",
      "str_replace_based_edit_tool",
      "bash",
      "tool_search_tool_regex",
      "archive",
    ]);
    expect(d.tools.map((t) => t.json)).toEqual(params.tools!.map((tool) => JSON.stringify(tool)));
    const record = recordOf("anthropic-messages", body, d);
    expect(record.deferredTools).toEqual(["archive"]);
    expect(record.toolsBytes).toBe(Buffer.byteLength(JSON.stringify(params.tools)));
  });

  it("an MCP toolset (beta) goes by its server's name", () => {
    const params: BetaMessageCreateParamsNonStreaming = {
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      messages: [{ role: "user", content: "Hi" }],
      mcp_servers: [{ type: "url", name: "docs", url: "https://mcp.example.test" }],
      tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }],
    };
    expect(anthropicMessages.dissect(JSON.stringify(params)).tools.map((t) => t.name)).toEqual(["mcp:docs"]);
  });
});
