/**
 * Text a capture holds is printed without its control characters: an agent sends, through the real
 * capture proxy to the mock, a model name, a system prompt, a tool name and a tool result holding
 * ESC, BEL, CSI and C1 sequences, and the proxy's live line, `show`, `report` and `diff` of what it
 * captured print each of them as a visible escape. Our own colours still reach the terminal.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { Context, ModelSpec, ToolDefinition } from "../../src/providers/types.js";
import { promptThenToolResult, startCli, writeTinyProbe } from "../capture/http-harness.js";
import { runInProcess } from "../fixtures/cli-in-process.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-escapes-"));
const runs = join(scratch, "runs");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const TITLE = "\x1b]0;pwned\x07";
const CLEAR = "\x1b[2J";
const C1_CSI = "\u009b31m";
const model: ModelSpec = {
  api: "openai-completions",
  ref: `openai/gpt${TITLE}-4.1`,
  id: `gpt${TITLE}-4.1`,
  baseUrl: "",
  maxTokens: 1024,
  reasoning: false,
};
const tool = (name: string): ToolDefinition => ({
  name,
  description: `Reads what it is asked for.${CLEAR}`,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
});

/** Raw C0 controls other than newline, DEL, C1 controls: what must not reach a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

/** Two requests through the proxy CLI, the second carrying the tool result; returns the proxy's stderr. */
async function captureSession(name: string, systemLine: string): Promise<string> {
  const mock = await startMockServer((await writeTinyProbe(scratch)).model, {
    runsDir: join(scratch, "mock-runs"),
    database: false,
  });
  const proxy = await startCli(["proxy", "--upstream", mock.baseUrl, "--runs", runs, "--name", name, "--no-db"]);
  try {
    const context: Context = {
      systemPrompt: `You are careful.\n${systemLine}\nAnswer briefly.`,
      tools: [tool("read"), tool(`evil${CLEAR}tool`)],
      messages: [{ role: "user", content: "read notes.txt" }],
    };
    await promptThenToolResult(proxy.url, model, context, `the notes${CLEAR}${C1_CSI}red\x1b[0m`);
  } finally {
    await proxy.stop();
    await mock.close();
  }
  return proxy.stderr();
}

let liveLines: string;
beforeAll(async () => {
  liveLines = await captureSession("a", `Title line ${TITLE}`);
  await captureSession("b", `Title line ${TITLE} ${CLEAR} changed`);
});

/**
 * stdout of a command run in this process (test/fixtures/cli-in-process.ts: the live line above is the
 * built CLI's); colour is off unless `colour` (so our own SGR codes are apart from the check).
 */
async function printed(args: string[], colour = false): Promise<string> {
  const env = colour ? { NO_COLOR: undefined, FORCE_COLOR: "1" } : { NO_COLOR: "1", FORCE_COLOR: undefined };
  const result = await runInProcess(env, ...args, "--runs", runs);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return result.stdout;
}

describe("captured text printed to a terminal", () => {
  it("the proxy's live line shows the model name's escapes, not the raw bytes", () => {
    const line = liveLines.split("\n").find((l) => l.startsWith("#1 "))!;
    expect(line).toContain("gpt\\x1b]0;pwned\\x07-4.1");
    expect(liveLines).not.toMatch(RAW_CONTROL);
  });

  it("show prints the system prompt, tool names and the tool result with visible escapes", async () => {
    const out = await printed(["show", "a", "2"]);
    expect(out).toContain("Title line \\x1b]0;pwned\\x07");
    expect(out).toContain("evil\\x1b[2Jtool");
    expect(out).toContain("\\u009b31mred");
    expect(out).not.toMatch(RAW_CONTROL);
    // The JSON form was already safe and stays as it was: the texts whole, escaped by JSON.
    expect(JSON.parse(await printed(["show", "a", "2", "--json"])).model).toBe(model.id);
  });

  it("report and diff print tool names and system lines with visible escapes, in every text format", async () => {
    for (const format of [[], ["--markdown"], ["--segments"]]) {
      const report = await printed(["report", "a", ...format]);
      expect(report).toContain("evil\\x1b[2Jtool");
      expect(report).not.toMatch(RAW_CONTROL);
    }
    const diff = await printed(["diff", "a", "b"]);
    expect(diff).toContain("tools    same [read, evil\\x1b[2Jtool]");
    expect(diff).toContain("\\u001b[2J changed"); // system lines were already quoted as JSON
    expect(diff).not.toMatch(RAW_CONTROL);
  });

  it("our own colours still reach a terminal, and are the only escape sequences there", async () => {
    const coloured = await printed(["report", "a"], true);
    expect(coloured).toContain("\x1b[1mseq\x1b[22m"); // the head, in bold
    // biome-ignore lint/suspicious/noControlCharactersInRegex: our SGR colour codes are taken out
    const uncoloured = coloured.replace(/\x1b\[\d+m/g, "");
    expect(uncoloured).toContain("evil\\x1b[2Jtool");
    expect(uncoloured).not.toMatch(RAW_CONTROL);
  });
});
