/**
 * HTTP/2 through `record --forward`: the proxy's TLS for an intercepted host agrees HTTP/1.1 by ALPN
 * whenever the client offers it beside h2, and refuses, clearly and at once, a client that can speak
 * only HTTP/2: by TLS's no_application_protocol alert when it offered h2 alone, by HTTP/2's own
 * GOAWAY with HTTP_1_1_REQUIRED when it spoke HTTP/2 without asking (prior knowledge). Each refusal is
 * one line of record's stderr naming the host and why. A WebSocket upgrade on an intercepted
 * connection still reaches the proxy's socket relay. The clients are real: node:tls, node:http2
 * and, when the machine has it, curl (test/fixtures/record/h2-client.mjs) under the built CLI.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { jsonl } from "../capture/http-harness.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

const FIXTURES = join(PROJECT_ROOT, "test", "fixtures", "record");
const curl = spawnSync("curl", ["--version"]).status === 0 ? "curl" : undefined;
if (!curl) console.log("record --forward HTTP/2: curl is not on this machine; its two cases are skipped");

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

type Payload = { type: string; kind?: string; body: string };

interface ClientLine {
  client: string;
  agreed?: string | false;
  status?: number;
  error?: string;
  goaway?: number;
  exit?: number;
  out?: string;
}

describe("record --forward and HTTP/2", () => {
  it("h2 beside http/1.1 gets HTTP/1.1 and is recorded; h2 alone and h2 prior knowledge fail at once, each said once on stderr", async () => {
    const scratch = tempDir("record-forward-h2-");
    const runs = join(scratch, "runs");
    const mock = await startProbeMock(join(FIXTURES, "h2-probe.yaml"), { runsDir: runs, runName: "upstream" });
    closers.push(() => mock.close());
    const origin = mock.baseUrl.replace(/\/v1$/, "");
    const args = ["--forward", "--forward-to", `api.openai.com=${origin}`, "--runs", runs, "--no-view"];
    const { done } = startCliIn(scratch, ["record", ...args, "--", "node", join(FIXTURES, "h2-client.mjs")], scratch, {
      XDG_CACHE_HOME: join(scratch, "cache"),
      ...(curl && { CURL: curl }),
    });
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ClientLine);
    const of = (client: string) => lines.find((line) => line.client === client);

    expect(of("both")).toMatchObject({ agreed: "http/1.1", status: 200 });
    expect(of("websocket")).toMatchObject({ ended: "response.completed" });
    // Refused in the handshake: the client's own error names the alert, no request was sent.
    expect(of("h2-only")).toMatchObject({ error: "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL" });
    expect(of("h2-only")!.status).toBeUndefined();
    // HTTP/2 spoken first: answered in HTTP/2, GOAWAY with HTTP_1_1_REQUIRED (0xd).
    expect(of("prior-knowledge")).toMatchObject({ goaway: 0xd });
    expect(of("prior-knowledge")!.status).toBeUndefined();
    // curl offers http/1.1 beside h2 even with --http2-prior-knowledge on HTTPS: both recorded.
    if (curl)
      for (const flag of ["--http2", "--http2-prior-knowledge"])
        expect(of(`curl ${flag}`)).toMatchObject({ exit: 0, out: "1.1 200" });

    const said = result.stderr.replace(/\s+/g, " ");
    const refusals = [
      "record: api.openai.com: the client offered only h2 (ALPN) and the forward proxy records HTTP/1.1 only: TLS refused",
      "record: api.openai.com: the client spoke HTTP/2 unasked (prior knowledge) and the forward proxy records HTTP/1.1 only: HTTP_1_1_REQUIRED",
    ];
    for (const line of refusals) expect(said.split(line).length - 1).toBe(1);

    // Every request that was made over HTTP/1.1 is a full record, as the mock got it; nothing else.
    const records = jsonl<RequestRecord>(join(runs, "node", "requests.jsonl"));
    const loop = (api: string) => ["loop", api, 200, "complete"];
    expect(records.filter((r) => r.kind === "loop").map((r) => [r.kind, r.api, r.status, r.ending])).toEqual([
      loop("openai-completions"),
      loop("openai-responses"),
      ...(curl ? [loop("openai-completions"), loop("openai-completions")] : []),
    ]);
    expect(records.find((r) => r.api === "openai-responses")?.transport).toBe("websocket");
    const sent = jsonl<Payload>(join(runs, "node", "payloads.jsonl"));
    const atMock = jsonl<Payload>(join(mock.liveDir, "payloads.jsonl"));
    // The socket's summary of its frames is a side payload of the capture's own, not a request.
    const bodies = (rows: Payload[]) =>
      rows.filter((p) => p.type === "request" && p.kind !== "side").map((p) => p.body);
    expect(bodies(sent)).toEqual(bodies(atMock));
  });
});
