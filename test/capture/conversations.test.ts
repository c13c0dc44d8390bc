/**
 * Conversations and what the provider can read from its cache (issue 34): the bodies real clients
 * sent (test/fixtures/conversations, captured through record) replayed through a Capture that writes
 * real files, each request held to the verdict its fixture names; then each documented rule on a
 * request sequence of its own.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheRates } from "../../src/analysis/cost/cache-rates.js";
import { loadPricing } from "../../src/analysis/cost/pricing.js";
import { runCost } from "../../src/analysis/cost/run-cost.js";
import { folderSource } from "../../src/analysis/load-run.js";
import { reportRow } from "../../src/analysis/report.js";
import { Capture, type LoggedRequest } from "../../src/capture/capture.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
import { jsonlObjects } from "../fixtures/jsonl-rows.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const FIXTURES = join(PROJECT_ROOT, "test/fixtures/conversations");

interface Sent {
  api: WireApi;
  body: string;
  /** Minutes after the first request (default: one second per request). */
  at?: number;
  response?: string;
  sessionHeader?: LoggedRequest["sessionHeader"];
}

/** The requests through one capture into a temp folder, in order; the records as requests.jsonl holds them. */
async function captured(sent: Sent[]): Promise<RequestRecord[]> {
  const dir = tempDir("conversations-");
  const capture = new Capture({ run: "conv", probe: "conv", dir, db: null, markers: {}, codecFor, tokens: false });
  const start = Date.parse("2026-12-04T10:00:00.000Z");
  for (const [i, s] of sent.entries()) {
    const ts = new Date(start + (s.at === undefined ? i * 1000 : s.at * 60_000)).toISOString();
    const request = { kind: "loop", api: s.api, url: "http://127.0.0.1:8787/v1", body: s.body } as const;
    const outcome = { body: s.response ?? "", status: 200, firstByteMs: 0, ending: "complete" } as const;
    await capture.recordExchange(
      { ...request, ...(s.sessionHeader && { sessionHeader: s.sessionHeader }) },
      outcome,
      ts,
      1,
    );
  }
  capture.close();
  return jsonlObjects<RequestRecord>(join(dir, "requests.jsonl"));
}

const verdictOf = (r: RequestRecord) => ({
  seq: r.seq,
  conversation: r.conversation,
  from: r.prefix?.from,
  newConversation: r.prefix?.newConversation,
  breakAt: r.prefix?.breakAt,
});

interface FixtureRow {
  seq: number;
  api: WireApi;
  body: string;
  response: string;
}

/** A fixture's requests; Claude Code's session header is the session id its body names too. */
function fixture(name: string, header?: string): Sent[] {
  return jsonlObjects<FixtureRow>(join(FIXTURES, `${name}.jsonl`)).map((row) => {
    const session = codecFor(row.api).dissect(row.body).conversationKeys?.session;
    return {
      api: row.api,
      body: row.body,
      response: row.response,
      ...(header && session && { sessionHeader: { name: header, value: session } }),
    };
  });
}

function expected(name: string): { sessionHeader?: string; requests: ReturnType<typeof verdictOf>[] } {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.verdicts.json`), "utf8"));
}

describe("what real clients sent, each request with its verdict (test/fixtures/conversations)", () => {
  it.each(["claude-code-2.1.328-subagent", "claude-code-2.1.328-interactive", "anthropic-sdk-1.16.0-side-call"])(
    "%s",
    async (name) => {
      const want = expected(name);
      const records = await captured(fixture(name, want.sessionHeader));
      expect(records.map(verdictOf)).toEqual(want.requests);
    },
  );

  it("Claude Code: no break in the main conversation, and the subagent's first request is a new conversation", async () => {
    const records = await captured(fixture("claude-code-2.1.328-subagent", "x-claude-code-session-id"));
    const main = records.filter((r) => r.conversation?.role === "main");
    expect(main.map((r) => r.prefix?.breakDetail)).toEqual([null, null, null]);
    // Request 2 sent messages[1] as a string where request 1 sent one marked text block: the same render.
    expect(records[1]!.prefix!.sharedBytes).toBeGreaterThan(records[0]!.messagesBytes);
    const subagent = records.find((r) => r.conversation?.role === "subagent")!;
    expect(subagent.prefix).toMatchObject({ newConversation: true, breakAt: null });
  });

  it("interactive Claude Code: its session-title call, sent before the first turn, is a side call, and the report says so", async () => {
    const records = await captured(fixture("claude-code-2.1.328-interactive", "x-claude-code-session-id"));
    const [title, ...rest] = records;
    expect(title!.tools).toEqual([]);
    expect(title!.conversation).toMatchObject({ role: "side" });
    expect(reportRow(title!, "bytes").kind).toBe("side");
    // The turns after it: the main conversation, unbroken, each reading from its own previous request.
    const main = rest.filter((r) => r.conversation?.role === "main");
    expect(main.map((r) => r.prefix?.breakDetail)).toEqual(main.map(() => null));
    expect(main.slice(1).map((r) => r.prefix?.from)).toEqual([2, 3, 4]);
  });
});

const EPHEMERAL = { type: "ephemeral" };
const TOOLS = [
  { name: "Read", description: "Reads a file.", input_schema: { type: "object" } },
  { name: "Grep", description: "Searches files.", input_schema: { type: "object" }, cache_control: EPHEMERAL },
];
const SYSTEM = [{ type: "text", text: "You help with files.", cache_control: EPHEMERAL }];

/** A Messages body of conversation A: its system, tools and the given messages. */
function messagesBody(messages: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    system: SYSTEM,
    tools: TOOLS,
    messages,
    ...extra,
  });
}

const user = (text: string, marked = false) => ({
  role: "user",
  content: [{ type: "text", text, ...(marked ? { cache_control: EPHEMERAL } : {}) }],
});
const reply = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
const turn1 = [user("Read a.txt", true)];
const turn2 = [user("Read a.txt"), reply("It says hi."), user("And b.txt?", true)];
const anthropic = (body: string, at?: number): Sent => ({
  api: "anthropic-messages",
  body,
  ...(at === undefined ? {} : { at }),
});

describe("Anthropic's cache, by its documented rules (Anthropic, Prompt caching)", () => {
  it("a string and one text block render the same; a moved cache_control marker is no content", async () => {
    const stringFirst = [{ role: "user", content: "Read a.txt" }, reply("It says hi."), user("And b.txt?", true)];
    const records = await captured([anthropic(messagesBody(turn1)), anthropic(messagesBody(stringFirst))]);
    expect(records[1]!.prefix).toMatchObject({ from: 1, breakAt: null, newConversation: false });
  });

  it("a side call between two turns is a new conversation; the next turn reads from the first, not the side call", async () => {
    const side = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 16, system: "Title it.", messages: turn1 });
    const records = await captured([anthropic(messagesBody(turn1)), anthropic(side), anthropic(messagesBody(turn2))]);
    expect(records.map(verdictOf)).toEqual([
      {
        seq: 1,
        conversation: { id: "c1", role: "main", by: "content" },
        from: null,
        newConversation: true,
        breakAt: null,
      },
      {
        seq: 2,
        conversation: { id: "c2", role: "side", parent: "c1", by: "content" },
        from: null,
        newConversation: true,
        breakAt: null,
      },
      {
        seq: 3,
        conversation: { id: "c1", role: "main", by: "content" },
        from: 1,
        newConversation: false,
        breakAt: null,
      },
    ]);
  });

  it("a title call sent before the first turn (no tools, a JSON-schema answer) is a side call, and the turn after it the main conversation", async () => {
    const format = { type: "json_schema", schema: { type: "object", properties: { title: { type: "string" } } } };
    const title = JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 16,
      system: "Title it.",
      messages: turn1,
      output_config: { format },
    });
    const records = await captured([anthropic(title), anthropic(messagesBody(turn1)), anthropic(messagesBody(turn2))]);
    expect(records.map((r) => r.conversation)).toEqual([
      { id: "c1", role: "side", by: "content" },
      { id: "c2", role: "main", by: "content" },
      { id: "c2", role: "main", by: "content" },
    ]);
    expect(records[2]!.prefix).toMatchObject({ from: 2, breakAt: null });
  });

  it("changing tool_choice leaves tools and system readable, not the messages", async () => {
    const records = await captured([
      anthropic(messagesBody(turn1)),
      anthropic(messagesBody(turn2, { tool_choice: { type: "any" } })),
    ]);
    // What stays readable: the tools and the system text, as the prefix renders them.
    const d = codecFor("anthropic-messages").dissect(messagesBody(turn1));
    const head = [...d.tools.map((t) => t.prefixJson ?? t.json), ...d.systemParts].join("\n");
    expect(records[1]!.prefix).toMatchObject({
      sharedBytes: Buffer.byteLength(head),
      from: 1,
      breakAt: "messages",
      breakDetail: "messages not readable: tool_choice changed",
    });
  });

  it("changing the thinking settings, or adding an image, does the same", async () => {
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    const withImage = [...turn2.slice(0, 2), { role: "user", content: [image, { type: "text", text: "And this?" }] }];
    const records = await captured([
      anthropic(messagesBody(turn1)),
      anthropic(messagesBody(turn2, { thinking: { type: "enabled", budget_tokens: 1024 } })),
      anthropic(messagesBody(turn1)),
      anthropic(messagesBody(withImage)),
    ]);
    expect(records[1]!.prefix!.breakDetail).toBe("messages not readable: thinking changed");
    expect(records[3]!.prefix).toMatchObject({ from: 3, breakDetail: "messages not readable: images 0 → 1" });
  });

  it("an entry lives 5 minutes unless its breakpoint asked for 1 hour", async () => {
    const oneHour = { type: "ephemeral", ttl: "1h" };
    const longTurn1 = [{ role: "user", content: [{ type: "text", text: "Read a.txt", cache_control: oneHour }] }];
    const records = await captured([
      anthropic(messagesBody(turn1), 0),
      anthropic(messagesBody(turn2), 6),
      anthropic(messagesBody(longTurn1), 10),
      anthropic(messagesBody(turn2), 40),
    ]);
    // Six minutes on, the 5-minute entry is gone: nothing to read, and the conversation goes on.
    expect(records[1]!.prefix).toMatchObject({ from: null, breakAt: null, newConversation: false });
    expect(records[3]!.prefix).toMatchObject({ from: 3, breakAt: null });
  });

  it("a request reads from any earlier live request: a tool set that comes back finds its old prefix", async () => {
    const fewer = JSON.stringify({ ...JSON.parse(messagesBody(turn2)), tools: TOOLS.slice(1) });
    const turn3 = [...turn2, reply("It is empty."), user("Thanks.", true)];
    const records = await captured([anthropic(messagesBody(turn1)), anthropic(fewer), anthropic(messagesBody(turn3))]);
    expect(records[1]!.prefix).toMatchObject({ from: 1, breakAt: "tools", breakDetail: "tools[0] removed: Read" });
    expect(records[2]!.prefix).toMatchObject({ from: 1, breakAt: null });
  });
});

describe("OpenAI Responses conversations: prompt_cache_key and previous_response_id", () => {
  const responses = (input: unknown, { reply, ...fields }: Record<string, unknown>): Sent => ({
    api: "openai-responses",
    body: JSON.stringify({ model: "gpt-5", instructions: "You code.", input, ...fields }),
    response: reply === undefined ? "" : JSON.stringify({ id: reply, object: "response", output: [] }),
  });

  it("each prompt_cache_key is a conversation; a turn chained to a response continues that response's conversation", async () => {
    const records = await captured([
      responses("Fix the bug.", { prompt_cache_key: "thread-a", reply: "resp_a1" }),
      responses("Explore the tests.", { prompt_cache_key: "thread-b", tools: [{ type: "function", name: "x" }] }),
      responses("Fix the bug.", { prompt_cache_key: "thread-a" }),
      responses("And the docs?", { previous_response_id: "resp_a1" }),
    ]);
    // The chained turn sends only its new input: the provider holds the rest, so nothing there broke.
    expect(records[3]!.prefix).toMatchObject({ from: 1, breakAt: null });
    expect(records.map((r) => r.conversation)).toEqual([
      { id: "c1", role: "main", by: "prompt_cache_key" },
      { id: "c2", role: "subagent", parent: "c1", by: "prompt_cache_key" },
      { id: "c1", role: "main", by: "prompt_cache_key" },
      { id: "c1", role: "main", by: "prompt_cache_key" },
    ]);
  });
});

describe("the cost model reads as the capture does (analysis/cost, issue 34)", () => {
  it("A, a side call on the same model, A again: the third request reads A's prefix and is priced so", async () => {
    const dir = tempDir("conversations-cost-");
    const capture = new Capture({ run: "sdk", probe: "sdk", dir, db: null, markers: {}, codecFor, tokenCache: null });
    await capture.ready();
    for (const row of jsonlObjects<FixtureRow & { ts: string; url: string }>(
      join(FIXTURES, "anthropic-sdk-1.16.0-side-call.jsonl"),
    )) {
      // The mock answered with its estimate of the usage, as its header said.
      const outcome = {
        body: row.response,
        status: 200,
        firstByteMs: 0,
        ending: "complete",
        usageEstimated: true,
      } as const;
      await capture.recordExchange({ kind: "loop", api: row.api, url: row.url, body: row.body }, outcome, row.ts, 1);
    }
    capture.close();
    const cost = await runCost(folderSource(dir, { runsDir: dir }), { pricing: loadPricing() });
    const [first, side, third] = cost.requests;
    // Sonnet 4.5 caches from 1,024 tokens: A's first turn writes its prefix, the title call (35 tokens)
    // writes nothing, and A's next turn reads what the first wrote, though the title call came between.
    expect(first!.predicted.cacheWrite5m).toBeGreaterThan(1024);
    expect(side!.predicted).toMatchObject({ cacheRead: 0, cacheWrite5m: 0 });
    expect(third!.predicted.cacheRead).toBe(first!.predicted.cacheWrite5m);
    expect(third!.breakDetail).toBeNull();
    expect(third!.predictedCost!).toBeLessThan(first!.predictedCost! / 5);
    // Nothing A wrote went unread; the last request's own write is the only amplification.
    const rates = cacheRates(cost);
    expect(rates.requests.map((r) => r.unread)).toEqual([0, 0, third!.predicted.cacheWrite5m]);
  });
});

describe("chat completions without tools (SDK scripts, the Gemini routing call, pi)", () => {
  const chat = (messages: unknown[], extra: Record<string, unknown> = {}): Sent => ({
    api: "openai-completions",
    body: JSON.stringify({ model: "gpt-4.1-mini", messages, ...extra }),
  });
  const ask = (text: string) => [
    { role: "system", content: "Be brief." },
    { role: "user", content: text },
  ];
  const tool = { type: "function", function: { name: "read", parameters: { type: "object" } } };

  it("a script's second chat without tools is a main conversation of its own, not a side call", async () => {
    const records = await captured([chat(ask("Name a colour.")), chat(ask("Name a fruit."))]);
    expect(records.map((r) => r.conversation)).toEqual([
      { id: "c1", role: "main", by: "content" },
      { id: "c2", role: "main", by: "content" },
    ]);
  });

  it("without tools while a conversation with tools runs, or asking for a JSON-schema answer, it is a side call", async () => {
    const format = { type: "json_schema", json_schema: { name: "route", schema: { type: "object" } } };
    const records = await captured([
      chat(ask("Route: read a.txt"), { response_format: format }),
      chat(ask("Read a.txt"), { tools: [tool] }),
      chat(ask("Summarise the session.")),
    ]);
    expect(records.map((r) => r.conversation)).toEqual([
      { id: "c1", role: "side", by: "content" },
      { id: "c2", role: "main", by: "content" },
      { id: "c3", role: "side", parent: "c2", by: "content" },
    ]);
  });
});
