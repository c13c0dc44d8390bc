/**
 * The mock's cache diagnostics and the capture's cache reader apply one rule of Anthropic's (Prompt
 * caching → What invalidates the cache, providers/cache-rules.ts): a changed `tool_choice`, changed
 * thinking settings, or an image added leave the tools and system readable but not the messages,
 * however alike the messages are. Each change comes with a new turn that keeps every earlier message,
 * a two-request sequence sent through the mock's
 * diagnoser and a Capture writing real files; the provider's word and ours must agree.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheAgreement } from "../../src/analysis/cache-agreement.js";
import { Capture } from "../../src/capture/capture.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { CacheDiagnoser } from "../../src/providers/cache-diagnoser.js";
import { codecFor } from "../../src/providers/codecs.js";
import { jsonlObjects } from "../fixtures/jsonl-rows.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const API = "anthropic-messages";
const TOOLS = [{ name: "read", description: "Reads a file.", input_schema: { type: "object" } }];
const IMAGE = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
const history = [
  { role: "user", content: "Read a.txt" },
  { role: "assistant", content: "It says hi." },
];

const text = (x: unknown) => (typeof x === "string" ? { type: "text", text: x } : x);

/** A body of the conversation; `next`, when given, a further turn after the first request's reply. */
function body(previous: string | null, extra: Record<string, unknown>, next?: unknown[]): string {
  const turns = next
    ? [
        { role: "assistant", content: "ok" },
        { role: "user", content: next.map(text) },
      ]
    : [];
  return JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    system: "You help with files.",
    tools: TOOLS,
    messages: [...history, { role: "user", content: [text("And b.txt?")] }, ...turns],
    diagnostics: { previous_message_id: previous },
    ...extra,
  });
}

/** Two requests answered by the mock's diagnoser and recorded by a Capture; the second's record. */
async function secondOf(change: { extra?: Record<string, unknown>; next?: unknown[] }): Promise<RequestRecord> {
  const diagnoser = new CacheDiagnoser(codecFor, async (use) => use((text) => Math.ceil(text.length / 4)));
  const dir = tempDir("cache-rules-");
  const capture = new Capture({ run: "r", probe: "r", dir, db: null, markers: {}, codecFor, tokens: false });
  let previous: string | null = null;
  const bodies = [
    (id: string | null) => body(id, {}),
    (id: string | null) => body(id, change.extra ?? {}, change.next ?? ["And c.txt?"]),
  ];
  for (const [i, make] of bodies.entries()) {
    const sent = make(previous);
    const { chunks } = codecFor(API).renderReply({ kind: "text", text: "ok" }, sent);
    const reply = await diagnoser.answer(API, sent, chunks);
    reply.sent();
    const response = reply.chunks.join("");
    previous = /"id":"(msg_mock_\d+)"/.exec(response)![1]!;
    const request = { kind: "loop", api: API, url: "http://127.0.0.1:8787/v1/messages", body: sent } as const;
    const outcome = { body: response, status: 200, firstByteMs: 0, ending: "complete" } as const;
    await capture.recordExchange(request, outcome, new Date(Date.UTC(2026, 11, 4, 10, 0, i)).toISOString(), 1);
  }
  capture.close();
  return jsonlObjects<RequestRecord>(join(dir, "requests.jsonl"))[1]!;
}

describe("the mock's diagnostics and our cache reader agree on Anthropic's message-level settings", () => {
  it.each([
    ["tool_choice changed", { extra: { tool_choice: { type: "any" } } }],
    ["thinking changed", { extra: { thinking: { type: "enabled", budget_tokens: 1024 } } }],
    ["images 0 → 1", { next: ["And this?", IMAGE] }],
  ])("%s: messages not readable, tools and system read; the provider says messages_changed", async (what, change) => {
    const record = await secondOf(change);
    expect(record.prefix).toMatchObject({ breakAt: "messages", from: 1 });
    expect(record.prefix!.breakDetail).toContain(what);
    expect(record.cacheDiagnostics).toMatchObject({ verdict: "miss", reason: "messages_changed", part: "messages" });
    expect(cacheAgreement(record)).toBe("agree");
  });

  it("nothing changed but a new turn: a hit on both sides", async () => {
    const record = await secondOf({});
    expect(record.prefix).toMatchObject({ breakAt: null, from: 1 });
    expect(record.cacheDiagnostics).toMatchObject({ verdict: "hit" });
    expect(cacheAgreement(record)).toBe("agree");
  });
});
