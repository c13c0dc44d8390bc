import { startCaptureProxy } from "../capture/capture-proxy.js";
import { UserError } from "../errors.js";
import { folderNameArg } from "./arg-values.js";
import { parseCommand, usageError } from "./args.js";
import { KEEP_SECRETS_HELP, keepSecretsFlag } from "./keep-secrets-flag.js";
import { OTEL_FLAG_HELP, otelFlag } from "./otel-flag.js";
import { exchangeLog } from "./proxy-log.js";
import { parsePort, serveUntilSignal } from "./serve.js";

export const help = `Usage: payload-probe proxy --upstream URL [options]

Forwards every request unchanged (method, path, query, body bytes, headers) to URL and streams the
response back as it arrives, capturing each request to <runs>/<name>/ and <runs>/payload-probe.db.
Requests of the three wire APIs get a full record (…/chat/completions: OpenAI chat completions,
…/messages: Anthropic Messages, …/responses: OpenAI Responses); any other path is kept in
payloads.jsonl as kind "side", and so is a body the capture cannot read (with the reason). Each
request prints one line on stderr once it is written (seq, API, model, tools, tokens by our count,
HTTP status, where the cache prefix broke); stopping prints a summary.
Headers are never stored, so credentials (Authorization, x-api-key …) never reach a file; stored URLs
have their userinfo (user:password@) and credential query values replaced by [redacted]. Secrets
inside bodies (API keys, tokens, private keys, passwords in URLs and NAME=value lines: README's
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
  --port N        port to listen on (default 0: a free port)
  --host HOST     address to listen on (default 127.0.0.1)
  --name NAME     the run folder's name: letters, digits, '.', '_', '-' (default proxy)
  --runs DIR      where the run folder and payload-probe.db go (default: runs/)
  --no-db         do not write payload-probe.db
  --redact NAME   also store query parameter NAME as [redacted] (repeatable; any case). Always
                  redacted: the list in README's "External agents" (key, token, code, sig,
                  X-Amz-Signature …) and names containing token, secret, passw, signature, credential
  --redact-body REGEX
                  replace every match of REGEX (JavaScript syntax) in stored request and response
                  bodies with [redacted] (repeatable)
${KEEP_SECRETS_HELP}
${OTEL_FLAG_HELP}; each request is sent as it is captured
  -h, --help      show this help

Exit: 0 stopped by a signal, 2 bad usage (no or bad --upstream, port in use).`;

function parseUpstream(value: string | undefined): string {
  if (value === undefined) throw usageError("proxy", "--upstream URL is required");
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return value;
  } catch {
    // Reported below with what was expected.
  }
  throw new UserError(`proxy: --upstream expected an http or https URL, got "${value}"`);
}

function parseBodyPattern(source: string): RegExp {
  try {
    return new RegExp(source, "g");
  } catch (error) {
    throw new UserError(
      `proxy: --redact-body expected a regular expression, got "${source}": ${(error as Error).message}`,
    );
  }
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "proxy",
    help,
    options: {
      upstream: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      name: { type: "string" },
      "no-db": { type: "boolean" },
      redact: { type: "string", multiple: true },
      "redact-body": { type: "string", multiple: true },
      otel: { type: "string" },
      "keep-secrets": { type: "boolean" },
    } as const,
    positionals: [],
  });
  if (typeof args === "number") return args;
  const { values, runsDir } = args;
  const otel = await otelFlag(values.otel);
  const name = folderNameArg("proxy", "name", values.name) ?? "proxy";
  const live = otel?.live(name);
  const log = exchangeLog("proxy", live);
  const proxy = await startCaptureProxy({
    upstream: parseUpstream(values.upstream),
    runsDir,
    name,
    port: parsePort("proxy", values.port),
    host: values.host,
    database: !values["no-db"],
    redactQuery: values.redact,
    redactBody: (values["redact-body"] ?? []).map(parseBodyPattern),
    keepSecrets: keepSecretsFlag("proxy", values["keep-secrets"]),
    onFinished: log.onFinished,
  });
  console.log(`LISTENING ${proxy.url}`);
  console.log(
    `forwarding to ${proxy.upstream}; capturing to ${proxy.liveDir}, moved to ${proxy.dir} when the proxy stops (run ${proxy.runId})`,
  );
  return serveUntilSignal(async () => {
    await proxy.close();
    log.printSummary();
    live?.end(proxy.runId);
    await otel?.close();
  });
}
