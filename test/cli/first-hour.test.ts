/**
 * Issue 38's first hour, walked as a user walks it: the project's SDK script recorded three times in
 * front of the mock (each session with its own `metadata.user_id`, as agents send one), the runs
 * listed, the second one opened, what the model answered its request 3 read, and the one body field
 * that differs between two runs of the same command found — in the terminal, then on the view pages in
 * headless Chromium (test/fixtures/chromium.ts), by the "next change" control. Each record and the
 * 80-column table run the built CLI as a child; the commands whose output is read run in this process
 * (test/fixtures/cli-in-process.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { MockServer } from "../../src/capture/mock-server.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { chromiumPath, closePages, pageCollecting, sharedChromium } from "../fixtures/chromium.js";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { startProbeMock } from "../fixtures/probe-mock.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { startCliIn } from "./scratch-cli.js";

const FIXTURES = join(PROJECT_ROOT, "test", "fixtures", "record");
const CLIENT = join(FIXTURES, "sdk-client.mjs");
const KEYS = { OPENAI_API_KEY: "sk-first-hour-OPENAI-7d2a", ANTHROPIC_API_KEY: "sk-ant-first-hour-ANTHROPIC-3c9f" };

/** Screenshots for a reviewer, in the checkout's git-ignored runs/. */
const SHOTS = join(PROJECT_ROOT, "runs", "view-screenshots");

const closers: (() => Promise<unknown>)[] = [];
let browser: Browser | undefined;
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});
afterAll(async () => {
  await closePages(browser);
});

async function mockIn(runs: string, runName: string): Promise<MockServer> {
  const mock = await startProbeMock(join(FIXTURES, "sdk-probe.yaml"), { runsDir: runs, runName });
  closers.push(() => mock.close());
  return mock;
}

/** Records the SDK script once, as a user would: `record --upstream <mock> node sdk-client.mjs all`. */
async function recordSession(scratch: string, runs: string, session: string): Promise<void> {
  const mock = await mockIn(runs, `mock${session.slice(-2)}`);
  const origin = mock.baseUrl.replace(/\/v1$/, "");
  const args = ["record", "--upstream", origin, "--runs", runs, "node", CLIENT, "all"];
  const result = await startCliIn(scratch, args, scratch, { ...KEYS, SESSION_ID: session }).done;
  expect(result.code, result.stderr).toBe(0);
  await mock.close();
}

describe("the first hour", () => {
  it("three sessions recorded, listed, the second opened, its request 3's answer read, the one differing field found", async () => {
    const scratch = tempDir("first-hour-");
    const runs = join(scratch, "runs");
    for (const session of ["session-1", "session-2", "session-3"]) await recordSession(scratch, runs, session);
    const cli = async (...args: string[]) => {
      const result = await cliInScratch(scratch, ...args, "--runs", runs);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };

    // Listed: three runs of `node`, newest first, each with its three requests, made by the SDK script.
    const listed = JSON.parse(await cli("runs", "--json")) as { name: string; what: string; requests: number }[];
    const nodeRuns = listed.filter((r) => r.name.startsWith("node"));
    expect(nodeRuns.map((r) => [r.name, r.what, r.requests])).toEqual([
      ["node", "sdk/node", 3],
      ["node@2", "sdk/node", 3],
      ["node@3", "sdk/node", 3],
    ]);
    // At 80 columns the table keeps the "what" column.
    const table = await startCliIn(scratch, ["runs", "--runs", runs], scratch, { COLUMNS: "80" }).done;
    expect(table.code, table.stderr).toBe(0);
    expect(
      table.stdout.split("\n").every((line) => line.length <= 80),
      table.stdout,
    ).toBe(true);
    expect(table.stdout).toMatch(/^│ node@2 +│ [^│]+│ sdk\/node +│ +3 │/m);

    // The second session, opened: what the model answered its request 3 (the Messages call).
    const reply = await cli("show", "node@2", "3", "--part", "reply");
    expect(reply).toContain("stop reason: end_turn");
    expect(reply).toContain("── text · 17 chars\nmessages answered\n");

    // Two runs of the same command: the one field that differs, with both values.
    const diff = await cli("diff", "node@2", "node");
    expect(diff).toContain('  body     metadata.user_id: A "session-2" B "session-3"');
    expect(diff).toContain("Aligned by seq; 1 request(s) differ; first divergence: request #3, in body.");

    if (!chromiumPath) return;
    browser ??= await sharedChromium();
    const problems: string[] = [];
    const page = await pageCollecting(browser, problems, { width: 800, height: 800 });

    // The second session's page: request 3 under its conversation, its answer in the detail.
    const second = join(scratch, "second.html");
    await cli("view", "node@2", "--out", second);
    await page.goto(`file://${second}`);
    await page.waitForSelector("body[data-ready]");
    await page.locator(".row.req", { hasText: "#3" }).click();
    await expect.poll(() => page.locator("#detail pre.reply").textContent()).toContain("messages answered");

    // The two runs side by side: "next change" goes straight to the pair that differs and its field.
    const both = join(scratch, "diff.html");
    await cli("view", "node@2", "--diff", "node", "--out", both);
    await page.goto(`file://${both}`);
    await page.waitForSelector("body[data-ready]");
    await page.locator("#next-change").click();
    await expect
      .poll(() => page.locator("#detail h2").textContent())
      .toBe("#3 vs #3 · first differs in body: metadata.user_id");
    expect(await page.locator("#detail .fields tr").allTextContents()).toEqual([
      "fieldAB",
      'metadata.user_id"session-2""session-3"',
    ]);
    expect(await page.locator("#change-at").textContent()).toBe("change 1 of 1");
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, "first-hour-diff-800.png") });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("record's 'see it' names the first request it recorded, past a side request, and that command shows it", async () => {
    const scratch = tempDir("first-hour-hello-");
    const runs = join(scratch, "runs");
    const mock = await mockIn(runs, "mock");
    const origin = mock.baseUrl.replace(/\/v1$/, "");
    const args = ["record", "--upstream", origin, "--runs", runs, "node", CLIENT, "hello"];
    const result = await startCliIn(scratch, args, scratch, KEYS).done;
    expect(result.code, result.stderr).toBe(0);
    const hint = result.stderr.split("\n").find((line) => line.startsWith("see it: "));
    // Request 1 was the side request to /api/hello: the hint names request 2, the Messages request.
    const dir = join(runs, "node");
    expect(hint).toMatch(/^see it: .+ report (\S+) · show (\S+) 2 · view (\S+)$/);
    expect(hint).toContain(` · show ${dir} 2 · `);
    const shown = await cliInScratch(scratch, "show", "node", "2", "--runs", runs);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.split("\n")[0]).toMatch(/ · request 2 · loop · anthropic-messages mock-model$/);
    expect((await cliInScratch(scratch, "show", "node", "1", "--runs", runs)).code).toBe(2);
  });
});
