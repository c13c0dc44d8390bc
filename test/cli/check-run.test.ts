/**
 * The CI gate on a captured run: an "agent" (the OpenAI chat completions codec, speaking HTTP)
 * talks to the mock through the capture proxy, and `check --run` gates what the proxy recorded —
 * passing on its own baseline, failing with exit 1 and one "what changed" line after a change
 * that adds a tool and a system line. Every figure in that line is worked out by hand from the records.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dollars } from "../../src/analysis/cost/money.js";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import type { Context, ModelSpec, ToolDefinition } from "../../src/providers/types.js";
import { promptThenToolResult, startCli, writeTinyProbe } from "../capture/http-harness.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-check-run-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const runs = join(scratch, "runs");
const baseline = join(scratch, "agent-baseline.json");

const model: ModelSpec = {
  api: "openai-completions",
  ref: "openai/gpt-4.1",
  id: "gpt-4.1",
  baseUrl: "",
  maxTokens: 1024,
  reasoning: false,
};
const tool = (name: string): ToolDefinition => ({
  name,
  description: `Reads what ${name} is asked for.`,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
});
// Long enough (well over 1,024 tokens) that the second request reads from the cache.
const SYSTEM = Array.from(
  { length: 90 },
  (_, i) => `Rule ${i}: keep each answer short and name the file it came from.`,
);

/** Two requests through the proxy, as an agent makes them: the prompt, then the tool result. */
async function captureAgentSession(options: { extraTool?: string; extraLine?: string }): Promise<void> {
  const mock = await startMockServer((await writeTinyProbe(scratch)).model, {
    runsDir: join(scratch, "mock-runs"),
    database: false,
  });
  const proxy = await startCli(["proxy", "--upstream", mock.baseUrl, "--runs", runs, "--name", "agent", "--no-db"]);
  try {
    const context: Context = {
      systemPrompt: [...SYSTEM, ...(options.extraLine ? [options.extraLine] : [])].join("\n"),
      tools: [tool("read"), ...(options.extraTool ? [tool(options.extraTool)] : [])],
      messages: [{ role: "user", content: "read notes.txt" }],
    };
    await promptThenToolResult(proxy.url, model, context, "the notes");
  } finally {
    await proxy.stop();
    await mock.close();
  }
}

const records = (): RequestRecord[] =>
  readFileSync(join(runs, "agent", "requests.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RequestRecord);

/** gpt-4.1's prompt dollars by hand: OpenAI caches the shared prefix from 1,024 tokens in steps of 128. */
function dollarsByHand(rs: RequestRecord[]): number {
  return rs.reduce((sum, r, i) => {
    const shared = i === 0 ? 0 : (r.prefix as unknown as { sharedTokens: number }).sharedTokens;
    const cached = shared < 1024 ? 0 : shared - (shared % 128);
    return sum + ((r.tokens!.total - cached) * 2 + cached * 0.5) / 1e6;
  }, 0);
}

/** `check --run` of the agent's run, priced as `model` unless another `--model` follows in `extra`. */
const checkAs = async (priced: string, ...extra: string[]) =>
  await cliInScratch(
    scratch,
    "check",
    "--run",
    join(runs, "agent"),
    "--baseline",
    baseline,
    "--model",
    priced,
    ...extra,
  );
const check = (...extra: string[]) => checkAs("gpt-4.1", ...extra);

describe("check --run: a real agent's run captured by the proxy in front of the mock", () => {
  it("passes on its own baseline, and fails with exit 1 and the one-line summary after a tool is added", async () => {
    await captureAgentSession({});
    const before = records();
    expect(before).toHaveLength(2);
    const update = await check("--update");
    expect(update.code).toBe(0);
    expect(update.stdout).toContain("baseline updated");
    const written = JSON.parse(readFileSync(baseline, "utf8"));
    expect(written).toMatchObject({ v: 1, probe: "agent", model: "gpt-4.1" });
    expect(written.requests[0].systemLines).toBe(SYSTEM.length);

    await captureAgentSession({});
    const same = await check();
    // Only the run's conversations are said on stderr.
    expect(same.stderr).toBe("conversations: c1 main 2 requests\n");
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("pass");
    // The baseline file stands for the run it was taken from, as one side of a diff.
    const equal = await cliInScratch(scratch, "diff", baseline, join(runs, "agent"));
    expect(equal.code).toBe(0);
    expect(equal.stdout).toMatch(/#1 \(turn 1\)\s+identical/);
    expect(equal.stdout).toMatch(/#2\s+identical/);

    await captureAgentSession({ extraTool: "a_tool1", extraLine: "Rule 90: say when a file is missing." });
    const after = records();
    const failed = await check();
    expect(failed.code).toBe(1);
    const perRequest = (rs: RequestRecord[]) => rs.reduce((s, r) => s + r.tokens!.total, 0) / rs.length;
    const tokens = Math.round(perRequest(after) - perRequest(before));
    expect(tokens).toBeGreaterThan(0);
    const money = dollars(dollarsByHand(after) - dollarsByHand(before));
    expect(failed.stdout.split("\n")[0]).toBe(
      `agent: tools +1 (a_tool1), system +1 line, +${tokens} tokens per request, +${money} per run`,
    );
    const changed = await cliInScratch(scratch, "diff", baseline, join(runs, "agent"), "--cost", "--model", "gpt-4.1");
    expect(changed.stdout).toContain("A [read] B [read, a_tool1] (+a_tool1)");
    // Both totals at the places the finer one needs (each alone: $0.0041 and $0.00416), adding up as printed.
    const [a, b] = [dollarsByHand(before), dollarsByHand(after)];
    const places = Math.max(...[a, b].map((x) => dollars(x).split(".")[1]!.length));
    expect(changed.stdout).toContain(`total  A $${a.toFixed(places)}  B $${b.toFixed(places)}`);
    // The figures themselves only under --verbose.
    expect(failed.stdout).not.toContain("regression: agent request 1: tools is [read, a_tool1]");
    const verbose = await check("--verbose");
    expect(verbose.code).toBe(1);
    expect(verbose.stdout).toContain("regression: agent request 1: tools is [read, a_tool1], baseline [read]");
  });

  it("budgets in tokens and dollars: over either fails with exit 1, a bad value is exit 2", async () => {
    const spent = records().reduce((s, r) => s + r.tokens!.total, 0);
    const tokens = await check("--update");
    expect(tokens.code).toBe(0);
    const within = await check("--budget-tokens", String(spent));
    expect(within.code).toBe(0);
    // The JSON names the price table its dollars come from.
    expect(JSON.parse((await check("--json")).stdout)[0].prices).toBe("@pydantic/genai-prices 0.1.8 (2026-09-23)");
    const over = await check("--budget-tokens", String(spent - 1), "--verbose");
    expect(over.code).toBe(1);
    expect(over.stdout).toContain(`regression: agent: budget.tokens is ${spent}, baseline ≤ ${spent - 1}`);
    // Without --verbose, the first line names the figure, the budget and the excess.
    expect((await check("--budget-tokens", String(spent - 1))).stdout.split("\n")[0]).toBe(
      `agent: over budget: ${spent.toLocaleString("en-US")} prompt tokens, budget ${(spent - 1).toLocaleString("en-US")}, 1 over`,
    );
    const broke = await check("--budget-dollars", "0.000001");
    expect(broke.code).toBe(1);
    const spentDollars = dollarsByHand(records());
    expect(broke.stdout.split("\n")[0]).toBe(
      `agent: over budget: ${dollars(spentDollars)} predicted, budget $0.000001, ${dollars(spentDollars - 0.000001)} over`,
    );
    expect((await check("--budget-dollars", "lots")).code).toBe(2);
    const noPrice = await checkAs("nobody-1", "--budget-dollars", "1");
    expect(noPrice.code).toBe(2);
    expect(noPrice.stderr).toContain("a dollar budget needs a priced model");
  });

  it("cache limits: a hit rate below --min-cache-hit fails with exit 1 and one line; a bad share is exit 2", async () => {
    expect((await check("--update")).code).toBe(0);
    const rs = records();
    // OpenAI's cache (no provider usage from the mock): the second request reads its shared prefix.
    const shared = (rs[1]!.prefix as unknown as { sharedTokens: number }).sharedTokens;
    const read = shared - (shared % 128);
    const hit = read / (rs[0]!.tokens!.total + rs[1]!.tokens!.total);
    expect(hit).toBeGreaterThan(0);
    const shown = `${Math.round(hit * 1000) / 10}%`;
    expect((await check("--min-cache-hit", String(Math.floor(hit * 100) / 100))).code).toBe(0);
    const low = await check("--min-cache-hit", "0.99");
    expect(low.code).toBe(1);
    expect(low.stdout.split("\n")[0]).toBe(
      `agent: cache hit rate ${shown} is below the minimum 99% (by our cache model)`,
    );
    // diff puts each side's figures under the comparison, A then B.
    const sides = (await cliInScratch(scratch, "diff", baseline, join(runs, "agent"))).stdout;
    expect(sides).toMatch(/\nA cache: hit rate [\d.]+%/);
    expect(sides).toContain(`\nB cache: hit rate ${shown} (${read} of `);
    // OpenAI writes nothing it charges for: no amplification to exceed.
    expect((await check("--max-write-amplification", "0")).code).toBe(0);
    for (const bad of ["1.5", "most"]) {
      const wrong = await check("--min-cache-hit", bad);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("check: --min-cache-hit expected a share from 0 to 1 (0.8 for 80%)");
    }
  });

  it("--max-source: a source over its ceiling in any one request fails with exit 1 and one line naming the request", async () => {
    expect((await check("--update")).code).toBe(0);
    const rs = records();
    // The history grows turn by turn: its peak is the last request's.
    const peak = Math.max(...rs.map((r) => r.sources!.history!));
    const at = rs.find((r) => r.sources!.history === peak)!.seq;
    const tools = rs[0]!.sources!["tools:builtin"]!;
    const within = await check("--max-source", `history=${peak}`, "--max-source", `tools:builtin=${tools}`);
    expect(within.code).toBe(0);
    const over = await check("--max-source", `history=${peak - 5}`, "--max-source", `tools:builtin=${tools}`);
    expect(over.code).toBe(1);
    expect(over.stdout.split("\n")[0]).toBe(
      `agent: history takes ${peak.toLocaleString("en-US")} tokens in request ${at}, limit ${(peak - 5).toLocaleString("en-US")} a request, 5 over`,
    );
    for (const bad of ["history", "history=lots", "=5", "history=-1"]) {
      const wrong = await check("--max-source", bad);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("check: --max-source expected SOURCE=TOKENS");
    }
    expect((await check("--max-source", "history=1", "--update")).code).toBe(2);
    expect((await cliInScratch(scratch, "check", "--max-source", "history=1")).code).toBe(2);
  });

  it("--run without --baseline, or with probe names, is a usage error (exit 2)", async () => {
    expect((await cliInScratch(scratch, "check", "--run", join(runs, "agent"))).code).toBe(2);
    expect(
      (await cliInScratch(scratch, "check", "p1", "--run", join(runs, "agent"), "--baseline", baseline)).code,
    ).toBe(2);
  });

  it("pricing flags without --run are a usage error; a missing baseline names the command that writes it", async () => {
    for (const flags of [
      ["--model", "gpt-4.1"],
      ["--pricing", "prices.yaml"],
    ]) {
      const wrong = await cliInScratch(scratch, "check", ...flags, "p1");
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(
        `check: ${flags[0]} applies to a captured run only; give it with --run RUN --baseline FILE.`,
      );
      expect(wrong.stdout).toBe("");
    }
    const absent = join(scratch, "absent.json");
    const none = await cliInScratch(scratch, "check", "--run", join(runs, "agent"), "--baseline", absent);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no baseline for this run; run '");
    expect(none.stderr).toContain(`check --run ${join(runs, "agent")} --baseline ${absent} --update' to write it`);
  });
});
