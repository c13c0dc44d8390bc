/**
 * The runtime with its provider over HTTP: p1 on each wire API, run against `mock` serving the same
 * probe, must hold what the in-process run holds, and the mock must have received the very bodies
 * the runtime recorded.
 */
import { createServer } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRun } from "../../src/analysis/load-run.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { CheckFailed, UserError } from "../../src/errors.js";
import { loadProbeFile, resolveProbePath } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { httpTransport } from "../../src/providers/http-transport.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterAll(() => removeTempDirs());

/** Record fields that describe the request itself, the same however the reply travelled. */
const shape = (r: RequestRecord) => ({
  api: r.api,
  tools: r.tools,
  roles: r.roles,
  markers: r.markers,
  bodyBytes: r.bodyBytes,
  hashes: r.hashes,
  prefix: r.prefix,
  response: r.response,
});

describe("the runtime's provider over HTTP", () => {
  it.each(["p1", "p1-anthropic", "p1-responses", "p1-gemini"])(
    "%s through mock holds p1's expectations, with the in-process run's requests and estimated usage",
    async (name) => {
      const base = tempDir("http-provider-");
      const runsDir = join(base, "runs");
      const probe = await loadProbeFile(resolveProbePath(name, PROJECT_ROOT), PROJECT_ROOT);
      const options = { runsDir, workspaceRoot: join(base, "ws"), database: false };
      const local = await runProbe(probe, options);

      const mock = await startMockServer(
        { name: probe.name, markers: probe.markers, script: probe.model.script },
        { runsDir, database: false },
      );
      let remote: Awaited<ReturnType<typeof runProbe>>;
      try {
        remote = await runProbe(probe, { ...options, providerUrl: mock.baseUrl });
      } finally {
        await mock.close();
      }
      expect(remote.failures).toEqual([]);
      expect(remote.records).toHaveLength(4);
      expect(remote.records.map(shape)).toEqual(local.records.map(shape));
      for (const record of remote.records) {
        expect(record.usage?.source).toBe("estimate");
        expect(record.usage?.inputTokens).toBe(record.tokens?.total);
      }
      // The mock received exactly the bodies the runtime's capture stored.
      const sent = [...resolveRun(remote.dir, { runsDir }).payloads()].map((p) => p.body);
      const received = [...resolveRun(mock.dir, { runsDir }).payloads()].map((p) => p.body);
      expect(received).toEqual(sent);
    },
  );

  it("a provider that cannot be reached is bad input; an error status fails the run quoting the provider", async () => {
    const transport = httpTransport();
    const request = { api: "openai-completions" as const, body: "{}", kind: "loop" as const };
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(transport({ ...request, url: `http://127.0.0.1:${port}/v1/chat/completions` })).rejects.toThrow(
      UserError,
    );

    const failing = createServer((_, response) => {
      response.writeHead(429, { "content-type": "application/json" });
      response.end('{"error":{"message":"slow down"}}');
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(failing.address() as { port: number }).port}/v1/chat/completions`;
    try {
      const failure = transport({ ...request, url });
      await expect(failure).rejects.toThrow(CheckFailed);
      await expect(transport({ ...request, url })).rejects.toThrow(/answered HTTP 429: .*slow down/);
    } finally {
      failing.close();
    }
  });
});
