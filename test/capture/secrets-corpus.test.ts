/**
 * Issue 23's promise, end to end: credentials of every kind, made up in the test and placed where an
 * agent's traffic carries them (system prompts, user messages, tool results, `.env` dumps, tool
 * arguments as JSON inside JSON, SSE deltas split across chunks), pass through each way a run is
 * captured; afterwards no byte of any file under the runs folder — JSONL, payload-probe.db and its
 * WAL (read as bytes and through SQL), a view page, an imported profile — holds any of their values.
 * Each capture path is one entry of CAPTURE_PATHS. The proxy and the mock run as the built CLI's
 * children (their exit on a signal is part of what is checked); record and run run in this process
 * (test/fixtures/cli-in-process.ts): what they write is the point here, and their own children (the
 * command, the probe's tools) are real processes all the same.
 */

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { savedPageData } from "../analysis/view/saved-page.js";
import { cliInScratch, cliInScratchAt } from "../fixtures/cli-in-process.js";
import { CORPUS_SEED, credentialCorpus, dotEnv, lookAlikes } from "../fixtures/secret-corpus.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl, sqlDump, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

const corpus = credentialCorpus();
const env = dotEnv(corpus);
const alike = lookAlikes();
/** A reply that repeats some of the credentials, as a model quoting a config back does. */
const reply = `Found these in your config:\n${dotEnv(corpus.filter((_, i) => i % 3 === 0))}\nRotate them.`;

/** A text with the symbols Gson's JSON writer escapes (`<`, `>`, `&`, `=`, `'`) written as `\uXXXX` escapes. */
const gsonEscaped = (text: string) =>
  text.replace(/[<>&=']/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * Every form a value may take in a file: as is, with its slashes or all its characters escaped as
 * the bodies below send it, each JSON-escaped once and twice, and each long line of it.
 */
function needles(value: string): string[] {
  const forms = [value, value.replaceAll("/", "\\/"), gsonEscaped(value)];
  const once = forms.map((form) => JSON.stringify(form).slice(1, -1));
  const twice = once.map((form) => JSON.stringify(form).slice(1, -1));
  const lines = value.split("\n").filter((line) => line.length >= 16 && !line.startsWith("-----"));
  return [...new Set([...forms, ...once, ...twice, ...lines])];
}

/** What of the corpus each file under dir holds, as bytes and, for SQLite files, through SQL too. */
function leaks(dir: string): string[] {
  const found: string[] = [];
  const all = corpus.flatMap((c) => needles(c.value).map((needle) => ({ kind: c.kind, needle })));
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const texts = [readFileSync(path).toString("latin1")];
    if (entry.name.endsWith(".db")) texts.push(sqlDump(path));
    // A view page holds its data gzip'd: read as the page's script reads them.
    if (entry.name.endsWith(".html")) texts.push(...Object.values(savedPageData(texts[0]!)));
    for (const { kind, needle } of all)
      if (texts.some((text) => text.includes(needle))) found.push(`${path}: ${kind} ${needle.slice(0, 20)}…`);
  }
  return found;
}

/** The chat conversation as a PHP writer sends it (every slash escaped) and as Gson's does (`=`, `&`, `<`, `>`, `'`). */
function escapedConversations(): string[] {
  return [chatConversation().replaceAll("/", "\\/"), gsonEscaped(chatConversation())];
}

/** A chat completions conversation carrying the corpus in a system prompt, a user message, tool arguments and a tool result. */
function chatConversation(): string {
  const args = JSON.stringify({ path: ".env", content: env });
  return JSON.stringify({
    model: "m",
    stream: true,
    messages: [
      { role: "system", content: `You deploy with these settings:\n${env}` },
      { role: "user", content: `Here is my .env, and some ids:\n${env}\n${alike.join("\n")}` },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "write", arguments: args } }],
      },
      { role: "tool", tool_call_id: "call_1", content: `$ cat .env\n${env}` },
    ],
  });
}

/** An Anthropic Messages request with the corpus in its system blocks and a tool_result block. */
function messagesConversation(): string {
  return JSON.stringify({
    model: "m",
    max_tokens: 64,
    stream: true,
    system: [{ type: "text", text: `Secrets for the session:\n${env}` }],
    messages: [
      { role: "user", content: `Print the config.` },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "bash", input: { command: env } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: env }] },
    ],
  });
}

async function post(url: string, body: string): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  expect(response.status, url).toBe(200);
  await response.text();
}

/** An upstream that streams `reply` and a tool call's arguments in 5-character deltas: every key is split. */
async function splittingUpstream(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: unknown) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
      const args = JSON.stringify({ content: env });
      for (let at = 0; at < reply.length; at += 5) response.write(chunk({ content: reply.slice(at, at + 5) }));
      for (let at = 0; at < args.length; at += 5) {
        const call = {
          index: 0,
          ...(at === 0 && { id: "call_9", type: "function" }),
          function: { arguments: args.slice(at, at + 5) },
        };
        response.write(chunk({ tool_calls: [call] }));
      }
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** The proxy CLI in front of `upstream`: both conversations through it. */
async function throughProxy(runs: string, upstream: string, name: string): Promise<void> {
  const proxy = await startCli(["proxy", "--upstream", upstream, "--runs", runs, "--name", name]);
  closers.push(() => proxy.stop());
  await post(`${proxy.url}/chat/completions`, chatConversation());
  await post(`${proxy.url}/messages`, messagesConversation());
  for (const body of escapedConversations()) await post(`${proxy.url}/chat/completions`, body);
  expect(await proxy.stop()).toBe(0);
}

/** A probe of the runtime, written for the test: the corpus in the prompt, a bash call printing the .env, a reply quoting it. */
function corpusProbe(dir: string): string {
  const file = join(dir, "secrets-corpus.yaml");
  const probe = {
    name: "secrets-corpus",
    agent: { tools: "bash", noSkills: true },
    model: {
      script: [{ call: "bash", args: { command: `cat <<'EOF'\n${env}\nEOF` } }, { text: reply }],
    },
    prompts: [`My settings:\n${env}\n${alike.join("\n")}`],
    expect: { requests: 2 },
  };
  // JSON is YAML: every credential stays byte for byte what the test made.
  writeFileSync(file, JSON.stringify(probe));
  return file;
}

interface CapturePath {
  name: string;
  /** Captures the corpus into `runs`, leaving the run folders there; returns them. */
  capture(scratch: string, runs: string): Promise<string[]>;
}

const CAPTURE_PATHS: CapturePath[] = [
  {
    name: "the proxy in front of the mock (and the mock's own run)",
    async capture(_scratch, runs) {
      // One reply for each conversation throughProxy posts.
      const script = Array.from({ length: 4 }, () => ({ text: reply }));
      const mock = await startMockServer({ name: "corpus", markers: {}, script }, { runsDir: runs });
      closers.push(() => mock.close());
      await throughProxy(runs, mock.baseUrl, "proxy");
      await mock.close();
      return [join(runs, "proxy"), join(runs, "corpus-mock")];
    },
  },
  {
    name: "the proxy in front of an upstream that splits every key across SSE deltas",
    async capture(_scratch, runs) {
      await throughProxy(runs, await splittingUpstream(), "split");
      return [join(runs, "split")];
    },
  },
  {
    name: "record around a command that posts both conversations (and the mock's own run)",
    async capture(scratch, runs) {
      const mock = await startMockServer(
        { name: "corpus", markers: {}, script: [{ text: reply }, { text: reply }] },
        { runsDir: runs },
      );
      closers.push(() => mock.close());
      writeFileSync(join(scratch, "chat.json"), chatConversation());
      writeFileSync(join(scratch, "messages.json"), messagesConversation());
      // The command reads the base URLs record points it at, as an SDK client would.
      const client = `const { readFileSync } = require("node:fs");
const post = (url, file) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: readFileSync(file) })
  .then((r) => { if (r.status !== 200) process.exit(1); return r.text(); });
post(process.env.OPENAI_BASE_URL + "/chat/completions", "chat.json")
  .then(() => post(process.env.ANTHROPIC_BASE_URL + "/v1/messages", "messages.json"));`;
      const origin = mock.baseUrl.replace(/\/v1$/, "");
      const args = ["record", "--upstream", origin, "--runs", runs, "--name", "rec", "--no-view", "--"];
      // From the scratch folder, where the command finds its two files.
      const result = await cliInScratchAt(scratch, scratch, ...args, process.execPath, "-e", client);
      expect(result.code, result.stderr).toBe(0);
      await mock.close();
      return [join(runs, "rec"), join(runs, "corpus-mock")];
    },
  },
  {
    name: "the runtime (run on a probe whose prompt, tool call, tool result and reply carry the corpus)",
    async capture(scratch, runs) {
      const result = await cliInScratch(scratch, "run", corpusProbe(scratch), "--runs", runs);
      expect(result.code, result.stderr).toBe(0);
      return [join(runs, "secrets-corpus")];
    },
  },
];

describe(`no secret written to disk (issue 23; corpus seed ${CORPUS_SEED})`, () => {
  it("the corpus has 40 or more credentials of every promised kind", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    const kinds = new Set(corpus.map((c) => c.kind));
    for (const kind of ["aws-access-key-id", "aws-secret-key", "github-token", "gitlab-token", "slack-token"])
      expect(kinds).toContain(kind);
    for (const kind of ["stripe-key", "npm-token", "openai-key", "anthropic-key", "google-api-key", "jwt"])
      expect(kinds).toContain(kind);
    for (const kind of ["private-key", "basic-auth", "db-connection", "generic-secret"]) expect(kinds).toContain(kind);
  });

  for (const path of CAPTURE_PATHS)
    it(`keeps every value out of every file: ${path.name}`, async () => {
      const scratch = tempDir("secrets-corpus-");
      const runs = join(scratch, "runs");
      const dirs = await path.capture(scratch, runs);
      for (const dir of dirs) {
        // What the readers write from a run: its view page, a profile imported from it. They run in
        // this process (every path absolute): what they write and print is checked, not their start.
        expect((await cliInScratch(scratch, "view", dir)).code).toBe(0);
        const profile = join(runs, `${dir.split("/").pop()}.profile.json`);
        await cliInScratch(scratch, "profile", "import", dir, "--out", profile);
        const report = await cliInScratch(scratch, "report", dir);
        expect(report.stderr).toMatch(/^secrets: \d+ replaced by markers in this run's stored bodies:\n {2}\S/m);
        for (const line of report.stderr.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
        const records = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
        expect(records.some((r) => (r.secrets?.replaced ?? 0) > 0)).toBe(true);
        expect(readFileSync(join(dir, "payloads.jsonl"), "utf8")).toMatch(/\[redacted:github-token:[0-9a-f]{8}\]/);
      }
      expect(leaks(runs), `corpus seed ${CORPUS_SEED}: SECRETS_SEED=${CORPUS_SEED} makes the same keys`).toEqual([]);
    });

  it("leaves the look-alikes as they were sent: lockfile hashes, git SHAs, UUIDs, base64 images", async () => {
    const scratch = tempDir("secrets-alike-");
    const runs = join(scratch, "runs");
    const mock = await startMockServer({ name: "alike", markers: {}, script: [{ text: "ok" }] }, { runsDir: runs });
    closers.push(() => mock.close());
    await post(`${mock.baseUrl}/chat/completions`, chatConversation());
    await mock.close();
    const stored = readFileSync(join(runs, "alike-mock", "payloads.jsonl"), "utf8");
    // The body is a string inside the payload row: escaped twice.
    const twice = (text: string) => JSON.stringify(JSON.stringify(text).slice(1, -1)).slice(1, -1);
    for (const text of alike) expect(stored.includes(twice(text)), text.slice(0, 30)).toBe(true);
  });

  it("--keep-secrets stores them as sent, and says so on stderr", async () => {
    const scratch = tempDir("secrets-kept-");
    const runs = join(scratch, "runs");
    const probe = join(scratch, "kept.yaml");
    writeFileSync(probe, JSON.stringify({ name: "kept", model: { script: [{ text: "ok" }] }, prompts: ["x"] }));
    const mock = await startCli(["mock", probe, "--runs", runs, "--keep-secrets"]);
    closers.push(() => mock.stop());
    const key = corpus.find((c) => c.kind === "github-token")!.value;
    await post(
      `${mock.url}/chat/completions`,
      JSON.stringify({ model: "m", messages: [{ role: "user", content: key }] }),
    );
    expect(await mock.stop()).toBe(0);
    expect(mock.stderr()).toContain("mock: --keep-secrets: secrets in captured bodies are written as sent");
    expect(readFileSync(join(runs, "kept-mock", "payloads.jsonl"), "utf8")).toContain(key);
  });
});
