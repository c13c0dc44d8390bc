/**
 * `report --cost` and `diff p1 p1-gemini --cost` on Gemini runs: p1-gemini priced as its probe's
 * gemini-2.5-flash, Gemini's implicit cache rules (the minimum prefix per model, the cached-token
 * price) worked out by hand from the records, a request that reads an explicit cache
 * (`cachedContent`), and the provider's `usageMetadata` compared with the prediction — and `show`
 * and `view` take the run, and `export otel` sends it to a real OTLP receiver.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { strlen } from "cli-table3/src/utils.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { startOtlpReceiver } from "../analysis/otel/otlp-receiver.js";
import { savedPageData } from "../analysis/view/saved-page.js";
import { runProbesInto } from "../analysis/view/view-runs.js";
import { cliInProcess } from "../fixtures/cli-in-process.js";
import { expectDollars } from "../fixtures/expect-dollars.js";
import { startCliIn } from "./scratch-cli.js";

/** A command in this process (test/fixtures/cli-in-process.ts); `export otel` below is the built CLI's child. */
const cli = (...args: string[]) => cliInProcess({ PAYLOAD_PROBE_PRICING: "", COLUMNS: "80" }, ...args, "--runs", runs);
const costOf = async (...args: string[]) => JSON.parse((await cli("report", ...args, "--cost", "--json")).out);

let base: string;
let runs: string;
const jsonLines = <T>(path: string): T[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
const writeLines = (path: string, rows: unknown[]) =>
  writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
const shared = (r: RequestRecord) => (r.prefix as unknown as { sharedTokens: number }).sharedTokens;

beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["p1", "p1-gemini"]));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("report --cost on Gemini", () => {
  it("p1-gemini is priced as gemini-2.5-flash with no flag: no prompt reaches its 2,048-token minimum, so nothing is read", async () => {
    const cost = await costOf("p1-gemini");
    const records = jsonLines<RequestRecord>(join(runs, "p1-gemini", "requests.jsonl"));
    expect(cost.unpriced).toEqual([]);
    for (const [i, r] of cost.requests.entries()) {
      expect(r.pricedAs).toBe("gemini-2.5-flash");
      expect(records[i]!.tokens!.total).toBeLessThan(2048);
      expect(r.predicted.cacheRead).toBe(0);
      // 2.5 Flash: $0.30 per million prompt tokens.
      expectDollars(r.predictedCost, (records[i]!.tokens!.total * 0.3) / 1e6);
    }
    const { out } = await cli("report", "p1-gemini", "--cost");
    for (const line of out.split("\n")) expect(strlen(line), line).toBeLessThanOrEqual(80);
  });

  it("as gemini-3-flash-preview (1,024 minimum) each later request reads what it shares; an explicit cache reads nothing implicitly", async () => {
    cpSync(join(runs, "p1-gemini"), join(runs, "gemini-session"), { recursive: true });
    const payloadsFile = join(runs, "gemini-session", "payloads.jsonl");
    const payloads = jsonLines<{ type: string; seq: number; body: string }>(payloadsFile).map((p) =>
      p.type === "request" && p.seq === 4
        ? { ...p, body: JSON.stringify({ ...JSON.parse(p.body), cachedContent: "cachedContents/notes" }) }
        : p,
    );
    writeLines(payloadsFile, payloads);
    const records = jsonLines<RequestRecord>(join(runs, "gemini-session", "requests.jsonl"));
    const cost = await costOf("gemini-session", "--model", "gemini-3-flash-preview");
    const reads = cost.requests.map((r: { predicted: { cacheRead: number } }) => r.predicted.cacheRead);
    expect(shared(records[1]!)).toBeGreaterThan(1024);
    expect(reads).toEqual([0, shared(records[1]!), shared(records[2]!), 0]);
    // 3 Flash Preview: $0.50 per million prompt tokens, $0.05 read from the cache.
    const second = cost.requests[1];
    const byHand = ((records[1]!.tokens!.total - reads[1]) * 0.5 + reads[1] * 0.05) / 1e6;
    expectDollars(second.predictedCost, byHand);
  });

  it("the provider's usageMetadata is the reported split, compared with the prediction", async () => {
    cpSync(join(runs, "p1-gemini"), join(runs, "gemini-reported"), { recursive: true });
    const file = join(runs, "gemini-reported", "requests.jsonl");
    const records = jsonLines<RequestRecord>(file).map((r, i) => ({
      ...r,
      usage: {
        source: "provider",
        inputTokens: 1300 + i * 100,
        outputTokens: 12,
        cachedInputTokens: i === 0 ? undefined : 1024,
        raw: { promptTokenCount: 1300 + i * 100, cachedContentTokenCount: i === 0 ? undefined : 1024 },
      },
    }));
    writeLines(file, records);
    const cost = await costOf("gemini-reported", "--model", "gemini-2.5-flash");
    expect(cost.requests[1].reported).toMatchObject({ inputTokens: 1400, cacheRead: 1024, uncached: 376 });
    // Predicted under the 2,048 minimum: nothing read, where the provider reported a read.
    expect(cost.requests[1].disagreement).toMatch(/cache read/);
    expect(cost.requests[0].disagreement).toBeNull();
  });
});

describe("diff p1 p1-gemini", () => {
  it("compares the same conversation on both APIs: same roles, no prefix break, each side priced as its own model", async () => {
    const { code, out, err } = await cli("diff", "p1", "p1-gemini", "--cost");
    expect(code, err).toBe(0);
    expect(out).toContain("A priced as gpt-4.1; B as gemini-2.5-flash");
    expect(out).toMatch(/roles\s+same/);
    expect(out).toContain("prefix breaks B: none");
    for (const line of out.split("\n")) expect(strlen(line), line).toBeLessThanOrEqual(80);
  });
});

describe("export otel sends a Gemini run", () => {
  it("one chat span per request, provider gcp.gemini, the model from the URL, priced as the probe's model", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const args = ["export", "otel", "p1-gemini", "--endpoint", receiver.url, "--runs", runs];
      const result = await startCliIn(base, args, PROJECT_ROOT, { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }).done;
      expect(result.code, result.stderr).toBe(0);
      const chats = receiver.spans().filter((span) => span.name.startsWith("chat "));
      expect(chats.map((span) => span.name)).toEqual(Array(4).fill("chat qwen3.8-flash"));
      for (const span of chats)
        expect(span.attributes).toMatchObject({
          "gen_ai.provider.name": "gcp.gemini",
          "payload_probe.api": "google-generative-ai",
        });
    } finally {
      await receiver.close();
    }
  });
});

describe("show and view read a Gemini run", () => {
  it("show names the API and the model from the URL, and prints the body's generationConfig; --json carries it", async () => {
    const { code, out, err } = await cli("show", "p1-gemini", "1");
    expect(code, err).toBe(0);
    const lines = out.split("\n");
    // At 80 columns the headline wraps, where depending on the run folder's length; it ends with the model.
    expect(out).toMatch(/request\s+1\s+·\s+loop\s+·\s+google-generative-ai\s+qwen3\.8-flash\n/);
    expect(lines).toContain('generationConfig: {"maxOutputTokens":131072}');
    const json = JSON.parse((await cli("show", "p1-gemini", "1", "--json")).out);
    expect(json.generationConfig).toEqual({ maxOutputTokens: 131072 });
    expect(json.segments.map((s: { name?: string }) => s.name).slice(0, 2)).toEqual(["read", "mcp"]);
  });

  it("view --cost writes the page with the tools taken apart from the Gemini bodies", async () => {
    const page = join(base, "gemini.html");
    const view = await cli("view", "p1-gemini", "--cost", "--out", page);
    expect(view.code, view.err).toBe(0);
    const { items } = savedPageData(readFileSync(page, "utf8"));
    // A functionDeclaration's description reaches the page only through the codec's dissection.
    expect(items).toContain("Gateway to the tools that MCP servers offer");
  });
});
