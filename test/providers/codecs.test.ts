import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheAgreement } from "../../src/analysis/cache-agreement.js";
import { resolveRun } from "../../src/analysis/load-run.js";
import { tokenLedger } from "../../src/analysis/segments.js";
import { openCaptureRun } from "../../src/capture/capture-run.js";
import { UserError } from "../../src/errors.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import { resolveModel } from "../../src/providers/models.js";
import type { WireApi } from "../../src/providers/types.js";
import { WIRE_APIS } from "../../src/providers/types.js";
import { sharedRecords, sharedRun } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

describe("the codec registry", () => {
  it("has one codec per wire API, each answering for its own API", () => {
    expect(WIRE_APIS).toEqual([
      "openai-completions",
      "anthropic-messages",
      "openai-responses",
      "google-generative-ai",
      "bedrock-converse",
    ]);
    for (const api of WIRE_APIS) expect(codecFor(api).api).toBe(api);
  });

  it("an API no codec reads (a record written elsewhere) is bad input naming the known APIs", () => {
    expect(() => codecFor("gemini" as WireApi)).toThrow(UserError);
    expect(() => codecFor("gemini" as WireApi)).toThrow(/known APIs are openai-completions, anthropic-messages/);
  });

  it("a probe's model.api must name one of them", async () => {
    const file = join(tempDir("pp-codecs-"), "bad.yaml");
    writeFileSync(file, "name: bad\nmodel:\n  api: gemini\n  script: [{ text: hi }]\nprompts: [hi]\n");
    await expect(loadProbeFile(file, PROJECT_ROOT)).rejects.toThrow(UserError);
    await expect(loadProbeFile(file, PROJECT_ROOT)).rejects.toThrow(/model\.api/);
  });
});

describe("provider usage in records", () => {
  it("for every API, the usage a response reports reaches the record, apart from the offline token count", async () => {
    const run = openCaptureRun({ name: "usage", runsDir: tempDir("pp-usage-"), database: false });
    for (const api of WIRE_APIS) {
      const codec = codecFor(api);
      const request = codec.buildRequest(
        resolveModel("mock/m", api),
        { systemPrompt: "S", messages: [{ role: "user", content: "u" }], tools: [] },
        "loop",
      );
      const transport = run.capture.wrap(async (sent) => {
        const reply = codec.renderReply(
          { kind: "text", text: "ok", usage: { inputTokens: 50, outputTokens: 2 } },
          sent.body,
          sent.url,
        );
        return (async function* () {
          yield* reply.chunks;
        })();
      });
      expect((await codec.parseStream(await transport(request))).message.text).toBe("ok");
    }
    run.close();
    const records = run.capture.records;
    expect(records.map((r) => r.api)).toEqual(WIRE_APIS);
    for (const record of records) {
      expect(record.usage).toMatchObject({ source: "provider", inputTokens: 50, outputTokens: 2 });
      expect(record.tokens?.encoding).toBe("o200k_base");
    }
  });
});

describe("p1 on every wire API, end to end through runProbe", () => {
  // The suite's shared runs (test/fixtures/shared-runs.ts): each made by runProbe, in temp folders.
  const read = async (name: string) => ({ name, ...(await sharedRun(name)), records: await sharedRecords(name) });
  const runs = (async () => [
    await read("p1"),
    await read("p1-anthropic"),
    await read("p1-responses"),
    await read("p1-gemini"),
  ])();

  it("the same conversation holds p1's expectations on each API: roles, markers, constant tools, no prefix break", async () => {
    const [p1, anthropic, responses, gemini] = await runs;
    for (const result of [p1!, anthropic!, responses!, gemini!]) {
      expect(result.failures).toEqual([]);
      expect(result.records).toHaveLength(4);
      expect(result.records.map((r) => r.markers)).toEqual(p1!.records.map((r) => r.markers));
      expect(result.records.map((r) => r.tools)).toEqual(p1!.records.map((r) => r.tools));
      expect(result.records.slice(1).map((r) => r.prefix?.breakAt)).toEqual([null, null, null]);
    }
    expect(anthropic!.records.map((r) => r.api)).toEqual(Array(4).fill("anthropic-messages"));
    expect(responses!.records.map((r) => r.api)).toEqual(Array(4).fill("openai-responses"));
    expect(gemini!.records.map((r) => r.api)).toEqual(Array(4).fill("google-generative-ai"));
    expect(anthropic!.records.map((r) => r.roles)).toEqual(p1!.records.map((r) => r.roles));
    expect(gemini!.records.map((r) => r.roles)).toEqual(p1!.records.map((r) => r.roles));
    expect(responses!.records.at(-1)!.roles.join(">")).toBe(
      "developer>user>assistant>tool>assistant>tool>assistant>tool",
    );
  });

  it("model.cacheDiagnostics: the provider's verdict on every request after the first, agreeing with our prefix (issue 27)", async () => {
    const [, anthropic, responses] = await runs;
    for (const result of [anthropic!, responses!]) {
      const later = result.records.slice(1);
      expect(later.map((r) => r.cacheDiagnostics?.verdict)).toEqual(["hit", "hit", "hit"]);
      expect(later.map((r) => cacheAgreement(r))).toEqual(["agree", "agree", "agree"]);
      // The runtime asked itself: the fields are in the bodies it sent, nothing was added for it.
      expect(
        result.records.every((r) => r.cacheDiagnostics === undefined || r.cacheDiagnostics.added === undefined),
      ).toBe(true);
      expect(later.map((r) => r.cacheDiagnostics!.comparedWith)).toEqual(
        later.map((_, i) => `${result.name === "p1-anthropic" ? "msg" : "resp"}_mock_${i + 1}`),
      );
    }
    expect(anthropic!.records[0]!.cacheDiagnostics).toMatchObject({ source: "anthropic", verdict: "first-turn" });
    // OpenAI has no first-turn opt-in: the first Responses request asks nothing.
    expect(responses!.records[0]!.cacheDiagnostics).toBeUndefined();
  });

  it("each run's wire bodies are that API's requests, and the token ledger reads them to the records' totals", async () => {
    const expected: Record<string, { url: RegExp; firstKeys: string[] }> = {
      p1: { url: /\/v1\/chat\/completions$/, firstKeys: ["model", "messages", "stream", "stream_options"] },
      "p1-anthropic": { url: /^http:\/\/127\.0\.0\.1\/v1\/messages\?beta=true$/, firstKeys: ["model", "messages"] },
      "p1-responses": { url: /\/v1\/responses$/, firstKeys: ["model", "input", "stream", "prompt_cache_key"] },
      "p1-gemini": {
        url: /\/v1beta\/models\/qwen3\.8-flash:streamGenerateContent\?alt=sse$/,
        firstKeys: ["contents", "systemInstruction", "tools"],
      },
    };
    for (const result of await runs) {
      const want = expected[result.name]!;
      const payloads = [...resolveRun(result.dir, { runsDir: dirname(result.dir) }).payloads()];
      expect(payloads.map((p) => Object.keys(JSON.parse(p.body) as object).slice(0, want.firstKeys.length))).toEqual(
        Array(4).fill(want.firstKeys),
      );
      const totals: number[] = [];
      for await (const ledger of tokenLedger(payloads)) totals.push(ledger.total);
      expect(totals).toEqual(result.records.map((r) => r.tokens!.total));
      const first = JSON.parse(readFileSync(join(result.dir, "payloads.jsonl"), "utf8").split("\n")[0]!) as {
        url: string;
      };
      expect(first.url).toMatch(want.url);
    }
  });
});
