/**
 * A body's view items and frame made part by part (analysis/view/part-items.ts, element-segments.ts)
 * are the ones its whole dissection gives (view-data.ts's whole path: the codec's dissection of the
 * body, its frame cut by bodyFrame), for every wire API: real Codex 0.169.0 and Gemini CLI 0.61.0
 * bodies (test/fixtures/real-agents) and the bodies the runtime sends as pi does, each conversation
 * grown by tool rounds as a working session's is; a page of such a run, captured, is the same
 * whether its bodies are stored in parts or whole, and where the parts make a body's frame, the
 * page never joins a body.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type LazyPayload, type RunSource, resolveRun } from "../../../src/analysis/load-run.js";
import { PartItems, type SegmentItems } from "../../../src/analysis/view/part-items.js";
import type { ViewItem } from "../../../src/analysis/view/types.js";
import { bodyFrame } from "../../../src/analysis/view/view-data.js";
import { writeViewPage } from "../../../src/analysis/view/view-page.js";
import { Capture } from "../../../src/capture/capture.js";
import { loadTokenCounter } from "../../../src/capture/tokens.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { baseUrlFor, resolveModel } from "../../../src/providers/models.js";
import type { Context, Message, WireApi } from "../../../src/providers/types.js";
import { partedBody } from "../../fixtures/parted-body.js";

const base = mkdtempSync(join(tmpdir(), "pp-view-apis-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const long = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word}${i % 23}`).join(" ");

/** A real agent's bodies from test/fixtures/real-agents, with their paths. */
function realBodies(file: string): { path: string; body: string }[] {
  const fixture = JSON.parse(readFileSync(join(PROJECT_ROOT, "test/fixtures/real-agents", file), "utf8")) as {
    requests: { path: string; body: string }[];
  };
  return fixture.requests;
}

/** A body's array `key` grown by `rounds` tool rounds, one more each request: the requests after it. */
function grown(body: string, key: string, round: (n: number) => unknown[], rounds: number): string[] {
  const parsed = JSON.parse(body) as Record<string, unknown[]>;
  const bodies: string[] = [];
  for (let n = 1; n <= rounds; n++) {
    parsed[key] = [...parsed[key]!, ...round(n)];
    bodies.push(JSON.stringify(parsed));
  }
  return bodies;
}

const codexRound = (n: number) => [
  { type: "function_call", name: "exec_command", arguments: `{"cmd":"cat f${n}"}`, call_id: `call_${n}` },
  { type: "function_call_output", call_id: `call_${n}`, output: long(`line${n}`, 900) },
];
const geminiRound = (n: number) => [
  { role: "model", parts: [{ functionCall: { name: "read_file", args: { path: `f${n}` } } }] },
  { role: "user", parts: [{ functionResponse: { name: "read_file", response: { output: long(`row${n}`, 900) } } }] },
];

/** A conversation of `rounds` tool rounds with long results, as the runtime holds it. */
function context(rounds: number): Context {
  const messages: Message[] = [{ role: "user", content: "Read the files and summarise them." }];
  for (let n = 1; n <= rounds; n++) {
    messages.push({ role: "assistant", text: "", toolCalls: [{ id: `c${n}`, name: "read", arguments: `{"n":${n}}` }] });
    messages.push({
      role: "tool",
      toolCallId: `c${n}`,
      toolName: "read",
      content: long(`out${n}`, 900),
      isError: false,
    });
  }
  return {
    systemPrompt: long("system", 1200),
    environment: "cwd: /work",
    messages,
    tools: ["read", "grep", "edit"].map((name) => ({
      name,
      description: long(name, 200),
      parameters: { type: "object", properties: { n: { type: "number" } } },
    })),
  };
}

const MODELS: Record<WireApi, string> = {
  "openai-completions": "openai/gpt-4.1",
  "anthropic-messages": "anthropic/claude-sonnet-4-5",
  "openai-responses": "openai/gpt-5",
  "google-generative-ai": "google/gemini-2.5-flash",
  "bedrock-converse": "bedrock/anthropic.claude-sonnet-4-5",
};

/** The runtime's bodies of a session of `requests` requests on `api`, with their URLs. */
function runtimeBodies(api: WireApi, requests: number): { url: string; body: string }[] {
  const model = resolveModel(MODELS[api], api, baseUrlFor(api, "http://127.0.0.1:8787/v1"));
  return Array.from({ length: requests }, (_, i) => {
    const { url, body } = codecFor(api).buildRequest(model, context(i + 1), "loop");
    return { url, body };
  });
}

/** Captures the bodies as one run in `dir`, as the proxy does. */
async function captureRun(dir: string, api: WireApi, bodies: { url: string; body: string }[]): Promise<void> {
  const capture = new Capture({ run: "r", probe: "p", dir, db: null, markers: {}, codecFor });
  for (const [i, { url, body }] of bodies.entries()) {
    const outcome = { body: "", status: 200, firstByteMs: 0, ending: "complete" } as const;
    const at = new Date(Date.UTC(2026, 11, 5, 10, 0, i)).toISOString();
    await capture.recordExchange({ kind: "loop", api, url, body }, outcome, at, 1);
  }
  capture.close();
}

/** The run with every body stored whole, as runs were before bodies were stored in parts. */
function wholeCopy(dir: string): string {
  const whole = `${dir}-whole`;
  const source = resolveRun(dir, { runsDir: base });
  const rows = [...source.payloads()].map((p) => JSON.stringify({ type: "request", ...p }));
  cpSync(dir, whole, { recursive: true });
  writeFileSync(join(whole, "payloads.jsonl"), `${rows.join("\n")}\n`);
  return whole;
}

/** The run's source, each body's joins counted. */
function counted(dir: string): { source: RunSource; joins: () => number } {
  const source = resolveRun(dir, { runsDir: base });
  let joins = 0;
  const lazyPayloads = function* (): Generator<LazyPayload> {
    for (const payload of source.lazyPayloads()) {
      const load = () => {
        joins++;
        return payload.load();
      };
      yield { ...payload, stored: () => payload.stored(), load };
    }
  };
  return { source: Object.assign(Object.create(source) as RunSource, { lazyPayloads }), joins: () => joins };
}

async function pageOf(source: RunSource, name: string): Promise<{ index: string; items: ViewItem[] }> {
  const out = join(base, `${name}.html`);
  writeViewPage(out, [source], null, { counter: await loadTokenCounter(), markers: {}, rawBytes: 0 });
  const html = readFileSync(out, "utf8");
  const element = (id: string) => {
    const open = `<script type="application/json" id="${id}">`;
    const start = html.indexOf(open) + open.length;
    return html.slice(start, html.indexOf("</script>", start));
  };
  return { index: element("view-index"), items: JSON.parse(element("view-items")) as ViewItem[] };
}

/** Pages of the run parted and whole; returns how many bodies the parted page joined. */
async function compare(name: string, api: WireApi, bodies: { url: string; body: string }[]): Promise<number> {
  const dir = join(base, name);
  await captureRun(dir, api, bodies);
  expect(readFileSync(join(dir, "payloads.jsonl"), "utf8")).toContain('"type":"part"');
  const parted = counted(dir);
  const page = await pageOf(parted.source, name);
  const whole = await pageOf(resolveRun(wholeCopy(dir), { runsDir: base }), `${name}-whole`);
  expect(page.items).toEqual(whole.items);
  expect(page.index.replace(/"label":"[^"]*"/, "")).toBe(whole.index.replace(/"label":"[^"]*"/, ""));
  expect(page.items.filter((i) => i[0] === "msg").length).toBeGreaterThan(bodies.length);
  return parted.joins();
}

/** Items as the page's table makes them: one id per distinct content, in the order first asked for. */
class ItemLog implements SegmentItems {
  readonly made: string[] = [];
  private readonly ids = new Map<string, number>();
  private id(key: string): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.made.push(key) - 1;
    this.ids.set(key, id);
    return id;
  }
  tool(name: string, json: string): number {
    return this.id(`tool ${name} ${json}`);
  }
  systemPart(text: string): number {
    return this.id(`sys ${text}`);
  }
  message(role: string, json: string): number {
    return this.id(`msg ${role} ${json}`);
  }
}

const HOLE = "\u0000";

interface Session {
  api: WireApi;
  bodies: { url: string; body: string }[];
  /** Whether the parts make every frame (else some are made from the body joined). */
  framesFromParts: boolean;
}

function codexSession(): Session {
  const [first, second] = realBodies("codex-0.169.0-default-model.json");
  const bodies = [first!.body, second!.body, ...grown(second!.body, "input", codexRound, 4)];
  // A namespace's tools are no text of the body (wire-tools.ts): the whole body's cut leaves the body whole.
  return {
    api: "openai-responses",
    bodies: bodies.map((body) => ({ url: "/v1/responses", body })),
    framesFromParts: false,
  };
}

function geminiCliSession(): Session {
  const [, chat] = realBodies("gemini-cli-0.61.0.json");
  const url = `http://127.0.0.1:8787${chat!.path}`;
  const bodies = [chat!.body, ...grown(chat!.body, "contents", geminiRound, 5)];
  return { api: "google-generative-ai", bodies: bodies.map((body) => ({ url, body })), framesFromParts: true };
}

/** Responses with `instructions` at the top (Codex's other models), the system items left out. */
function instructionsSession(): Session {
  const bodies = runtimeBodies("openai-responses", 4).map(({ url, body }) => {
    const parsed = JSON.parse(body) as { input: { role?: string }[] };
    const input = parsed.input.filter((item) => item.role !== "system");
    return { url, body: JSON.stringify({ ...parsed, instructions: long("codex", 900), input }) };
  });
  return { api: "openai-responses", bodies, framesFromParts: true };
}

const SESSIONS: Record<string, () => Session> = {
  "Codex 0.169.0 (Responses, its tools in an additional_tools item)": codexSession,
  "Gemini CLI 0.61.0 (systemInstruction around the parts, a tool of many declarations)": geminiCliSession,
  "Responses with instructions": instructionsSession,
  ...Object.fromEntries(
    (
      [
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "bedrock-converse",
        "anthropic-messages",
      ] as const
    ).map((api) => [`${api} as pi sends it`, () => ({ api, bodies: runtimeBodies(api, 5), framesFromParts: true })]),
  ),
};

describe("view items part by part, every wire API", () => {
  for (const [name, make] of Object.entries(SESSIONS)) {
    it(`${name}: the items and frame of the whole body's dissection`, () => {
      const { api, bodies, framesFromParts } = make();
      const [partLog, wholeLog] = [new ItemLog(), new ItemLog()];
      const parts = new PartItems(partLog, (letter) => HOLE + letter);
      for (const { url, body } of bodies) {
        const d = codecFor(api).dissect(body, url);
        const expected = {
          tools: d.tools.map((t) => wholeLog.tool(t.name, t.json)),
          system: d.systemParts.map((p) => wholeLog.systemPart(p)),
          messages: d.messages.map((m) => wholeLog.message(m.role, m.json)),
        };
        const made = parts.of(api, partedBody(body))!;
        expect({ tools: made.tools(), system: made.system(), messages: [...made.messages()] }).toEqual(expected);
        const frame = made.frame();
        if (framesFromParts) expect(frame).toBe(bodyFrame(body, d));
        else expect(frame).toBeNull();
      }
      expect(partLog.made).toEqual(wholeLog.made);
      expect(wholeLog.made.length).toBeGreaterThan(bodies.length);
    });
  }
});

describe("a page of a run stored in parts", () => {
  for (const [name, make] of Object.entries(SESSIONS)) {
    it(`${name}: the page of the run stored whole, joining a body only for a frame the parts do not make`, async () => {
      const { api, bodies, framesFromParts } = make();
      const joins = await compare(name.replace(/\W+/g, "-"), api, bodies);
      expect(joins).toBe(framesFromParts ? 0 : bodies.length);
    });
  }
});
