import { LiveViewPart } from "../analysis/view/live-view.js";
import type { FinishedExchange } from "../capture/capture.js";
import { startCaptureProxy } from "../capture/capture-proxy.js";
import { runCaptureSession } from "../capture/capture-session.js";
import { parseCommand } from "./args.js";
import { CAPTURE_FLAGS_HELP, CAPTURE_OPTIONS, captureSettings, parseUpstream } from "./capture-flags.js";
import { OTEL_FLAG_HELP, otelFlag, otelLivePart } from "./otel-flag.js";
import { exchangeLog } from "./proxy-log.js";
import { untilSignal } from "./serve.js";
import { VIEW_FLAG_HELP, VIEW_OPTION } from "./view-flag.js";

export const help = `Usage: payload-probe proxy --upstream URL [options]

Forwards every request unchanged (method, path, query, body bytes, headers) to URL and streams the
response back as it arrives, capturing each request to <runs>/<name>/ and <runs>/payload-probe.db.
Requests of the five wire APIs get a full record (…/chat/completions: OpenAI chat completions,
…/messages: Anthropic Messages, …/responses: OpenAI Responses, …/models/<model>:generateContent and
:streamGenerateContent: Gemini, …/model/<model>/converse and /converse-stream: Amazon Bedrock's
Converse); any other path is kept in
payloads.jsonl as kind "side", and so is a body the capture cannot read (with the reason). Each
request prints one line on stderr once it is written (seq, API, model, tools, tokens by our count,
HTTP status, where the cache prefix broke); stopping prints a summary.
Headers are never stored, so credentials (Authorization, x-api-key …) never reach a file; stored URLs
have their userinfo (user:password@) and credential query values replaced by [redacted]. Secrets
inside bodies (API keys, tokens, private keys, passwords in URLs and NAME=value lines: docs/capture.md,
"Security") are stored as markers naming their kind, after the response has been relayed;
--redact-body replaces what else you name. The first line printed is LISTENING <base URL>: the
proxy's address with the upstream's path (--upstream http://host/v1 prints http://127.0.0.1:N/v1,
the form mock prints); point an OpenAI client's base URL at it (an Anthropic client's at it without
/v1, as Anthropic's base URL has none).
Capture work runs on a worker thread once a response has been relayed; while its queue is full, new
requests wait (one stderr line says so). On stop, what is queued gets 10 s to be written; the rest is
counted as lost in the run's row. The run folder is replaced only once the port is listening.
Stops on Ctrl-C.

  --upstream URL  the provider to forward to (http or https)
  --name NAME     the run folder's name: letters, digits, '.', '_', '-' (default proxy)
${CAPTURE_FLAGS_HELP}
${OTEL_FLAG_HELP}; each request is sent as it is captured
${VIEW_FLAG_HELP}
  -h, --help      show this help

Exit: 0 stopped by a signal, 2 bad usage (no or bad --upstream, port in use).`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "proxy",
    help,
    options: { upstream: { type: "string" }, ...CAPTURE_OPTIONS, ...VIEW_OPTION } as const,
    positionals: [],
  });
  if (typeof args === "number") return args;
  const { values, runsDir } = args;
  const upstream = parseUpstream("proxy", "upstream", values.upstream);
  const settings = captureSettings("proxy", values, "proxy");
  const otel = await otelFlag(values.otel);
  const parts = [
    otelLivePart(otel, settings.name),
    exchangeLog("proxy"),
    ...(values.view === true ? [new LiveViewPart({ name: settings.name })] : []),
  ];
  const start = async (onFinished: (exchange: FinishedExchange) => void) => {
    const proxy = await startCaptureProxy({ upstream, runsDir, ...settings, onFinished });
    console.log(`LISTENING ${proxy.url}`);
    return proxy;
  };
  return runCaptureSession(start, parts, (proxy) => {
    console.log(
      `forwarding to ${proxy.upstream}; capturing to ${proxy.liveDir}, moved to ${proxy.dir} when the proxy stops (run ${proxy.runId})`,
    );
    return untilSignal();
  });
}
