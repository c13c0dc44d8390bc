import type { IncomingMessage, ServerResponse } from "node:http";
import { openaiCompletions } from "../providers/openai-completions.js";
import { createScriptedModel, ScriptExhausted, type ScriptStep } from "../providers/scripted-model.js";
import type { Transport } from "../providers/types.js";
import { type CaptureRun, openCaptureRun } from "./capture-run.js";
import { chatRequestProblem } from "./chat-request.js";
import { readBody, sendJson, serveHttp } from "./http.js";
import type { MarkerSpec, RequestRecord } from "./types.js";

/** What the mock serves: a script of model turns, and what to call and count in its capture. */
export interface MockModel {
  /** Names the run folder `<runsDir>/<name>-mock/`. */
  name: string;
  markers: Record<string, MarkerSpec>;
  script: ScriptStep[];
}

export interface MockServerOptions {
  runsDir: string;
  port?: number;
  host?: string;
  /** Also append to `<runsDir>/payload-probe.db` (default true). */
  database?: boolean;
  /** Told of every record once it is written. */
  onRecord?: (record: RequestRecord) => void;
}

export interface MockServer {
  /** The base URL a provider config points at: `http://host:port/v1`. */
  baseUrl: string;
  runId: string;
  /** `<runsDir>/<name>-mock/`. */
  dir: string;
  /** Stops serving, waits for open replies, then finishes the run; later calls return the same promise. */
  close(): Promise<void>;
}

const CHAT_PATH = "/v1/chat/completions";

/**
 * A scripted model behind OpenAI chat completions over HTTP, for an agent outside this
 * process (a real pi). Every valid request takes the next step of the script — sampling requests
 * too, since the mock cannot tell a nested request from a turn — and is captured like a probe run's;
 * an invalid one gets a 400 in the OpenAI error shape and takes no step.
 */
export async function startMockServer(model: MockModel, options: MockServerOptions): Promise<MockServer> {
  let run: CaptureRun;
  let transport: Transport;
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
    const url = `${baseUrl}/chat/completions`;
    const problem = chatRequestProblem(body);
    if (problem) {
      // Kept as a side payload, so the capture shows what the agent sent; the script is not touched.
      const exchange = run.capture.open({ kind: "side", api: null, url, body, unreadable: problem.message });
      const error = { error: { ...problem, type: "invalid_request_error" } };
      sendJson(response, 400, error);
      await exchange.finish({ body: JSON.stringify(error), status: 400, firstByteMs: null, ending: "complete" });
      return;
    }
    let stream: AsyncIterable<string>;
    try {
      stream = await transport({ api: "openai-completions", url, body, kind: "loop" });
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
  // Listening comes first: a port in use must fail before the run folder of a mock already on it is replaced.
  const service = await serveHttp(
    answer,
    (error) => ({ status: 500, message: `mock: ${error.message}` }),
    options.port ?? 0,
    host,
  );
  // No request can reach `answer` before the run is open: the first connection is handled on a later
  // turn of the event loop, and nothing here yields to it.
  try {
    run = openCaptureRun({
      name: `${model.name}-mock`,
      runsDir: options.runsDir,
      database: options.database,
      markers: model.markers,
      keepRecords: false,
      onRecord: options.onRecord,
    });
  } catch (error) {
    await service.close();
    throw error;
  }
  transport = run.capture.wrap(createScriptedModel(openaiCompletions, { loop: model.script }));
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
