/**
 * `record --forward` end to end: the built CLI is the HTTPS proxy of a real Node script using the
 * official Anthropic client with no base URL. The proxy ends the client's TLS for api.anthropic.com
 * with a certificate from the user's authority (made in the test's own cache folder) and sends the
 * requests to our mock (`--forward-to`); a TLS server standing for any other host is reached through
 * a tunnel the proxy neither reads nor records. Every process is real; nothing waits on a clock.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer as createTlsServer, type Server } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { localCertificate } from "../../src/capture/local-tls.js";
import type { MockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { filesContaining, jsonl } from "../capture/http-harness.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn, MAIN, scratchEnv, startCliIn } from "./scratch-cli.js";

const FIXTURES = join(PROJECT_ROOT, "test", "fixtures", "record");
const CLIENT = join(FIXTURES, "forward-client.mjs");
const KEY = "sk-ant-forward-test-KEY-73d1";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

async function mockIn(runs: string): Promise<MockServer> {
  const mock = await startProbeMock(join(FIXTURES, "sdk-probe.yaml"), { runsDir: runs, runName: "upstream" });
  closers.push(() => mock.close());
  return mock;
}

/** A TLS server for a host record must not read: it answers "other got: <what it was sent>". */
async function otherHost(): Promise<{ port: number; authority: string; got: string[] }> {
  const certificate = await localCertificate();
  const got: string[] = [];
  const server: Server = createTlsServer(certificate, (socket) => {
    socket.once("data", (chunk: Buffer) => {
      got.push(chunk.toString());
      socket.end(`other got: ${chunk}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as { port: number }).port, authority: certificate.authority, got };
}

describe("record --forward", () => {
  it("records an SDK client with no base URL through CONNECT, tunnels another host unread, keeps the authority's key in the user's cache alone", async () => {
    const scratch = tempDir("record-forward-");
    const runs = join(scratch, "runs");
    const cache = join(scratch, "cache");
    const mock = await mockIn(runs);
    const other = await otherHost();
    const otherCa = join(scratch, "other-ca.pem");
    writeFileSync(otherCa, other.authority);
    const origin = mock.baseUrl.replace(/\/v1$/, "");
    const args = ["--forward", "--forward-to", `api.anthropic.com=${origin}`, "--runs", runs, "--", "node", CLIENT];
    const { done } = startCliIn(scratch, ["record", ...args], scratch, {
      XDG_CACHE_HOME: cache,
      ANTHROPIC_API_KEY: KEY,
      OTHER_HOST: `127.0.0.1:${other.port}`,
      OTHER_CA: otherCa,
    });
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    // The other host's own certificate reached the client (the TLS was not ended at the proxy).
    expect(result.stdout).toBe("other got: hello other\n");
    expect(other.got).toEqual(["hello other\n"]);

    // One record: the Messages request, in full, as the mock got it; nothing of the tunnel.
    const records = jsonl<RequestRecord>(join(runs, "node", "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.kind, r.api, r.model, r.status])).toEqual([
      [1, "loop", "anthropic-messages", "mock-model", 200],
    ]);
    const sent = jsonl<{ type: string; body: string; url?: string }>(join(runs, "node", "payloads.jsonl"));
    expect(sent.find((p) => p.type === "request")?.url).toBe(`${origin}/v1/messages`);
    const atMock = jsonl<{ type: string; body: string }>(join(mock.liveDir, "payloads.jsonl"));
    expect(sent.filter((p) => p.type === "request").map((p) => p.body)).toEqual(
      atMock.filter((p) => p.type === "request").map((p) => p.body),
    );

    // The authority: in the user's cache, its key the user's alone, never in a run.
    const key = join(cache, "payload-probe", "ca", "key.pem");
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(join(cache, "payload-probe", "ca")).mode & 0o777).toBe(0o700);
    const keyBody = readFileSync(key, "utf8").split("\n")[1]!;
    expect(filesContaining(runs, keyBody)).toEqual([]);
    await mock.close();
    expect(filesContaining(scratch, KEY)).toEqual([]);
    // The session's folder (the bundles given the command) went with it.
    expect(readdirSync(scratch).filter((name) => name.startsWith("payload-probe-record-"))).toEqual([]);

    // `ca --remove` takes it away, and says there is nothing the second time.
    const ca = (...flags: string[]) =>
      spawnSync(process.execPath, [MAIN, "ca", ...flags], {
        env: { ...scratchEnv(scratch), XDG_CACHE_HOME: cache },
        encoding: "utf8",
      });
    expect(JSON.parse(ca("--json").stdout)).toMatchObject({ exists: true });
    expect(JSON.parse(ca("--remove", "--json").stdout)).toMatchObject({ removed: true });
    expect(ca("--remove").stdout).toMatch(/^no authority at .*: nothing to remove\n$/);
  });

  it("a bad --forward-to is bad input naming the flag, before anything starts", () => {
    const scratch = tempDir("record-forward-bad-");
    const record = (...args: string[]) => cliIn(scratch, "record", ...args, "--", "node", "-e", "0");
    const notPair = record("--forward", "--forward-to", "api.anthropic.com");
    expect([notPair.code, notPair.stderr]).toEqual([
      2,
      'payload-probe: record: --forward-to expected HOST=URL (api.anthropic.com=http://127.0.0.1:8080), got "api.anthropic.com"\n',
    ]);
    const notUrl = record("--forward", "--forward-to", "api.anthropic.com=ftp://x");
    expect(notUrl.stderr).toContain('--forward-to expected an http or https URL, got "ftp://x"');
    const alone = record("--forward-to", "api.anthropic.com=http://127.0.0.1:9");
    expect([alone.code, alone.stderr]).toMatchObject([2, expect.stringContaining("--forward-to is for --forward")]);
  });
});
