/**
 * Claude Code on Amazon Bedrock, recorded in one command: the real Claude Code from `agents install`
 * with CLAUDE_CODE_USE_BEDROCK=1 and made-up AWS keys runs under `record --forward`, which stands in
 * for Bedrock's runtime host and sends its requests to a local mock that checks every SigV4 signature
 * with the same keys and answers with AWS EventStream frames. Every process is real.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent } from "../../src/agents/npm-agents.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { filesContaining, jsonl } from "../capture/http-harness.js";
import { type BedrockMock, startBedrockMock } from "../fixtures/bedrock-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

const claude = findNpmAgent("claude-code");
const KEYS = { accessKeyId: "AKIAPAYLOADPROBE7TST", secretAccessKey: "pp/made-up+secret/Kq93mZxTwVb1Lr8Ns0Yd4Hc" };
const HOST = "bedrock-runtime.us-east-1.amazonaws.com";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

describe("record --forward: Claude Code on Amazon Bedrock", () => {
  it.skipIf(!claude)(
    "records every InvokeModel and InvokeModelWithResponseStream request in full; each signature valid at the mock; no key in any file",
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
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
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
});
