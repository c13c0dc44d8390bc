/**
 * Claude Code on Amazon Bedrock and on Google Vertex AI, each recorded in one command: the real Claude
 * Code from `agents install` runs under `record --forward`, which stands in for the cloud's host and
 * sends its requests to a local mock. On Bedrock, with made-up AWS keys, the mock checks every SigV4
 * signature with the same keys and answers with AWS EventStream frames; on Vertex, the mock's metadata
 * server hands out a made-up bearer token (GCE_METADATA_HOST) and the endpoint checks each request
 * carries it. Every process is real.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent } from "../../src/agents/npm-agents.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { filesContaining, jsonl } from "../capture/http-harness.js";
import { type BedrockMock, startBedrockMock } from "../fixtures/bedrock-mock.js";
import { CLAUDE_QUIET } from "../fixtures/claude-quiet.js";
import { startVertexMock } from "../fixtures/vertex-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

const claude = findNpmAgent("claude-code");
const KEYS = { accessKeyId: "AKIAPAYLOADPROBE7TST", secretAccessKey: "pp/made-up+secret/Kq93mZxTwVb1Lr8Ns0Yd4Hc" };
const HOST = "bedrock-runtime.us-east-1.amazonaws.com";
const VERTEX_HOST = "us-east5-aiplatform.googleapis.com";
const TOKEN = "ya29.made-up-vertex-token-5c2e91";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

describe("record --forward: Claude Code on the clouds", () => {
  it.skipIf(!claude)(
    "on Amazon Bedrock: records every InvokeModel and InvokeModelWithResponseStream request in full; each signature valid at the mock; no key in any file",
    async () => {
      const scratch = tempDir("record-bedrock-");
      const runs = join(scratch, "runs");
      const mock: BedrockMock = await startBedrockMock(KEYS, "Hello from Bedrock.");
      closers.push(() => mock.close());
      const home = join(scratch, "home");
      const args = ["--forward", "--forward-to", `${HOST}=${mock.origin}`, "--runs", runs, "--name", "claude"];
      const { done } = startCliIn(scratch, ["record", ...args, "--", claude!.program, "-p", "Say hello."], scratch, {
        HOME: home,
        XDG_CACHE_HOME: join(scratch, "cache"),
        CLAUDE_CODE_USE_BEDROCK: "1",
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: KEYS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey,
        ...CLAUDE_QUIET,
      });
      const result = await done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("Hello from Bedrock.");

      // Every request reached the mock signed as Claude Code signed it for Bedrock's own host.
      expect(mock.seen.length).toBeGreaterThan(0);
      expect(mock.seen.filter((request) => !request.signatureValid)).toEqual([]);

      const records = jsonl<RequestRecord>(join(runs, "claude", "requests.jsonl"));
      expect(records).toHaveLength(mock.seen.length);
      for (const record of records) {
        expect(record).toMatchObject({ kind: "loop", api: "anthropic-messages", status: 200, ending: "complete" });
        expect(record.model).toMatch(/^(us\.)?anthropic\.claude-/);
      }
      // The streamed turn: its EventStream read as the Messages events it carries.
      const streamed = records.filter((_, i) => mock.seen[i]!.path.endsWith("/invoke-with-response-stream"));
      expect(streamed.length).toBeGreaterThan(0);
      for (const record of streamed) expect(record.response?.kind).toBe("text");

      for (const secret of [KEYS.secretAccessKey, KEYS.accessKeyId])
        expect(filesContaining(scratch, secret)).toEqual([]);
    },
    240_000,
  );

  it.skipIf(!claude)(
    "on Vertex AI: records rawPredict and streamRawPredict in full with the model from the path; the token reached the mock and no file",
    async () => {
      const { mock, records } = await claudeOnVertex((mockOrigin) => [
        "--forward",
        "--forward-to",
        `${VERTEX_HOST}=${mockOrigin}`,
      ]);
      for (const record of records) {
        expect(record).toMatchObject({ kind: "loop", api: "anthropic-messages", status: 200, ending: "complete" });
        expect(record.model).toMatch(/^claude-/);
        expect(record.response?.kind).toBe("text");
      }
      expect(mock.seen.some((request) => request.path.endsWith(":streamRawPredict"))).toBe(true);
    },
    240_000,
  );

  it.skipIf(!claude)(
    "on Vertex AI through a base URL: record points ANTHROPIC_VERTEX_BASE_URL at its /vertex route, no proxy variables needed",
    async () => {
      const { mock, records } = await claudeOnVertex((mockOrigin) => ["--upstream-vertex", mockOrigin]);
      // The SDK's own path under the base: /v1/projects/…/publishers/anthropic/models/<model>:…
      for (const request of mock.seen)
        expect(request.path).toMatch(/^\/v1\/projects\/made-up-project\/locations\/us-east5\/publishers\/anthropic\//);
      expect(records.map((r) => [r.api, r.status, r.ending])).toEqual(
        mock.seen.map(() => ["anthropic-messages", 200, "complete"]),
      );
    },
    240_000,
  );
});

/**
 * The real Claude Code on Vertex AI for one prompt under `record <flags>` against the Vertex mock: it
 * exits 0 with the mock's answer, every request carried the token, there is a record per request, and
 * the token is in no file.
 */
async function claudeOnVertex(flags: (mockOrigin: string) => string[]) {
  const scratch = tempDir("record-vertex-");
  const runs = join(scratch, "runs");
  const mock = await startVertexMock(TOKEN, "Hello from Vertex.");
  closers.push(() => mock.close());
  const args = [...flags(mock.origin), "--runs", runs, "--name", "claude"];
  const { done } = startCliIn(scratch, ["record", ...args, "--", claude!.program, "-p", "Say hello."], scratch, {
    HOME: join(scratch, "home"),
    XDG_CACHE_HOME: join(scratch, "cache"),
    CLAUDE_CODE_USE_VERTEX: "1",
    ANTHROPIC_VERTEX_PROJECT_ID: "made-up-project",
    CLOUD_ML_REGION: "us-east5",
    // google-auth-library asks this metadata server for a token, as on a Google machine; the
    // address is local, so it goes around the proxy (NO_PROXY) and is never recorded.
    GCE_METADATA_HOST: mock.metadataHost,
    ...CLAUDE_QUIET,
  });
  const result = await done;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("Hello from Vertex.");
  expect(mock.seen.length).toBeGreaterThan(0);
  expect(mock.seen.filter((request) => !request.tokenValid)).toEqual([]);
  const records = jsonl<RequestRecord>(join(runs, "claude", "requests.jsonl"));
  expect(records).toHaveLength(mock.seen.length);
  expect(filesContaining(scratch, TOKEN)).toEqual([]);
  return { mock, records };
}
