import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it, vi } from "vitest";
import { cacheOrderText, locatePrefixBreak, PrefixLocator, sharedPrefixBytes } from "../../src/capture/prefix.js";
import { loadTokenCounter } from "../../src/capture/tokens.js";
import type { WireDissection } from "../../src/providers/types.js";

/**
 * Requests are built as real openai-completions bodies and split by hand into the dissection a
 * codec would give: each tool's and message's JSON is its exact text inside the body.
 */
type Tool = { type: "function"; function: { name: string; description: string; parameters: object; strict: false } };
type Msg = { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string };

function tool(name: string, description: string, parameters: object = { type: "object", properties: {} }): Tool {
  return { type: "function", function: { name, description, parameters, strict: false } };
}

function completionsRequest(tools: Tool[], system: string[], messages: Msg[]): WireDissection {
  const body = JSON.stringify({
    model: "qwen3.8-flash",
    messages: [...system.map((content) => ({ role: "system", content })), ...messages],
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 131072,
    tools,
    enable_thinking: false,
  });
  const d: WireDissection = {
    model: "qwen3.8-flash",
    tools: tools.map((t) => ({ name: t.function.name, json: JSON.stringify(t) })),
    toolsJson: JSON.stringify(tools),
    systemParts: system,
    messages: messages.map((m) => ({
      role: m.role,
      json: JSON.stringify(m),
      text: typeof m.content === "string" ? m.content : "",
    })),
    roles: [...system.map(() => "system"), ...messages.map((m) => m.role)],
  };
  // The hand split must be faithful: every piece is verbatim text of the body.
  for (const piece of [...d.tools.map((t) => t.json), ...d.messages.map((m) => m.json), d.toolsJson!]) {
    expect(body.includes(piece)).toBe(true);
  }
  return d;
}

const read = tool("read", "Read a file from disk.", {
  type: "object",
  properties: { path: { type: "string" } },
  required: ["path"],
});
const bash = tool("bash", "Run a shell command.");
const edit = tool("edit", "Replace text in a file.");
const write = tool("write", "Write a whole file.");
const mcp = tool("mcp", "Search and call MCP tools.");
const aTool1 = tool("a_tool1", "Call tool1 on server a.");

const SYSTEM = [
  "You are a coding agent — careful and brief.",
  "Available tools:",
  "- mcp: MCP gateway, search first",
  "- read: Read files",
  "",
  "Guidelines:",
  "- Prefer small edits.",
].join("\n");

const u1: Msg = { role: "user", content: [{ type: "text", text: "Find tool1 ✓" }] };
const a1: Msg = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_1", type: "function", function: { name: "mcp", arguments: '{"search":"tool1"}' } }],
};
const t1: Msg = { role: "tool", content: 'Found 1 tool matching "tool1"', tool_call_id: "call_1" };
const a2: Msg = { role: "assistant", content: "Done." };

const json = (value: unknown): string => JSON.stringify(value);
const bytes = (text: string): number => Buffer.byteLength(text, "utf8");
const TOOL_JSON_HEAD = '{"type":"function","function":{"name":"';

describe("cacheOrderText", () => {
  it("lays a request out as tools, then system parts, then messages, one segment after another", () => {
    const d = completionsRequest([read, mcp], [SYSTEM], [u1, a1]);
    expect(cacheOrderText(d)).toBe([json(read), json(mcp), SYSTEM, json(u1), json(a1)].join("\n"));
  });
});

describe("locatePrefixBreak", () => {
  it("reports nothing shared and no break for the first request of a run", () => {
    const d = completionsRequest([read], [SYSTEM], [u1]);
    expect(locatePrefixBreak(null, d)).toEqual({ sharedBytes: 0, breakAt: null, breakDetail: null });
  });

  it("does not call appended messages a break, and shares the whole previous request", () => {
    const prev = completionsRequest([read, mcp], [SYSTEM], [u1]);
    const cur = completionsRequest([read, mcp], [SYSTEM], [u1, a1, t1]);
    const prevText = [json(read), json(mcp), SYSTEM, json(u1)].join("\n");
    expect(locatePrefixBreak(prev, cur)).toEqual({ sharedBytes: bytes(prevText), breakAt: null, breakDetail: null });
    // The em dash and the check mark make bytes and string length differ.
    expect(bytes(prevText)).toBeGreaterThan(prevText.length);
  });

  it("shares everything of an identical request", () => {
    const d = completionsRequest([read], [SYSTEM], [u1, a1]);
    const again = completionsRequest([read], [SYSTEM], [u1, a1]);
    expect(locatePrefixBreak(d, again)).toEqual({
      sharedBytes: bytes(cacheOrderText(d)),
      breakAt: null,
      breakDetail: null,
    });
  });

  it("names the system line a new tool was added on, and the bytes shared up to it", () => {
    const prev = completionsRequest([mcp, aTool1], [SYSTEM], [u1]);
    const grown = SYSTEM.replace("- read: Read files", "- a_tool1: Call tool1 on server a.\n- read: Read files");
    const cur = completionsRequest([mcp, aTool1], [grown], [u1, a1]);
    const common = `${json(mcp)}\n${json(aTool1)}\nYou are a coding agent — careful and brief.\nAvailable tools:\n- mcp: MCP gateway, search first\n- `;
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(common),
      breakAt: "system",
      breakDetail: 'system[0] line 4 added: "- a_tool1: Call tool1 on server a."',
    });
  });

  it("names a changed system line and quotes its new text", () => {
    const prev = completionsRequest([read], [SYSTEM], [u1]);
    const cur = completionsRequest([read], [SYSTEM.replace("careful and brief", "careful and terse")], [u1]);
    const common = `${json(read)}\nYou are a coding agent — careful and `;
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(common),
      breakAt: "system",
      breakDetail: 'system[0] line 1 changed: "You are a coding agent — careful and terse."',
    });
  });

  it("names a removed system line and quotes what it said", () => {
    const prev = completionsRequest([], [SYSTEM], []);
    const cur = completionsRequest([], [SYSTEM.replace("- read: Read files\n", "")], []);
    const common = "You are a coding agent — careful and brief.\nAvailable tools:\n- mcp: MCP gateway, search first\n";
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(common),
      breakAt: "system",
      breakDetail: 'system[0] line 4 removed: "- read: Read files"',
    });
  });

  it("keeps matching past the end of a system part that the new part only extends", () => {
    const prev = completionsRequest([read], ["Rules:"], [u1]);
    const cur = completionsRequest([read], ["Rules:\n- be brief"], [u1]);
    // prev goes on with "\n" + the user message, cur with "\n- be brief": the line break is shared too.
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(`${json(read)}\nRules:\n`),
      breakAt: "system",
      breakDetail: 'system[0] line 2 added: "- be brief"',
    });
  });

  it("names a system part that was added", () => {
    const prev = completionsRequest([], [SYSTEM], [u1]);
    const cur = completionsRequest([], [SYSTEM, "Current date: 2025-01-01\nCwd: /tmp"], [u1]);
    const info = locatePrefixBreak(prev, cur);
    expect(info.breakAt).toBe("system");
    expect(info.breakDetail).toBe('system[1] added: "Current date: 2025-01-01"');
    expect(info.sharedBytes).toBe(bytes(`${SYSTEM}\n`));
  });

  it("names a tool added at the end of the tools", () => {
    const prev = completionsRequest([read, mcp], [SYSTEM], [u1, a1, t1]);
    const cur = completionsRequest([read, mcp, aTool1], [SYSTEM], [u1, a1, t1, a2]);
    // The system text starts with "Y", the new tool with "{": nothing of either is shared.
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(`${json(read)}\n${json(mcp)}\n`),
      breakAt: "tools",
      breakDetail: "tools[2] added: a_tool1",
    });
  });

  it("names a tool that was removed", () => {
    const prev = completionsRequest([read, mcp, aTool1], [SYSTEM], [u1]);
    const cur = completionsRequest([read, aTool1], [SYSTEM], [u1]);
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(`${json(read)}\n${TOOL_JSON_HEAD}`),
      breakAt: "tools",
      breakDetail: "tools[1] removed: mcp",
    });
  });

  it("names a tool moved forward, with its old and new position", () => {
    const prev = completionsRequest([read, bash, edit, write], [SYSTEM], [u1]);
    const cur = completionsRequest([read, write, bash, edit], [SYSTEM], [u1]);
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(`${json(read)}\n${TOOL_JSON_HEAD}`),
      breakAt: "tools",
      breakDetail: "tools reordered: write moved from 3 to 1",
    });
  });

  it("names a tool moved back, when that single move explains the new order", () => {
    const prev = completionsRequest([read, bash, edit], [SYSTEM], [u1]);
    const cur = completionsRequest([bash, edit, read], [SYSTEM], [u1]);
    const info = locatePrefixBreak(prev, cur);
    expect(info.breakDetail).toBe("tools reordered: read moved from 0 to 2");
    expect(info.sharedBytes).toBe(bytes(TOOL_JSON_HEAD));
  });

  it("names the key of a tool definition that changed, looking through the function wrapper", () => {
    const prev = completionsRequest([read, bash], [SYSTEM], [u1]);
    const cur = completionsRequest(
      [tool("read", "Read a file from the disk.", read.function.parameters), bash],
      [SYSTEM],
      [u1],
    );
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(`${TOOL_JSON_HEAD}read","description":"Read a file from `),
      breakAt: "tools",
      breakDetail: "tools[0] changed: read (description)",
    });

    const both = completionsRequest(
      [read, tool("bash", "Run one shell command.", { type: "object", properties: { command: { type: "string" } } })],
      [SYSTEM],
      [u1],
    );
    expect(locatePrefixBreak(prev, both).breakDetail).toBe("tools[1] changed: bash (description, parameters)");
  });

  it("names an earlier message that was edited, where in it, and its new text", () => {
    const prev = completionsRequest([mcp], [SYSTEM], [u1, a1, t1]);
    const t1Edited: Msg = { ...t1, content: 'Found 2 tools matching "tool"' };
    const cur = completionsRequest([mcp], [SYSTEM], [u1, a1, t1Edited, a2]);
    const messageHead = '{"role":"tool","content":"Found ';
    const common = `${json(mcp)}\n${SYSTEM}\n${json(u1)}\n${json(a1)}\n${messageHead}`;
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(common),
      breakAt: "messages",
      // The rest of the edited string as text (quoted once), from the first character that differs.
      breakDetail: `messages[2] edited (tool) at char ${messageHead.length}: ${JSON.stringify('2 tools matching "tool"')}`,
    });
  });

  it("quotes an edit that starts at an escape as the text it stands for, quoted once", () => {
    const prev = completionsRequest([mcp], [SYSTEM], [{ role: "user", content: "# Environment\nYou have a shell" }]);
    const cur = completionsRequest([mcp], [SYSTEM], [{ role: "user", content: "# Environment\tYou have a shell" }]);
    expect(locatePrefixBreak(prev, cur).breakDetail).toBe(
      // The first unit that differs is the escape's letter (n, t): the excerpt takes the escape whole.
      `messages[0] edited (user) at char ${'{"role":"user","content":"# Environment\\'.length}: ${JSON.stringify("\tYou have a shell")}`,
    );
  });

  it("names messages that were dropped from the history", () => {
    const prev = completionsRequest([mcp], [SYSTEM], [u1, a1, t1]);
    const cur = completionsRequest([mcp], [SYSTEM], [u1]);
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: bytes(cacheOrderText(cur)),
      breakAt: "messages",
      breakDetail: "messages[1] removed: assistant (+1 more)",
    });
  });

  it("reports the first break in cache order when several parts changed", () => {
    const prev = completionsRequest([read], [SYSTEM], [u1, a1]);
    const cur = completionsRequest([read, mcp], [SYSTEM.replace("brief", "terse")], [u1]);
    expect(locatePrefixBreak(prev, cur).breakDetail).toBe("tools[1] added: mcp");
  });

  it("names the line a shortened system part lost at its end", () => {
    const prev = completionsRequest([], ["a\nb\nc"], []);
    const cur = completionsRequest([], ["a\nb"], []);
    expect(locatePrefixBreak(prev, cur)).toEqual({
      sharedBytes: 3,
      breakAt: "system",
      breakDetail: 'system[0] line 3 removed: "c"',
    });
  });

  it("counts lines from a text that starts with a line break", () => {
    const prev = completionsRequest([], ["\nx\ny"], []);
    const cur = completionsRequest([], ["\nx\nz"], []);
    expect(locatePrefixBreak(prev, cur).breakDetail).toBe('system[0] line 3 changed: "z"');
    const first = completionsRequest([], ["x"], []);
    expect(locatePrefixBreak(first, completionsRequest([], ["y"], [])).breakDetail).toBe(
      'system[0] line 1 changed: "y"',
    );
  });

  it("keeps a long quoted line to one short line of text", () => {
    const long = `- ${"x".repeat(200)}`;
    const prev = completionsRequest([], ["a\nb"], []);
    const cur = completionsRequest([], [`a\n${long}\nb`], []);
    const detail = locatePrefixBreak(prev, cur).breakDetail!;
    expect(detail).toBe(`system[0] line 2 added: "- ${"x".repeat(58)}…"`);
    expect(detail.includes("\n")).toBe(false);
  });
});

describe("locatePrefixBreak with a token counter", () => {
  // The same ChatML rendering tokens.ts documents, built with gpt-tokenizer's own chat encoder.
  const chatTokens = (d: WireDissection): number[] =>
    encodeChat(
      [
        ...d.tools.map((t) => ({ role: "tools", content: t.json })),
        ...d.systemParts.map((content) => ({ role: "system", content })),
        ...d.messages.map((m) => ({ role: "messages", content: m.json })),
      ],
      "gpt-4o",
      { disallowedSpecial: new Set() },
    );
  const commonTokens = (a: number[], b: number[]): number => {
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return i;
  };

  it("counts the tokens two requests share, as the chat encoder of the tokenizer sees them", async () => {
    const counter = await loadTokenCounter();
    const base = completionsRequest([read, mcp], [SYSTEM], [u1]);
    const cases = [
      completionsRequest([read, mcp], [SYSTEM], [u1, a1, t1]),
      completionsRequest([read, mcp], [SYSTEM.replace("careful and brief", "careful and terse")], [u1]),
      completionsRequest([read, mcp, aTool1], [SYSTEM], [u1]),
      completionsRequest([read], [SYSTEM], [u1]),
      completionsRequest([read, mcp], [SYSTEM], [u1]),
    ];
    for (const cur of cases) {
      const info = locatePrefixBreak(base, cur, counter);
      expect(info.sharedTokens).toBe(commonTokens(chatTokens(base), chatTokens(cur)));
    }
    expect(locatePrefixBreak(null, base, counter).sharedTokens).toBe(0);
  });
});

describe("sharedPrefixBytes", () => {
  it("counts the UTF-8 bytes of the common start", () => {
    expect(sharedPrefixBytes("hello world", "hello there")).toBe(6);
    expect(sharedPrefixBytes("abc", "abc")).toBe(3);
    expect(sharedPrefixBytes("abc", "abcdef")).toBe(3);
    expect(sharedPrefixBytes("", "x")).toBe(0);
    expect(sharedPrefixBytes("— ok", "— no")).toBe(bytes("— "));
  });

  it("counts whole characters only", () => {
    // é and è share their first UTF-8 byte (0xC3), but the characters differ.
    expect(sharedPrefixBytes("héllo", "hèllo")).toBe(1);
    // 😀 and 😁 share their high surrogate; half a character is not shared.
    expect(sharedPrefixBytes("a😀", "a😁")).toBe(1);
    expect(sharedPrefixBytes("a😀b", "a😀c")).toBe(1 + 4);
  });

  it("finds a difference deep inside long texts", () => {
    const head = "ünïcödé ".repeat(500);
    expect(sharedPrefixBytes(`${head}left`, `${head}right`)).toBe(bytes(head));
    expect(sharedPrefixBytes(`${head}same`, `${head}same`)).toBe(bytes(`${head}same`));
  });
});

describe("locatePrefixBreak over runs of random requests", () => {
  /** Small deterministic generator, so a failure can be replayed. */
  function random(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (state * 1664525 + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
  }

  /** The definition, computed the slow way: whole code points, then their UTF-8 bytes. */
  function referenceSharedBytes(a: string, b: string): number {
    const x = Array.from(a);
    const y = Array.from(b);
    let i = 0;
    while (i < x.length && i < y.length && x[i] === y[i]) i++;
    return Buffer.byteLength(x.slice(0, i).join(""));
  }

  function referenceBreakAt(prev: WireDissection, cur: WireDissection): string | null {
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);
    if (
      !same(
        prev.tools.map((t) => t.json),
        cur.tools.map((t) => t.json),
      )
    )
      return "tools";
    if (!same(prev.systemParts, cur.systemParts)) return "system";
    const kept = cur.messages.slice(0, prev.messages.length).map((m) => m.json);
    return same(
      prev.messages.map((m) => m.json),
      kept,
    )
      ? null
      : "messages";
  }

  it("matches the byte definition and the break category on every step of long random runs", () => {
    const next = random(20250101);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
    const words = ["read", "édit", "ok", "—", "😀", "x", "line\n", "\n", "{", "}", "tool"];
    const text = (n: number) => Array.from({ length: n }, () => pick(words)).join(pick(["", " "]));
    const segment = () => text(1 + Math.floor(next() * 12));

    for (let run = 0; run < 40; run++) {
      let tools = [segment(), segment()];
      let system = [segment()];
      let messages = [segment()];
      let prev: WireDissection | null = null;
      for (let step = 0; step < 30; step++) {
        const change = next();
        if (change < 0.4) messages = [...messages, segment()];
        else if (change < 0.5) tools = [...tools, segment()];
        else if (change < 0.6) tools = tools.slice(1);
        else if (change < 0.7) system = [system[0] + pick(["", "\n"]) + segment(), ...system.slice(1)];
        else if (change < 0.8) system = [...system, segment()];
        else if (change < 0.9 && messages.length > 0)
          messages = messages.map((m, i) => (i === 0 ? m.slice(0, Math.max(0, m.length - 2)) : m));
        // else: the same request again
        const cur: WireDissection = {
          model: "m",
          tools: tools.map((json, i) => ({ name: `t${i}`, json })),
          toolsJson: null,
          systemParts: system,
          messages: messages.map((json) => ({ role: "user", json, text: json })),
          roles: [],
        };
        const info = locatePrefixBreak(prev, cur);
        if (prev === null) {
          expect(info.sharedBytes).toBe(0);
        } else {
          expect(info.sharedBytes).toBe(referenceSharedBytes(cacheOrderText(prev), cacheOrderText(cur)));
          expect(info.breakAt).toBe(referenceBreakAt(prev, cur));
          expect(info.breakDetail === null).toBe(info.breakAt === null);
        }
        prev = cur;
      }
    }
  });

  /** A growing conversation with now and then a changed tool list or system prompt. */
  function randomRun(seed: number, steps: number): WireDissection[] {
    const next = random(seed);
    const segment = () =>
      `${seed}:${"ab😀é\n".slice(0, 1 + Math.floor(next() * 5)).repeat(1 + Math.floor(next() * 40))}`;
    const tools = [segment(), segment()];
    const system = [segment()];
    const messages: string[] = [];
    return Array.from({ length: steps }, () => {
      const change = next();
      if (change < 0.1) tools.push(segment());
      else if (change < 0.15) system[0] += segment();
      else messages.push(segment());
      return {
        model: "m",
        tools: tools.map((json, i) => ({ name: `t${i}`, json })),
        toolsJson: null,
        systemParts: [...system],
        messages: messages.map((json) => ({ role: "user", json, text: json })),
        roles: [],
      };
    });
  }

  it("two runs located interleaved in one process: each gets what it gets alone, and measures no more", () => {
    const runs = [randomRun(7, 60), randomRun(8, 60)];
    const measure = vi.spyOn(Buffer, "byteLength");
    let alone: ReturnType<PrefixLocator["locate"]>[][] = [];
    try {
      alone = runs.map((run) => {
        const locator = new PrefixLocator();
        return run.map((cur, i) => locator.locate(run[i - 1] ?? null, cur));
      });
      const measuredAlone = measure.mock.calls.length;
      measure.mockClear();
      const locators = runs.map(() => new PrefixLocator());
      const interleaved: ReturnType<PrefixLocator["locate"]>[][] = [[], []];
      for (let i = 0; i < 60; i++) {
        for (const r of [0, 1]) interleaved[r]!.push(locators[r]!.locate(runs[r]![i - 1] ?? null, runs[r]![i]!));
      }
      expect(interleaved).toEqual(alone);
      // Each locator still measures a kept segment once, however the other run's calls fall between.
      expect(measure.mock.calls.length).toBe(measuredAlone);
    } finally {
      measure.mockRestore();
    }
    for (const [r, run] of runs.entries()) {
      for (let i = 1; i < run.length; i++) {
        expect(alone[r]![i]!.sharedBytes).toBe(
          referenceSharedBytes(cacheOrderText(run[i - 1]!), cacheOrderText(run[i]!)),
        );
      }
    }
  });
});
