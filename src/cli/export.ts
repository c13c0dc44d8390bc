import { cacheRates } from "../analysis/cost/cache-rates.js";
import { roundDollars } from "../analysis/cost/money.js";
import type { RunCost } from "../analysis/cost/run-cost.js";
import { type RunSource, resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { parseCommand } from "./args.js";
import { contentArg, headerArgs, openOtel } from "./otel-flag.js";
import { runPricer } from "./run-pricer.js";

export const help = `Usage: payload-probe export otel <run...> [options]

Sends captured runs to an OpenTelemetry collector over OTLP/HTTP as GenAI spans: one
invoke_agent span per run, a "chat <model>" span (kind CLIENT) per provider request, an
execute_tool span per tool execution with the MCP requests its server received as children, and
sampling requests under the tool that asked for them. Span times are the times the run recorded.
Any OTLP/HTTP backend takes them: an OpenTelemetry Collector, Jaeger, Grafana Tempo, Langfuse,
Arize Phoenix.

  <run>             a run folder (runs/p1), a probe name with a folder under runs/ (p1), a run id
                    from runs/payload-probe.db, or <probe>@N (the N-th latest run; @1 latest)
  --endpoint URL    the collector's base URL (http://localhost:4318), to which /v1/traces is added,
                    or a URL ending in /v1/traces. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
                    OTEL_EXPORTER_OTLP_ENDPOINT, then http://localhost:4318
  --header K=V      an HTTP header sent with every export (repeatable; added to
                    OTEL_EXPORTER_OTLP_HEADERS, winning on the same name)
  --content MODE    what leaves the machine: none (sizes and counts), hashes (also sha256 of tools,
                    system text and body; the default), full (also the input messages, system
                    instructions, tool definitions, output and tool arguments and results)
  --model ID        price every request as this model (default: each request's own model, or
                    for a probe's run the probe's model.priceAs)
  --pricing FILE    a pricing file that adds to or overrides the bundled @pydantic/genai-prices
                    table (also PAYLOAD_PROBE_PRICING); a model neither knows gets no cost attribute
  --runs DIR        where run folders and payload-probe.db live (default: runs/)
  -h, --help        show this help

OTEL_EXPORTER_OTLP_PROTOCOL (or _TRACES_PROTOCOL) picks http/protobuf (default) or http/json;
OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES apply as usual. OTEL_EXPORTER_OTLP_TIMEOUT (or
_TRACES_TIMEOUT, milliseconds, default 10000) bounds each export whole: connect, retries, response
headers and body; at the deadline the connection is closed and the export has failed.

Exit: 0 sent, 1 the endpoint could not be reached, refused the spans, reset the connection or did not
answer in full within the timeout (said once on stderr), 2 bad usage or a run that cannot be found
or read.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "export",
    help,
    options: {
      endpoint: { type: "string" },
      header: { type: "string", multiple: true },
      content: { type: "string" },
      model: { type: "string" },
      pricing: { type: "string" },
    } as const,
    positionals: ["otel", "<run...>"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const runs = positionals.slice(1);
  const content = contentArg("export", values.content);
  // Every run is found before anything is sent: a typo in the last name should not leave a partial export.
  const sources = runs.map((spec) => resolveRun(spec, { runsDir, warn: warnOnStderr }));
  const price = await runPricer(values);
  const otel = await openOtel({ endpoint: values.endpoint, headers: headerArgs("export", values.header), content });
  try {
    for (const source of sources) {
      const spans = await otel.exportSource(source, await predictedCosts(source, price));
      console.log(`${source.label}: ${spans} spans`);
    }
  } catch (error) {
    // A run found unreadable midway (a line too long, a bad figure) leaves part of its spans queued:
    // none is sent, and the session's timers and connections end with the command.
    await otel.discard();
    throw error;
  }
  const sent = await otel.close();
  console.log(sent ? `sent to ${otel.url}` : `not sent: ${otel.url} did not take the spans`);
  return sent ? 0 : 1;
}

/** Each request's predicted dollars and prompt-cache figures from the cost model (prefix caching per provider), by seq. */
async function predictedCosts(source: RunSource, price: (source: RunSource) => Promise<RunCost>) {
  const cost = await price(source);
  // Rounded as every other output shows dollars (money.ts).
  const bySeq = new Map(
    cost.requests.map((r) => [r.seq, r.predictedCost === null ? undefined : roundDollars(r.predictedCost)]),
  );
  const rates = new Map(cacheRates(cost).requests.map((r) => [r.seq, r]));
  return {
    price: (record: { seq: number }) => bySeq.get(record.seq),
    cacheRate: (record: { seq: number }) => rates.get(record.seq),
  };
}
