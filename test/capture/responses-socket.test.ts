/**
 * The Responses API over a WebSocket, through the capture proxy in front of the mock's WebSocket
 * endpoint: a real `ws` client (permessage-deflate on, as Codex's tungstenite offers it) sends a
 * warm-up and two chained turns, one of them in fragments. Each turn is one full record whose request
 * is rebuilt from the chain, byte for byte as the mock rebuilt it; the relay stays exact.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { exchangeLine } from "../../src/cli/proxy-log.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

interface Payload {
  type: "request" | "response";
  seq: number;
  kind: string;
  api: string | null;
  body: string;
  transport?: string;
  sent?: string;
}

type Event = { type: string; response?: { id: string }; item?: Record<string, unknown> };

/** A client on the socket: sends one message (whole or in two fragments) and reads events up to the turn's last. */
async function socketClient(url: string) {
  const client = new WebSocket(url, { perMessageDeflate: true });
  closers.push(async () => client.terminate());
  await new Promise((resolve, reject) => {
    client.once("open", resolve);
    client.once("error", reject);
  });
  const events: Event[] = [];
  let waiting: (() => void) | null = null;
  client.on("message", (data) => {
    events.push(JSON.parse(String(data)) as Event);
    waiting?.();
  });
  const turnEnded = () => events.some((event) => event.type === "response.completed" || event.type === "error");
  return {
    extensions: () => client.extensions,
    async turn(message: Record<string, unknown>, fragmented = false): Promise<Event[]> {
      events.length = 0;
      const text = JSON.stringify({ type: "response.create", ...message });
      if (fragmented) {
        const half = Math.floor(text.length / 2);
        client.send(text.slice(0, half), { fin: false });
        client.send(text.slice(half), { fin: true });
      } else client.send(text);
      await new Promise<void>((resolve) => {
        waiting = () => turnEnded() && resolve();
        waiting();
      });
      return [...events];
    },
    async close() {
      const closed = new Promise((resolve) => client.once("close", resolve));
      client.close(1000);
      await closed;
    },
  };
}

const outputItems = (events: Event[]) =>
  events.filter((event) => event.type === "response.output_item.done").map((event) => event.item!);
const responseId = (events: Event[]) => events.find((event) => event.type === "response.completed")!.response!.id;

describe("capture proxy: the Responses API over a WebSocket", () => {
  it("records each turn as a full request rebuilt from the chain of earlier turns, the warm-up as a side payload", async () => {
    const runs = tempDir("responses-socket-");
    const script = [{ call: "exec_command", args: { cmd: "ls" } }, { text: "Listed." }];
    const mock = await startMockServer({ name: "socket", markers: {}, script }, { runsDir: runs, database: false });
    closers.push(() => mock.close());
    const lines: string[] = [];
    const proxy = await startCaptureProxy({
      upstream: new URL(mock.baseUrl).origin,
      runsDir: runs,
      database: false,
      onFinished: (exchange) => lines.push(exchangeLine(exchange)),
    });
    closers.push(() => proxy.close());
    const client = await socketClient(`${proxy.origin.replace("http", "ws")}/v1/responses`);

    // Long enough for permessage-deflate to compress it (ws compresses messages of 1 KiB and more).
    const instructions = `You are a careful agent. ${"Follow the rules. ".repeat(200)}`;
    const tools = [{ type: "function", name: "exec_command", parameters: { type: "object" } }];
    const common = { model: "gpt-test", instructions, tools, stream: true };
    const user = { type: "message", role: "user", content: [{ type: "input_text", text: "List the files." }] };

    const warmup = await client.turn({ ...common, input: [], generate: false });
    expect(outputItems(warmup)).toEqual([]);
    const first = await client.turn({ ...common, previous_response_id: responseId(warmup), input: [user] });
    const [call] = outputItems(first);
    expect(call).toMatchObject({ type: "function_call", name: "exec_command" });
    const result = { type: "function_call_output", call_id: call!.call_id, output: "a.txt" };
    const second = await client.turn({ ...common, previous_response_id: responseId(first), input: [result] }, true);
    expect(outputItems(second)).toMatchObject([{ type: "message", role: "assistant" }]);
    // The handshake agreed on permessage-deflate: the capture read compressed frames.
    expect(client.extensions()).toContain("permessage-deflate");
    await client.close();
    await proxy.close();
    await mock.close();

    const captured = join(runs, "proxy");
    const records = jsonl<RequestRecord>(join(captured, "requests.jsonl"));
    expect(records.map((record) => [record.kind, record.transport, record.response?.calls])).toEqual([
      ["loop", "websocket", ["exec_command"]],
      ["loop", "websocket", []],
    ]);
    // The second turn as an HTTP client would have sent it: the whole context, no previous_response_id.
    const rebuilt = JSON.stringify({ ...common, input: [user, call, result] });
    const requests = jsonl<Payload>(join(captured, "payloads.jsonl")).filter((row) => row.type === "request");
    const loops = requests.filter((row) => row.kind === "loop");
    expect(loops[1]!.body).toBe(rebuilt);
    expect(records[1]).toMatchObject({
      roles: ["system", "user", "assistant", "tool"],
      bodyBytes: Buffer.byteLength(rebuilt),
      sentBytes: Buffer.byteLength(loops[1]!.sent!),
      systemBytes: Buffer.byteLength(instructions),
    });
    expect(JSON.parse(loops[1]!.sent!)).toMatchObject({ previous_response_id: responseId(first), input: [result] });
    // The warm-up generates nothing: a side payload, before the turns; then the socket's own frame sizes.
    expect(requests.map((row) => [row.kind, row.transport ?? null])).toEqual([
      ["side", "websocket"],
      ["loop", "websocket"],
      ["loop", "websocket"],
      ["side", null],
    ]);
    expect(lines[0]).toBe("#1 side /v1/responses status 200 (WebSocket warm-up: nothing generated)");
    // The mock rebuilt the same requests from the same messages.
    const received = jsonl<Payload>(join(runs, "socket-mock", "payloads.jsonl"));
    const mockLoops = received.filter((row) => row.type === "request" && row.kind === "loop");
    expect(mockLoops.map((row) => row.body)).toEqual(loops.map((row) => row.body));
  });

  it("keeps a turn whose previous response it never saw as sent, naming that response", async () => {
    const runs = tempDir("responses-socket-");
    const mock = await startMockServer(
      { name: "socket", markers: {}, script: [{ text: "Hi." }] },
      { runsDir: runs, database: false },
    );
    closers.push(() => mock.close());
    const proxy = await startCaptureProxy({ upstream: new URL(mock.baseUrl).origin, runsDir: runs, database: false });
    closers.push(() => proxy.close());
    const client = await socketClient(`${proxy.origin.replace("http", "ws")}/v1/responses`);
    const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello." }] }];
    await client.turn({ model: "gpt-test", previous_response_id: "resp_earlier", input, stream: true });
    await client.close();
    await proxy.close();
    const [row] = jsonl<Payload>(join(runs, "proxy", "payloads.jsonl")).filter((r) => r.kind === "loop");
    expect(JSON.parse(row!.body)).toEqual({
      model: "gpt-test",
      input,
      stream: true,
      previous_response_id: "resp_earlier",
    });
  });
});
