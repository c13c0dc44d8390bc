import { LiveViewPart } from "../analysis/view/live-view.js";
import type { FinishedExchange } from "../capture/capture.js";
import { runCaptureSession } from "../capture/capture-session.js";
import { startMockServer } from "../capture/mock-server.js";
import type { AwsKeys } from "../capture/sigv4-check.js";
import { UserError } from "../errors.js";
import { loadProbeFile } from "../probes/load.js";
import { PROBE_MODEL_EVENT, probeModelEvent } from "../probes/price-as.js";
import { PROJECT_ROOT } from "../project-root.js";
import { probeFileArg } from "./arg-values.js";
import { parseCommand } from "./args.js";
import { KEEP_SECRETS_HELP, keepSecretsFlag } from "./keep-secrets-flag.js";
import { OTEL_FLAG_HELP, otelFlag, otelLivePart } from "./otel-flag.js";
import { exchangeLog } from "./proxy-log.js";
import { parsePort, untilSignal } from "./serve.js";
import { VIEW_FLAG_HELP, VIEW_OPTION } from "./view-flag.js";

export const help = `Usage: payload-probe mock <probe> [options]

Serves a probe's scripted model as a provider of all five wire APIs at once, for an agent running
outside payload-probe: POST /v1/chat/completions (OpenAI chat completions), POST /v1/messages
(Anthropic Messages), POST /v1/responses (OpenAI Responses; also its WebSocket mode, GET
/v1/responses upgraded, one response.create per turn, a generate: false warm-up answered empty), POST
/v1beta/models/<model>:generateContent and :streamGenerateContent (Gemini, also under /v1/), POST
/model/<model>/converse and /converse-stream (Amazon Bedrock's Converse, at the root: an AWS SDK's
endpoint is the address without /v1; the stream in AWS EventStream frames; signatures checked with --sigv4)
and GET /v1/models. Each request is answered with the next step of the probe's model.script (sampling
requests too) in its API's format: SSE when the body says "stream": true (Gemini: ?alt=sse; without
it a JSON array sent piece by piece), one JSON body otherwise (chat completions streams carry usage
only with stream_options.include_usage). Gemini's :countTokens and GET /v1beta/models are answered
without taking a step. Usage figures are our offline token count, marked as an
estimate in the record and by the response header x-payload-probe-usage: estimate. Requests are
captured to <runs>/<probe>-mock/ and <runs>/payload-probe.db. The first line printed is LISTENING
<base URL> (http://127.0.0.1:N/v1): an OpenAI client's base URL; Anthropic and Gemini clients take it
without /v1. When the script runs out, requests get HTTP 500 naming the request. A body the API cannot take
gets HTTP 400 in that API's error shape naming what is wrong, and takes no step. The run folder is
replaced only once the port is listening. Each request prints one line on stderr once it is written
(seq, API, model, tools, tokens by our count, HTTP status, where the cache prefix broke); stopping
prints a summary. Stops on Ctrl-C.

  <probe>       a name under probes/ (p1) or a path to a probe file
  --port N      port to listen on (default 0: a free port)
  --host HOST   address to listen on (default 127.0.0.1)
  --runs DIR    where the run folder and payload-probe.db go (default: runs/)
  --no-db       do not write payload-probe.db
  --delay MS    wait MS milliseconds before each chunk after the first (a slow provider; default 0)
  --sigv4       check each Converse request's AWS SigV4 signature, as Bedrock does, against the
                keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (give the client the same
                made-up keys): one that does not match gets HTTP 403 and is not captured
${KEEP_SECRETS_HELP}
${OTEL_FLAG_HELP}; each request is sent as it is captured
${VIEW_FLAG_HELP}
  -h, --help    show this help

Exit: 0 stopped by a signal, 2 bad input (probe file, port in use).`;

/** `--sigv4`: the keys to check signatures against, from the environment the client's come from too. */
function sigV4Keys(asked: boolean | undefined): { awsKeys?: AwsKeys } {
  if (asked !== true) return {};
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new UserError("mock: --sigv4 expected AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment");
  return { awsKeys: { accessKeyId, secretAccessKey } };
}

function parseDelay(value: string | undefined): number {
  if (value === undefined) return 0;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0 || ms > 60_000)
    throw new UserError(`mock: --delay expected whole milliseconds from 0 to 60000, got "${value}"`);
  return ms;
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "mock",
    help,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "no-db": { type: "boolean" },
      delay: { type: "string" },
      sigv4: { type: "boolean" },
      otel: { type: "string" },
      "keep-secrets": { type: "boolean" },
      ...VIEW_OPTION,
    } as const,
    positionals: ["<probe>"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const probe = await loadProbeFile(probeFileArg("mock", positionals[0]!), PROJECT_ROOT);
  const otel = await otelFlag(values.otel);
  const name = `${probe.name}-mock`;
  const parts = [
    otelLivePart(otel, name),
    exchangeLog("mock"),
    ...(values.view === true ? [new LiveViewPart({ name, markers: probe.markers })] : []),
  ];
  const model = { name: probe.name, markers: probe.markers, script: probe.model.script, modelId: probe.model.id };
  const options = {
    runsDir,
    port: parsePort("mock", values.port),
    host: values.host,
    database: !values["no-db"],
    chunkDelayMs: parseDelay(values.delay),
    keepSecrets: keepSecretsFlag("mock", values["keep-secrets"]),
    ...sigV4Keys(values.sigv4),
  };
  const start = async (onFinished: (exchange: FinishedExchange) => void) => {
    const server = await startMockServer(model, { ...options, onFinished });
    // Recorded first, so the run is priced as the probe says wherever the probe file is kept.
    server.addEvent(PROBE_MODEL_EVENT, { ...probeModelEvent(probe) }, 1);
    console.log(`LISTENING ${server.baseUrl}`);
    return server;
  };
  return runCaptureSession(start, parts, (server) => {
    console.log(
      `capturing to ${server.liveDir}, moved to ${server.dir} when the mock stops (run ${server.runId}); ${probe.model.script.length} scripted step(s)`,
    );
    return untilSignal();
  });
}
