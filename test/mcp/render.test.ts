import { describe, expect, it } from "vitest";
import { suggestionPrefixes } from "../../src/mcp/naming.js";
import {
  ambiguousToolText,
  callFailedText,
  connectFailedText,
  directToolUnavailableText,
  EMPTY_QUERY_TEXT,
  namespaceToolMissingText,
  nativePiToolText,
  renderCallContent,
  renderDescribe,
  renderInstructions,
  renderNoMatches,
  renderNotFound,
  renderSearchResult,
  renderServerList,
  renderStatus,
  renderToolErrorSuffix,
  serverDisabledText,
  serverNotFoundText,
  serverUnavailableText,
} from "../../src/mcp/render.js";
import { rankTools, type SearchableTool, suggestToolNames } from "../../src/mcp/search.js";
import { truncateAtWord } from "../../src/mcp/text.js";
import { probeStubTools, stubEcho, stubTime } from "../fixtures/probe-stub-tools.js";

const readme: SearchableTool = {
  name: "docs_read_readme",
  originalName: "read_readme",
  server: "docs",
  resourceUri: "file:///README.md",
  description: "Read resource: file:///README.md",
};

describe("truncateAtWord", () => {
  it("leaves short text alone", () => {
    expect(truncateAtWord("short", 50)).toBe("short");
    expect(truncateAtWord("", 50)).toBe("");
  });

  it("cuts back to the last space when that keeps more than 60%", () => {
    expect(truncateAtWord("Echo the given value back. Deterministic stub tool.", 50)).toBe(
      "Echo the given value back. Deterministic stub...",
    );
  });

  it("cuts mid-word when the last space is too early", () => {
    expect(truncateAtWord("ab supercalifragilistic", 10)).toBe("ab superca...");
    expect(truncateAtWord("abcdef ghij", 10)).toBe("abcdef ghi...");
  });
});

describe("renderSearchResult", () => {
  it("reproduces the verified p1 search text byte for byte", () => {
    const matches = rankTools("probe stub echo", probeStubTools);
    expect(renderSearchResult({ query: "probe stub echo", matches })).toBe(
      'Found 2 tools matching "probe stub echo":\n\nprobe-stub_stub_echo\n  Echo the given value back. Deterministic stub tool.\n\n  Shape:\n    { value: string; }\n\nprobe-stub_stub_time\n  Return a fixed stub timestamp.\n\n  Shape:\n    {}',
    );
  });

  it("lists one line per tool without schemas, truncating descriptions at 50", () => {
    const text = renderSearchResult({
      query: "stub",
      matches: [stubEcho, stubTime, { ...stubTime, name: "bare", description: "" }],
      includeSchemas: false,
    });
    expect(text).toBe(
      'Found 3 tools matching "stub":\n\n- probe-stub_stub_echo - Echo the given value back. Deterministic stub...\n- probe-stub_stub_time - Return a fixed stub timestamp.\n- bare',
    );
  });

  it("says tool for a single match and marks tools that need approval", () => {
    const text = renderSearchResult({
      query: "time",
      matches: [stubTime],
      includeSchemas: false,
      requiresApproval: (tool) => tool.originalName === "stub_time",
    });
    expect(text).toBe(
      'Found 1 tool matching "time":\n\n- probe-stub_stub_time (requires approval) - Return a fixed stub timestamp.',
    );
  });

  it("pages with offset and limit and says where the next page starts", () => {
    const matches = [stubEcho, stubTime, readme];
    expect(renderSearchResult({ query: "x", matches, includeSchemas: false, limit: 2 })).toBe(
      'Found 3 tools matching "x":\n\n- probe-stub_stub_echo - Echo the given value back. Deterministic stub...\n- probe-stub_stub_time - Return a fixed stub timestamp.\n\n2 of 3 — offset: 2 for more',
    );
    expect(renderSearchResult({ query: "x", matches, includeSchemas: false, limit: 2, offset: 2 })).toBe(
      'Found 3 tools matching "x":\n\n- docs_read_readme - Read resource: file:///README.md',
    );
  });

  it("shows at most twelve tools by default", () => {
    const matches = Array.from({ length: 13 }, (_, i) => ({ ...stubTime, name: `t${i}`, description: "" }));
    expect(
      renderSearchResult({ query: "t", matches, includeSchemas: false }).endsWith(
        "- t11\n\n12 of 13 — offset: 12 for more",
      ),
    ).toBe(true);
  });

  it("falls back to Parameters at four spaces, and marks resource tools and tools without a schema", () => {
    const open: SearchableTool = {
      ...stubEcho,
      name: "srv_open",
      description: undefined,
      inputSchema: { type: "object", properties: { path: { type: "string" } }, additionalProperties: true },
    };
    const noSchema: SearchableTool = { ...stubTime, name: "srv_bare", inputSchema: undefined };
    expect(renderSearchResult({ query: "q", matches: [open, readme, noSchema] })).toBe(
      'Found 3 tools matching "q":\n\nsrv_open\n  (no description)\n\n  Parameters:\n    path (string)\n\ndocs_read_readme\n  Read resource: file:///README.md\n  No parameters (resource tool).\n\nsrv_bare\n  Return a fixed stub timestamp.',
    );
  });

  it("indents every line of a multi-line shape", () => {
    const withDefs: SearchableTool = {
      ...stubEcho,
      inputSchema: {
        type: "object",
        properties: { p: { $ref: "#/$defs/Point" } },
        $defs: { Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
      },
    };
    expect(renderSearchResult({ query: "q", matches: [withDefs] })).toBe(
      'Found 1 tool matching "q":\n\nprobe-stub_stub_echo\n  Echo the given value back. Deterministic stub tool.\n\n  Shape:\n    type Point = { x: number; };\n    \n    { p?: Point; }',
    );
  });

  it("names lazily activated direct tools first", () => {
    const text = renderSearchResult({
      query: "time",
      matches: [stubTime],
      includeSchemas: false,
      activatedDirect: ["probe-stub_stub_time", "b"],
    });
    expect(text).toBe(
      'Activated as direct tools: probe-stub_stub_time, b.\n\nFound 1 tool matching "time":\n\n- probe-stub_stub_time - Return a fixed stub timestamp.',
    );
  });
});

describe("search without matches", () => {
  it("names the query, the server filter and servers still connecting", () => {
    expect(renderNoMatches({ query: "probe stub echo" })).toBe('No tools matching "probe stub echo"');
    expect(renderNoMatches({ query: "read", server: "demo", connecting: ["demo"] })).toBe(
      'No tools matching "read" in "demo" Server "demo" is still connecting; retry in a moment.',
    );
    expect(renderNoMatches({ query: "read", connecting: ["zeta", "alpha"] })).toBe(
      'No tools matching "read" Servers "alpha", "zeta" are still connecting; retry in a moment.',
    );
    expect(EMPTY_QUERY_TEXT).toBe("Search query cannot be empty");
  });
});

describe("renderStatus", () => {
  it("counts connected of enabled servers and their tools, one line per server", () => {
    const text = renderStatus([
      { name: "probe-stub", state: "connected", toolCount: 2, legacy: true },
      { name: "modern", state: "connected", toolCount: 1 },
      { name: "off", state: "disabled", toolCount: 9 },
      { name: "oauth", state: "needs-auth", toolCount: 0 },
      { name: "broken", state: "failed", toolCount: 4, failedAgoSec: 12 },
      { name: "lazy", state: "cached", toolCount: 3 },
      { name: "cold", state: "disconnected", toolCount: 0 },
    ]);
    expect(text).toBe(
      [
        "MCP: 2/6 servers, 6 tools (1 disabled)",
        "",
        "✓ probe-stub (2 tools, legacy notification path)",
        "✓ modern (1 tools)",
        "⊘ off (disabled)",
        "⚠ oauth (needs auth)",
        "✗ broken (failed 12s ago)",
        "○ lazy (3 tools, cached; not listening)",
        "○ cold (not listening; disconnected)",
        "",
        'mcp({ server: "name" }) to list tools, mcp({ search: "..." }) to search',
      ].join("\n"),
    );
  });

  it("has no footer without servers", () => {
    expect(renderStatus([])).toBe("MCP: 0/0 servers, 0 tools");
  });
});

describe("renderDescribe", () => {
  it("shows server, description and shape", () => {
    expect(renderDescribe(stubEcho)).toBe(
      "probe-stub_stub_echo\nServer: probe-stub\n\nEcho the given value back. Deterministic stub tool.\n\nShape:\n{ value: string; }",
    );
  });

  it("falls back to Parameters at two spaces and marks approval", () => {
    const open = {
      ...stubEcho,
      inputSchema: { type: "object", properties: { v: { type: "string" } }, additionalProperties: {} },
    };
    expect(renderDescribe(open, true)).toBe(
      "probe-stub_stub_echo (requires approval)\nServer: probe-stub\n\nEcho the given value back. Deterministic stub tool.\n\nParameters:\n  v (string)",
    );
  });

  it("explains resource tools and tools without a schema", () => {
    expect(renderDescribe(readme)).toBe(
      "docs_read_readme\nServer: docs\nType: Resource (reads from file:///README.md)\n\nRead resource: file:///README.md\n\nNo parameters required (resource tool).",
    );
    expect(renderDescribe({ ...stubTime, inputSchema: undefined, description: "" })).toBe(
      "probe-stub_stub_time\nServer: probe-stub\n\n(no description)\n\nNo parameters defined.",
    );
  });
});

describe("not found", () => {
  it("reproduces p1's bare-name call result", () => {
    const suggestions = suggestToolNames("stub_echo", probeStubTools, suggestionPrefixes(["probe-stub"]));
    expect(renderNotFound({ wanted: "stub_echo", suggestions })).toBe(
      'Tool "stub_echo" not found. Use mcp({ search: "..." }) to search. Did you mean: probe-stub_stub_echo',
    );
  });

  it("lists the known server's tools instead of the search hint", () => {
    const serverTools = { server: "probe-stub", names: probeStubTools.map((t) => t.name) };
    expect(renderNotFound({ wanted: "probe-stub_nope", serverTools, suggestions: [] })).toBe(
      'Tool "probe-stub_nope" not found. Server "probe-stub" has: probe-stub_stub_echo, probe-stub_stub_time',
    );
    expect(renderNotFound({ wanted: "x", serverTools: { server: "empty", names: [] }, suggestions: ["a", "b"] })).toBe(
      'Tool "x" not found. Use mcp({ search: "..." }) to search. Did you mean: a, b',
    );
  });
});

describe("renderServerList", () => {
  const tools = probeStubTools.map(({ name, description }) => ({ name, description }));

  it("lists a connected server's tools", () => {
    expect(renderServerList({ server: "probe-stub", status: "connected", tools })).toBe(
      "probe-stub (2 tools):\n\n- probe-stub_stub_echo - Echo the given value back. Deterministic stub...\n- probe-stub_stub_time - Return a fixed stub timestamp.",
    );
  });

  it("notes cached tools of a lazy server and a server that needs auth", () => {
    expect(renderServerList({ server: "s", status: "lazy", tools: [{ name: "s_a" }] })).toBe(
      's (1 tools (lazy: tools from cache, not connected yet — mcp({ connect: "s" }) to connect)):\n\n- s_a',
    );
    expect(renderServerList({ server: "s", status: "needs-auth", tools: [{ name: "s_a" }] })).toBe(
      's (1 tools (needs auth — run mcp({ action: "auth-start", server: "s" }))):\n\n- s_a',
    );
  });

  it("previews instructions up to 300 characters", () => {
    expect(
      renderServerList({ server: "s", status: "connected", tools: [{ name: "s_a" }], instructions: "Be brief." }),
    ).toBe("s (1 tools):\n\n- s_a\n\n\nServer instructions:\nBe brief.");
    const long = `${"word ".repeat(70)}end`;
    expect(renderServerList({ server: "s", status: "connected", tools: [{ name: "s_a" }], instructions: long })).toBe(
      `s (1 tools):\n\n- s_a\n\n\nServer instructions:\n${"word ".repeat(59)}word...\nUse mcp({ instructions: "s" }) for the full text.`,
    );
  });

  it("says why there is nothing to list", () => {
    expect(renderServerList({ server: "s", status: "connected", tools: [] })).toBe('Server "s" has no tools.');
    expect(renderServerList({ server: "s", status: "lazy", tools: [] })).toBe(
      'Server "s" has no cached tools (not connected).',
    );
    expect(renderServerList({ server: "s", status: "lazy" })).toBe(
      'Server "s" is configured but not connected. Use mcp({ connect: "s" }) or /mcp reconnect s to retry.',
    );
    expect(renderServerList({ server: "s", status: "connected", tools: [], instructions: "Hi." })).toBe(
      'Server "s" has no tools.\n\nServer instructions:\nHi.',
    );
  });
});

describe("renderInstructions", () => {
  it("shows instructions, or why there are none", () => {
    expect(renderInstructions({ server: "s", instructions: "Use x first.", connected: false })).toBe(
      "s instructions:\n\nUse x first.",
    );
    expect(renderInstructions({ server: "s", connected: true })).toBe('Server "s" does not provide instructions.');
    expect(renderInstructions({ server: "s", connected: false })).toBe(
      'No instructions cached for "s". Use mcp({ connect: "s" }) to connect and refresh.',
    );
  });
});

describe("call results", () => {
  it("turns each MCP content type into a block", () => {
    expect(
      renderCallContent([
        { type: "text", text: "STUB_ECHO:PROBE-77" },
        { type: "image", data: "aGk=" },
        { type: "image", data: "aGk=", mimeType: "image/jpeg" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "alpha" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AA==" } },
        { type: "resource_link", uri: "file:///c.md", name: "c.md" },
        { type: "resource_link", uri: "file:///d.md" },
        { type: "audio", data: "AA==", mimeType: "audio/wav" },
        { type: "audio", data: "AA==" },
        { type: "widget", text: "?" },
      ]),
    ).toEqual([
      { type: "text", text: "STUB_ECHO:PROBE-77" },
      { type: "image", data: "aGk=", mimeType: "image/png" },
      { type: "image", data: "aGk=", mimeType: "image/jpeg" },
      { type: "text", text: "[Resource: file:///a.txt]\nalpha" },
      { type: "text", text: '[Resource: file:///b.bin]\n{"uri":"file:///b.bin","blob":"AA=="}' },
      { type: "text", text: "[Resource Link: c.md]\nURI: file:///c.md" },
      { type: "text", text: "[Resource Link: file:///d.md]\nURI: file:///d.md" },
      { type: "text", text: "[Audio content: audio/wav]" },
      { type: "text", text: "[Audio content: audio/*]" },
      { type: "text", text: '{"type":"widget","text":"?"}' },
    ]);
  });

  it("shows structured content as pretty JSON when there is no content, else (empty result)", () => {
    expect(renderCallContent([], { ok: true, n: [1] })).toEqual([
      { type: "text", text: '{\n  "ok": true,\n  "n": [\n    1\n  ]\n}' },
    ]);
    expect(renderCallContent(undefined, null)).toEqual([{ type: "text", text: "(empty result)" }]);
    expect(renderCallContent([{ type: "text", text: "x" }], { ignored: true })).toEqual([{ type: "text", text: "x" }]);
  });

  it("adds the expected parameters after a failed call", () => {
    expect(renderToolErrorSuffix(stubEcho.inputSchema)).toBe(
      "\n\nExpected parameters:\n  value (string) *required* - Value to echo",
    );
    expect(renderToolErrorSuffix(undefined)).toBe("");
    expect(callFailedText("Request timed out") + renderToolErrorSuffix(stubTime.inputSchema)).toBe(
      "Failed to call tool: Request timed out\n\nExpected parameters:\n  (no parameters)",
    );
  });
});

describe("one-line results", () => {
  it("word each situation exactly", () => {
    expect(serverDisabledText("s")).toBe('Server "s" is disabled. Run /mcp enable s and /reload to enable it.');
    expect(serverUnavailableText("s", 42)).toBe('Server "s" not available (last failed 42s ago)');
    expect(serverNotFoundText("s")).toBe('Server "s" not found. Use mcp({}) to see available servers.');
    expect(ambiguousToolText("x")).toBe('Tool "x" matches multiple servers. Specify a server.');
    expect(nativePiToolText("read")).toBe(
      '"read" is a native Pi tool. Call read directly instead of using mcp({ tool: "read" }).',
    );
    expect(namespaceToolMissingText("probe-stub")).toBe(
      "mcp__probe-stub requires a `tool` parameter naming the underlying MCP tool.",
    );
    expect(connectFailedText("s", "spawn ENOENT")).toBe('Failed to connect to "s": spawn ENOENT');
    expect(directToolUnavailableText("s", 5)).toBe('MCP server "s" not available (failed 5s ago)');
  });
});
