import type { IncomingMessage, ServerResponse } from "node:http";
import type { Probe } from "../probes/types.js";
import { openaiCompletions } from "../providers/openai-completions.js";
import { createScriptedModel, ScriptExhausted } from "../providers/scripted-model.js";
import { openCaptureRun } from "./capture-run.js";
import { readBody, sendJson, serveHttp } from "./http.js";

export interface MockServerOptions {
  runsDir: string;
  port?: number;
  host?: string;
  /** Also append to `<runsDir>/payload-probe.db` (default true). */
  database?: boolean;
}

export interface MockServer {
  /** The base URL a provider config points at: `http://host:port/v1`. */
  baseUrl: string;
  runId: string;
  /** `<runsDir>/<probe>-mock/`. */
  dir: string;
  /** Stops serving, waits for open replies, then finishes the run; later calls return the same promise. */
  close(): Promise<void>;
}

const CHAT_PATH = "/v1/chat/completions";

/**
 * The probe's scripted model behind OpenAI chat completions over HTTP, for an agent outside this
 * process (a real pi). Every request takes the next step of `model.script` — sampling requests
 * too, since the mock cannot tell a nested request from a turn — and is captured like a probe run's.
 */
export async function startMockServer(probe: Probe, options: MockServerOptions): Promise<MockServer> {
  const run = openCaptureRun({
    name: `${probe.name}-mock`,
    runsDir: options.runsDir,
    database: options.database,
    markers: probe.markers,
  });
  const transport = run.capture.wrap(createScriptedModel(openaiCompletions, { loop: probe.model.script }));
  let baseUrl = "";

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://mock").pathname;
    if (request.method !== "POST" || path !== CHAT_PATH) {
      sendJson(response, 404, {
        error: { message: `no such endpoint: ${request.method} ${path} (the mock serves POST ${CHAT_PATH})` },
      });
      return;
    }
    const body = (await readBody(request)).toString("utf8");
    try {
      JSON.parse(body);
    } catch {
      sendJson(response, 400, { error: { message: "the request body is not JSON" } });
      return;
    }
    let stream: AsyncIterable<string>;
    try {
      stream = await transport({ api: "openai-completions", url: `${baseUrl}/chat/completions`, body, kind: "loop" });
    } catch (error) {
      if (!(error instanceof ScriptExhausted)) throw error;
      sendJson(response, 500, { error: { message: error.message } });
      return;
    }
    // The scripted reply is ready at once, so it is drained (which writes the record) before it is
    // sent: a client that reads the run right after a reply finds that reply's record.
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const chunk of chunks) response.write(chunk);
    response.end();
  }

  const host = options.host ?? "127.0.0.1";
  const service = await serveHttp(
    answer,
    (error) => ({ status: 500, message: `mock: ${error.message}` }),
    options.port ?? 0,
    host,
  ).catch((error: unknown) => {
    run.close();
    throw error;
  });
  baseUrl = `http://${host}:${service.port}/v1`;
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    runId: run.id,
    dir: run.dir,
    close() {
      closing ??= service.close().then(() => run.close());
      return closing;
    },
  };
}
