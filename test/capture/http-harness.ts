import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import type { MockModel } from "../../src/capture/mock-server.js";
import { loadProbeFile } from "../../src/probes/load.js";
import type { Probe } from "../../src/probes/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import type { Context, ModelResponse, ModelSpec } from "../../src/providers/types.js";
import { stopAfterTest } from "../fixtures/children.js";

export const MAIN = join(PROJECT_ROOT, "dist/cli/main.js");

/** A two-turn probe file in `dir`: a tool call, then text; `model` is what the mock serves of it. */
export async function writeTinyProbe(dir: string): Promise<{ file: string; probe: Probe; model: MockModel }> {
  const file = join(dir, "tiny.yaml");
  writeFileSync(
    file,
    `name: tiny
model:
  script:
    - call: read
      args: { path: notes.txt }
    - text: ALL DONE
prompts: ["read notes.txt"]
markers:
  notes: { in: messages, match: notes.txt }
`,
  );
  const probe = await loadProbeFile(file, PROJECT_ROOT);
  return { file, probe, model: { name: probe.name, markers: probe.markers, script: probe.model.script } };
}

/** A chat completions body as an agent would send it (compact JSON, one user message). */
export function chatBody(text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: "mock-model",
    messages: [{ role: "user", content: [{ type: "text", text }] }],
    stream: true,
    ...extra,
  });
}

/** No time limit of its own: the server answering is the event, and the test's timeout bounds a hang. */
export async function postChat(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
}

/** The reply read the way the runtime reads a provider's stream. */
export async function parseReply(response: Response): Promise<ModelResponse> {
  const decoder = new TextDecoder();
  const body = response.body!;
  return openaiCompletions.parseStream(
    (async function* () {
      for await (const chunk of body) yield decoder.decode(chunk, { stream: true });
    })(),
  );
}

export function jsonl<T = Record<string, unknown>>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as T);
}

/** Every file under dir whose bytes contain needle (database and its WAL included). */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (readFileSync(path).includes(needle)) hits.push(path);
  }
  return hits;
}

/** Every row of every table of a SQLite file, as JSON: a long row spans overflow pages, whose headers can split a value in the raw file. */
export function sqlDump(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return tables.map(({ name }) => JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all())).join("\n");
  } finally {
    db.close();
  }
}

export interface CliServer {
  child: ChildProcess;
  /** The URL after `LISTENING` on the first stdout line. */
  url: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  /** What the process has written to stderr so far. */
  stderr(): string;
  /** The first stdout line after LISTENING that matches, once it is printed. */
  line(pattern: RegExp): Promise<string>;
}

/**
 * Starts `payload-probe <args>` and waits for its LISTENING line, or its exit. No clock of its own: a
 * loaded machine may take long over the start-up (the tokenizer's load), and the test's timeout bounds
 * it; the child is stopped after the test whatever happens (test/fixtures/children.ts).
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliServer> {
  const child = stopAfterTest(
    spawn(process.execPath, [MAIN, ...args], { cwd: PROJECT_ROOT, env, stdio: ["ignore", "pipe", "pipe"] }),
  );
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const later: string[] = [];
  const waiting: { pattern: RegExp; found: (line: string) => void }[] = [];
  const lineMatching = (pattern: RegExp) =>
    new Promise<string>((found) => {
      const seen = later.find((l) => pattern.test(l));
      if (seen !== undefined) found(seen);
      else waiting.push({ pattern, found });
    });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      lines.on("line", (next) => {
        later.push(next);
        for (const w of waiting.filter((w) => w.pattern.test(next))) {
          waiting.splice(waiting.indexOf(w), 1);
          w.found(next);
        }
      });
      const match = /^LISTENING (\S+)$/.exec(line);
      if (!match) {
        child.kill("SIGKILL");
        reject(new Error(`first line was not LISTENING: ${line}`));
        return;
      }
      resolve({
        child,
        url: match[1]!,
        stop: () => {
          child.kill("SIGTERM");
          return exited;
        },
        stderr: () => stderr,
        line: lineMatching,
      });
    });
    exited.then((code) => reject(new Error(`exited ${code} before listening; stderr: ${stderr}`)));
  });
}

/**
 * Two chat completions requests as an agent makes them: `context` (whose first reply must call a
 * tool), then the same context with that call and `toolResult` as its result.
 */
export async function promptThenToolResult(
  baseUrl: string,
  model: ModelSpec,
  context: Context,
  toolResult: string,
): Promise<void> {
  const send = async () =>
    parseReply(
      await postChat(`${baseUrl}/chat/completions`, openaiCompletions.buildRequest(model, context, "loop").body),
    );
  const first = await send();
  const call = first.message.toolCalls[0]!;
  context.messages.push(first.message, {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: toolResult,
    isError: false,
  });
  await send();
}
