/** Starts the built stub servers as real child processes for the stub-mcp tests, and cleans up after them. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { WIRE_LOG_ENV } from "../../src/stub-mcp/wire-log.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export type StubName = "probe-stub" | "minimal-stub" | "configurable-stub";

const cleanups: (() => Promise<void> | void)[] = [];

/** Closes every client, kills every child and removes every temp dir the test started. */
export async function cleanupStubs(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** The compiled stub; the tests run what `node dist/stub-mcp/<stub>.js` runs, so dist must be current. */
export function stubScript(stub: StubName): string {
  const built = join(ROOT, "dist/stub-mcp", `${stub}.js`);
  const source = join(ROOT, "src/stub-mcp", `${stub}.ts`);
  if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
    throw new Error(`${built} is missing or older than its source; run \`npx tsc -p tsconfig.json\` first`);
  }
  return built;
}

/** A fresh temp dir, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "stub-mcp-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A wire-log path inside a fresh temp dir (the file itself does not exist yet). */
export function tempWireLog(): string {
  return join(tempDir(), "wire.jsonl");
}

export interface StdioConnection {
  client: Client;
  transport: StdioClientTransport;
  /** Errors the client's transport reported (e.g. a stdout line that is not JSON). */
  errors: Error[];
  /** Everything the child wrote to stderr so far. */
  stderr: () => string;
}

/** Spawns a stub through the SDK's stdio client transport and completes the MCP handshake. */
export async function connectStdio(
  stub: StubName,
  args: string[],
  wireLog: string,
  clientOptions: ClientOptions = {},
  configure: (client: Client) => void = () => {},
): Promise<StdioConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [stubScript(stub), ...args],
    cwd: ROOT,
    env: { ...process.env, [WIRE_LOG_ENV]: wireLog } as Record<string, string>,
    stderr: "pipe",
  });
  let stderrText = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderrText += chunk.toString("utf8")));
  const client = new Client({ name: "stub-mcp-test", version: "1.0.0" }, clientOptions);
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  configure(client);
  cleanups.push(() => client.close());
  await client.connect(transport);
  return { client, transport, errors, stderr: () => stderrText };
}

/** A stub child spoken to in raw JSON lines, for checking exact bytes and non-SDK behaviour. */
export interface RawStub {
  child: ChildProcessWithoutNullStreams;
  send: (message: unknown) => void;
  /** The next stdout line; rejects when the stub's output ends first (no clock: the test's timeout bounds a hang). */
  nextLine: () => Promise<string>;
}

export function spawnRaw(stub: StubName, args: string[], env: Record<string, string> = {}): RawStub {
  const child = spawn(process.execPath, [stubScript(stub), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  cleanups.push(() => void child.kill("SIGKILL"));
  const lines: string[] = [];
  const waiters: { resolve(line: string): void; reject(error: Error): void }[] = [];
  let ended = false;
  const output = createInterface({ input: child.stdout });
  output.on("line", (line) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(line);
    else lines.push(line);
  });
  output.on("close", () => {
    ended = true;
    for (const waiter of waiters.splice(0)) waiter.reject(new Error("the stub's stdout ended before another line"));
  });
  return {
    child,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    nextLine: () =>
      new Promise((resolve, reject) => {
        const queued = lines.shift();
        if (queued !== undefined) return resolve(queued);
        if (ended) return reject(new Error("the stub's stdout ended before another line"));
        waiters.push({ resolve, reject });
      }),
  };
}

/** Starts a stub with `--http 0` and reads the port from its `LISTENING <port>` first line. */
export async function spawnHttp(args: string[], wireLog: string): Promise<{ stub: RawStub; url: URL }> {
  const stub = spawnRaw("configurable-stub", [...args, "--http", "0"], { [WIRE_LOG_ENV]: wireLog });
  const first = await stub.nextLine();
  const match = /^LISTENING (\d+)$/.exec(first);
  if (!match) throw new Error(`expected LISTENING <port> as the first line, got ${first}`);
  return { stub, url: new URL(`http://127.0.0.1:${match[1]}/mcp`) };
}

/** Runs a stub to its exit with no stdin and reports how it ended. */
export function runToExit(stub: StubName, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolveExit) => {
    const child = spawn(process.execPath, [stubScript(stub), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    cleanups.push(() => void child.kill("SIGKILL"));
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (code) => resolveExit({ code, stderr }));
  });
}

/** The methods of a wire log's messages in order (responses from the client show as `(response)`). */
export function methodsOf(lines: { message: unknown }[]): string[] {
  return lines.map((line) => (line.message as { method?: string }).method ?? "(response)");
}
