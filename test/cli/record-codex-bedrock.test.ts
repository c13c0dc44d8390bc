/**
 * Codex on Amazon Bedrock recorded in one command. Codex 0.169 has two built-in Bedrock providers:
 * `amazon-bedrock-runtime` (https://bedrock-runtime.<region>.amazonaws.com/openai/v1) and
 * `amazon-bedrock` (Mantle: https://bedrock-mantle.<region>.api.aws/openai/v1), both speaking the
 * OpenAI Responses API over HTTP POSTs, signed with AWS SigV4 or carrying a Bedrock API key as bearer.
 * The real Codex from `agents install`, with one of them selected, runs under `record` without
 * `--forward`: record sees the provider and becomes Codex's HTTPS proxy by itself, standing in for
 * the host and sending its requests to a local stand-in that checks the signature with the same
 * made-up keys (or the made-up API key) and hands each request to our mock.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent } from "../../src/agents/npm-agents.js";
import { folderSource } from "../../src/analysis/load-run.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { filesContaining, jsonl, startCli } from "../capture/http-harness.js";
import { type BedrockOpenAiFront, startBedrockOpenAiFront } from "../fixtures/bedrock-openai-front.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

const codex = findNpmAgent("codex");
const KEYS = { accessKeyId: "AKIAPAYLOADPROBE7CDX", secretAccessKey: "pp/made-up+secret/Cx41nQ8rTzWm2Ls7Vb0Hd5Jk" };
const API_KEY = "ABSKpayloadprobemadeupbedrockapikey4f9d21";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

interface CodexOnBedrock {
  provider: string;
  host: string;
  /** What config.toml says, and Codex's own arguments before the prompt. */
  config: string;
  codexArgs: string[];
  /** The user's AWS credentials: keys to sign with, or a Bedrock API key. */
  aws: Record<string, string>;
}

/**
 * The real Codex on a Bedrock provider for one scripted session (a tool call, then the answer) under
 * `record --forward-to HOST=<stand-in>` and nothing else: it exits 0 with the mock's answer, the run
 * holds a full Responses record for each request the stand-in got, its body byte for byte the mock's.
 */
async function codexOnBedrock(setup: CodexOnBedrock) {
  const scratch = tempDir("record-codex-bedrock-");
  const runs = join(scratch, "runs");
  const mock = await startCli(["mock", join(PROJECT_ROOT, "test/fixtures/codex-tool-session.yaml"), "--runs", runs]);
  closers.push(() => mock.stop());
  const front = await startBedrockOpenAiFront(new URL(mock.url).origin, KEYS, API_KEY);
  closers.push(() => front.close());
  const home = join(scratch, "home");
  mkdirSync(join(home, ".codex"), { recursive: true });
  writeFileSync(join(home, ".codex", "config.toml"), setup.config);
  const flags = ["--forward-to", `${setup.host}=${front.origin}`, "--runs", runs, "--name", "codex", "--no-view"];
  const prompt = ["exec", "--skip-git-repo-check", ...setup.codexArgs, "Run echo, then say hello."];
  const { done } = startCliIn(scratch, ["record", ...flags, "--", codex!.program, ...prompt], scratch, {
    HOME: home,
    XDG_CACHE_HOME: join(scratch, "cache"),
    AWS_REGION: "us-east-1",
    ...setup.aws,
  });
  const result = await done;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("Scripted answer one.");
  // Said before Codex starts (folded to the terminal's width).
  expect(result.stderr.replace(/\s+/g, " ")).toContain(
    `Codex's model provider is ${setup.provider} (Amazon Bedrock, each request signed for its host): record is the command's HTTPS proxy, as with --forward`,
  );
  expect(await mock.stop()).toBe(0);
  const records = jsonl<RequestRecord>(join(runs, "codex", "requests.jsonl")).filter((r) => r.api !== null);
  expect(records.map((r) => [r.kind, r.api, r.status, r.transport ?? "http"])).toEqual(
    front.seen.map(() => ["loop", "openai-responses", 200, "http"]),
  );
  // Codex stops reading a reply at its response.completed event and may drop the connection before
  // the stream's last bytes: such a turn ends "cancelled", its reply read whole all the same (calls below).
  for (const record of records) expect(["complete", "cancelled"]).toContain(record.ending);
  expect(records.at(-1)!.ending).toBe("complete");
  // Byte for byte what the mock got, request by request (a call, then its output sent back).
  const bodies = (dir: string) =>
    [...folderSource(dir, { runsDir: runs }).payloads()].filter((row) => row.kind === "loop").map((row) => row.body);
  expect(bodies(join(runs, "codex"))).toEqual(bodies(join(runs, "codex-tool-session-mock")));
  expect(records.map((r) => r.response?.calls)).toEqual([["exec_command"], []]);
  // What record wrote (the run, the cache with its authority) holds no credential. Codex's own
  // files under HOME are its business: its shell snapshots keep the environment it was given.
  for (const secret of [KEYS.secretAccessKey, KEYS.accessKeyId, API_KEY])
    for (const dir of [runs, join(scratch, "cache")]) expect(filesContaining(dir, secret)).toEqual([]);
  return { front, records };
}

const expectSeen = (front: BedrockOpenAiFront, host: string, auth: string) =>
  expect(front.seen).toEqual([1, 2].map(() => ({ line: "POST /openai/v1/responses", host, auth, valid: true })));

describe("record -- codex on Amazon Bedrock, no --forward needed", () => {
  it.skipIf(!codex)(
    "amazon-bedrock-runtime in config.toml, made-up AWS keys: each request signed for the runtime's host and valid at the stand-in, each a full Responses record",
    async () => {
      const host = "bedrock-runtime.us-east-1.amazonaws.com";
      const { front, records } = await codexOnBedrock({
        provider: "amazon-bedrock-runtime",
        host,
        config: 'model_provider = "amazon-bedrock-runtime"\n',
        codexArgs: [],
        aws: { AWS_ACCESS_KEY_ID: KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey },
      });
      expectSeen(front, host, "sigv4 bedrock");
      for (const record of records) expect(record.model).toMatch(/^(global\.)?openai\./);
    },
    240_000,
  );

  it.skipIf(!codex)(
    "amazon-bedrock (Mantle) chosen with -c on Codex's command line, a Bedrock API key: each request carries it to Mantle's host, each a full record",
    async () => {
      const host = "bedrock-mantle.us-east-1.api.aws";
      const { front } = await codexOnBedrock({
        provider: "amazon-bedrock",
        host,
        config: 'model = "openai.gpt-oss-120b"\n',
        codexArgs: ["-c", 'model_provider="amazon-bedrock"'],
        aws: { AWS_BEARER_TOKEN_BEDROCK: API_KEY },
      });
      expectSeen(front, host, "bearer");
    },
    240_000,
  );
});
