import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { countMarker } from "../../src/capture/markers.js";
import { buildRecord } from "../../src/capture/record.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { BODY, MESSAGES_JSON, REQUEST, SYSTEM, TOOLS_JSON } from "./known-body.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const dissection = openaiCompletions.dissect(BODY);
const record = buildRecord({
  run: "run-1",
  probe: "known",
  seq: 3,
  ts: "2026-01-01T00:00:00.000Z",
  durationMs: 1.5,
  request: REQUEST,
  dissection,
  response: {
    message: { role: "assistant", text: "", toolCalls: [{ id: "c", name: "mcp", arguments: "{}" }] },
    usage: { source: "provider", inputTokens: 9, raw: { prompt_tokens: 9 } },
  },
  markers: {
    schema: { in: "messages", match: "Shape:" },
    dash: { in: "tools", match: "—" },
    probe: { in: "system", match: /PROBE/i },
    absent: { in: "messages", match: "nowhere" },
  },
  prefix: null,
  tokens: null,
});

describe("a RequestRecord computed from a known wire body (docs/architecture.md, RequestRecord v1)", () => {
  it("the body's JSON splits into verbatim pieces", () => {
    expect(BODY.includes(TOOLS_JSON)).toBe(true);
    expect(JSON.parse(BODY)).toBeTruthy();
    expect(dissection.toolsJson).toBe(TOOLS_JSON);
    expect(dissection.messages.map((m) => m.json)).toEqual(MESSAGES_JSON);
  });

  it("tools are the names in request order; roles are every message's role, system first", () => {
    expect(record).toMatchObject({
      v: 1,
      run: "run-1",
      probe: "known",
      seq: 3,
      kind: "loop",
      api: "openai-completions",
      model: "qwen3.8-flash",
    });
    expect(record.tools).toEqual(["read", "mcp"]);
    expect(record.roles).toEqual(["system", "user", "assistant", "tool"]);
  });

  it("toolsBytes counts UTF-8 bytes of the tools array and toolsChars its string length: each — is 3 bytes, 1 char", () => {
    expect(record.toolsChars).toBe(TOOLS_JSON.length);
    expect(record.toolsBytes).toBe(TOOLS_JSON.length + 2 * 2);
    expect(record.toolsBytes).toBe(Buffer.byteLength(TOOLS_JSON, "utf8"));
  });

  it("systemBytes and systemChars measure the system text", () => {
    expect(record.systemChars).toBe(SYSTEM.length);
    expect(record.systemBytes).toBe(SYSTEM.length + 2);
    expect(record.systemParts).toEqual([{ bytes: SYSTEM.length + 2, sha256: sha256(SYSTEM) }]);
  });

  it("messagesBytes and bodyBytes measure the messages after the system one and the whole body", () => {
    expect(record.messagesBytes).toBe(Buffer.byteLength(MESSAGES_JSON.join(","), "utf8"));
    expect(record.bodyBytes).toBe(Buffer.byteLength(BODY, "utf8"));
  });

  it("markers count the units that contain the match: one tool result with two Shape: blocks and the user message make 2", () => {
    expect(record.markers).toEqual({ schema: 2, dash: 1, probe: 1, absent: 0 });
  });

  it("hashes are the sha256 of the tools array, the system text and the body", () => {
    expect(record.hashes).toEqual({ tools: sha256(TOOLS_JSON), system: sha256(SYSTEM), body: sha256(BODY) });
  });

  it("response and usage come from the parsed reply", () => {
    expect(record.response).toEqual({ kind: "tool_calls", calls: ["mcp"], text: "" });
    expect(record.usage).toEqual({ source: "provider", inputTokens: 9, raw: { prompt_tokens: 9 } });
  });
});

describe("markers (docs/architecture.md and docs/probes.md)", () => {
  it("a /regex/g marker counts every matching unit, not only the first", () => {
    expect(countMarker({ in: "messages", match: /shape:/gi }, dissection)).toBe(2);
    expect(countMarker({ in: "messages", match: /shape:/gi }, dissection)).toBe(2);
  });

  it("a messages marker also sees the tool calls an assistant message makes", () => {
    expect(countMarker({ in: "messages", match: '{"search":"echo"}' }, dissection)).toBe(1);
  });
});
