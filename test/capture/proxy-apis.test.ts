import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import { loadTokenCounter } from "../../src/capture/tokens.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl, MAIN, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

async function mockWith(script: { text: string }[]): Promise<{ mock: MockServer; runs: string }> {
  const runs = tempDir("proxy-apis-");
  const mock = await startMockServer({ name: "apis", markers: {}, script, modelId: "mock-model" }, { runsDir: runs });
  closers.push(() => mock.close());
  return { mock, runs };
}

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const user = (text: string) => [{ role: "user", content: text }];

describe("mock: each API's reply form", () => {
  it("answers JSON for stream:false and SSE for stream:true on every API; chat streams carry usage only when asked", async () => {
    const { mock } = await mockWith(Array.from({ length: 5 }, (_, i) => ({ text: `reply ${i}` })));
    const calls = [
      ["chat/completions", { model: "m", messages: user("a"), stream: false }, "application/json"],
      ["messages", { model: "m", max_tokens: 5, messages: user("b") }, "application/json"],
      ["responses", { model: "m", input: "c", stream: true }, "text/event-stream"],
      ["chat/completions", { model: "m", messages: user("d"), stream: true }, "text/event-stream"],
      [
        "chat/completions",
        { model: "m", messages: user("e"), stream: true, stream_options: { include_usage: true } },
        "text/event-stream",
      ],
    ] as const;
    const texts: string[] = [];
    for (const [path, body, type] of calls) {
      const reply = await post(`${mock.baseUrl}/${path}`, body);
      expect(reply.headers.get("content-type"), path).toBe(type);
      expect(reply.headers.get("x-payload-probe-usage")).toBe("estimate");
      texts.push(await reply.text());
    }
    expect(JSON.parse(texts[0]!).choices[0].message.content).toBe("reply 0");
    expect(JSON.parse(texts[1]!)).toMatchObject({ type: "message", content: [{ type: "text", text: "reply 1" }] });
    // The reply's usage is our o200k count of the scripted text (the mock counts it through the token cache).
    const counter = await loadTokenCounter();
    expect(JSON.parse(texts[0]!).usage.completion_tokens).toBe(counter.countText("reply 0"));
    expect(JSON.parse(texts[1]!).usage.output_tokens).toBe(counter.countText("reply 1"));
    expect(texts[2]).toMatch(/^event: response\.created\n/);
    expect(texts[3]).not.toContain('"usage"');
    expect(texts[4]).toMatch(/"choices":\[\],"usage":\{"prompt_tokens":\d+/);
    const records = jsonl<RequestRecord>(join(mock.liveDir, "requests.jsonl"));
    expect(records.map((r) => r.usage?.source ?? null)).toEqual(["estimate", "estimate", "estimate", null, "estimate"]);
  });

  it("a bad body gets a 400 in its own API's error shape and takes no step", async () => {
    const { mock } = await mockWith([{ text: "only" }]);
    const anthropic = await post(`${mock.baseUrl}/messages`, { model: "m", messages: "hi" });
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "Invalid type for 'messages': expected an array of messages, got a string.",
      },
    });
    const responses = await post(`${mock.baseUrl}/responses`, { model: "m", input: [1] });
    expect(await responses.json()).toEqual({
      error: {
        message: "Invalid type for 'input[0]': expected an object, got a number.",
        type: "invalid_request_error",
        param: "input[0]",
        code: "invalid_type",
      },
    });
    expect((await post(`${mock.baseUrl}/responses`, { model: "m", input: "fine" })).status).toBe(200);
  });
});

describe("proxy CLI on all three APIs", () => {
  it("prints a line per request and a summary on stderr; report counts the requests without a row and says why", async () => {
    const { mock, runs } = await mockWith([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }]);
    const cli = await startCli(["proxy", "--upstream", mock.baseUrl, "--runs", runs, "--no-db"]);
    closers.push(() => cli.stop());
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const tool = { type: "function", function: { name: "look", description: "d", parameters: { type: "object" } } };
    await (await post(`${cli.url}/chat/completions`, { model: "gpt-x", messages: user("a"), tools: [tool] })).text();
    await (
      await post(`${cli.url}/messages`, { model: "claude-x", max_tokens: 9, messages: user("b"), stream: true })
    ).text();
    await (await fetch(`${cli.url}/models`)).text();
    await (await post(`${cli.url}/messages`, { model: "claude-x", messages: 7 })).text();
    await (await post(`${cli.url}/responses`, { model: "gpt-y", input: "c" })).text();
    const longer = [...user("a"), { role: "assistant", content: "one" }, ...user("d")];
    await (await post(`${cli.url}/chat/completions`, { model: "gpt-x", messages: longer, tools: [tool] })).text();
    expect(await cli.stop()).toBe(0);

    const lines = cli.stderr().trim().split("\n");
    expect(lines.slice(0, 6)).toEqual([
      expect.stringMatching(/^#1 openai-completions gpt-x tools 1 tokens \d+ status 200 c1 main new conversation$/),
      expect.stringMatching(/^#2 anthropic-messages claude-x tools 0 tokens \d+ status 200 c2 main new conversation$/),
      "#3 side /v1/models status 200 (no wire API)",
      "#4 side /v1/messages status 400 (unreadable: Invalid type for 'messages': expected an array of messages, got a number.)",
      expect.stringMatching(/^#5 openai-responses gpt-y tools 0 tokens \d+ status 200 c3 main new conversation$/),
      expect.stringMatching(
        /^#6 openai-completions gpt-x tools 1 tokens \d+ status 200 c1 main prefix kept \d+ B from #1$/,
      ),
    ]);
    expect(lines[6]).toMatch(
      /^proxy: 6 request\(s\): 4 recorded \(openai-completions 2, anthropic-messages 1, openai-responses 1\), 2 side; status 200×5, 400×1; \d+ tokens by our count; prefix broke 0 time\(s\); conversations c1 main ×2, c2 main ×1, c3 main ×1$/,
    );

    const report = spawnSync(process.execPath, [MAIN, "report", join(runs, "proxy"), "--json"], {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(report.status).toBe(0);
    expect((JSON.parse(report.stdout) as unknown[]).length).toBe(4);
    expect(report.stderr).toBe(
      [
        "2 request(s) have a payload but no row (their bodies are kept with the run's payloads):",
        "  #3 /v1/models is not a path of a wire API (chat/completions, messages, responses)",
        "  #4 body unreadable: Invalid type for 'messages': expected an array of messages, got a number.",
        "",
      ].join("\n"),
    );
  });
});
