import { startMockServer } from "../capture/mock-server.js";
import { loadProbeFile, resolveProbePath } from "../probes/load.js";
import { PROJECT_ROOT } from "../project-root.js";
import { parseCommand } from "./args.js";
import { OTEL_FLAG_HELP, otelFlag } from "./otel-flag.js";
import { parsePort, serveUntilSignal } from "./serve.js";

export const help = `Usage: payload-probe mock <probe> [options]

Serves a probe's scripted model as an OpenAI chat completions provider (POST /v1/chat/completions,
SSE), for an agent running outside payload-probe. Each request is answered with the next step of the
probe's model.script (sampling requests too) and captured to <runs>/<probe>-mock/ and
<runs>/payload-probe.db. The first line printed is LISTENING <base URL>; point the agent's provider
baseUrl at it. When the script runs out, requests get HTTP 500 naming the request. A request that is
not a valid chat completions body gets HTTP 400 in the OpenAI error shape naming what is wrong, and
takes no step. The run folder is replaced only once the port is listening. Stops on Ctrl-C.

  <probe>       a name under probes/ (p1) or a path to a probe file
  --port N      port to listen on (default 0: a free port)
  --host HOST   address to listen on (default 127.0.0.1)
  --runs DIR    where the run folder and payload-probe.db go (default: runs/)
  --no-db       do not write payload-probe.db
${OTEL_FLAG_HELP}; each request is sent as it is captured
  -h, --help    show this help

Exit: 0 stopped by a signal, 2 bad input (probe file, port in use).`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "mock",
    help,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "no-db": { type: "boolean" },
      otel: { type: "string" },
    } as const,
    positionals: { min: 1, max: 1 },
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const probe = loadProbeFile(resolveProbePath(positionals[0]!, PROJECT_ROOT), PROJECT_ROOT);
  const otel = await otelFlag(values.otel);
  const live = otel?.live(`${probe.name}-mock`);
  const server = await startMockServer(
    { name: probe.name, markers: probe.markers, script: probe.model.script },
    {
      runsDir,
      port: parsePort("mock", values.port),
      host: values.host,
      database: !values["no-db"],
      onRecord: live?.record,
    },
  );
  console.log(`LISTENING ${server.baseUrl}`);
  console.log(`capturing to ${server.dir} (run ${server.runId}); ${probe.model.script.length} scripted step(s)`);
  return serveUntilSignal(async () => {
    await server.close();
    live?.end(server.runId);
    await otel?.close();
  });
}
