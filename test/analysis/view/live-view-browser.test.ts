/**
 * `mock --view` end to end: the CLI in a child process, its viewer open in headless Chromium
 * (test/fixtures/chromium.ts), requests sent to the mock, and the page drawing each one as it is
 * written, keeping the selected request; then SIGINT stops both and leaves no process behind.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import {
  type CliServer,
  chatBody,
  parseReply,
  postChat,
  startCli,
  writeTinyProbe,
} from "../../capture/http-harness.js";
import {
  chromiumPath,
  closePages,
  pageCollecting,
  sharedChromium,
  warnWithoutChromium,
} from "../../fixtures/chromium.js";
import { leftoverProcesses, SUITE_MARKER_ENV } from "../../fixtures/suite-processes.js";
import { removeTempDirs, tempDir } from "../../runtime/harness.js";

warnWithoutChromium("live view browser test");

let browser: Browser;

/**
 * The steps a test has reached, and what the page and the CLI said: the browser's waits have no
 * clock of their own, so a test stopped by its timeout would otherwise name no more than itself.
 */
function trail(context: TestContext, page: Page, cli: CliServer): (step: string) => void {
  const seen: string[] = [];
  page.on("console", (message) => seen.push(`console ${message.type()}: ${message.text()}`));
  page.on("crash", () => seen.push("the page crashed"));
  context.onTestFailed(() => {
    console.error(`steps and page messages:\n  ${seen.join("\n  ")}\nCLI stderr:\n${cli.stderr()}`);
  });
  return (step) => seen.push(`step: ${step}`);
}

describe.skipIf(!chromiumPath)("mock --view in headless Chromium", () => {
  beforeAll(async () => {
    browser = await sharedChromium();
  });
  afterAll(async () => {
    await closePages(browser);
    removeTempDirs();
  });

  it("draws each request as the mock writes it, keeps the selected one, and says when the mock stopped", async (context) => {
    const runs = tempDir("live-view-browser-");
    const { file } = await writeTinyProbe(runs);
    const cli = await startCli(["mock", file, "--runs", runs, "--view"]);
    const viewUrl = (await cli.line(/^VIEW /)).slice("VIEW ".length);
    expect(viewUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

    const problems: string[] = [];
    const page = await pageCollecting(browser, problems, { width: 1400, height: 900 });
    const step = trail(context, page, cli);
    page.on("request", (r) => {
      if (!r.url().startsWith(viewUrl)) problems.push(`request: ${r.url()}`);
    });
    step("open the page");
    await page.goto(viewUrl);
    await page.locator("#live", { hasText: "live: updates as requests arrive" }).waitFor();
    expect(await page.locator(".row.req").count()).toBe(0);

    step("first request");
    await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("read notes.txt")));
    step("its row");
    await page.locator(".row.req", { hasText: "#1" }).waitFor();
    await page.locator(".row.req", { hasText: "#1" }).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^Request #1 · loop/);
    // The tiny probe's marker `notes` matches the user's message.
    expect(await page.locator("#detail mark.marker", { hasText: "notes.txt" }).count()).toBeGreaterThan(0);
    // The saved page's code: the request under its conversation's heading, the model's reply in the detail.
    expect(await page.locator(".row.group .conv").allTextContents()).toEqual(["c1"]);
    expect(await page.locator("#detail pre.reply").textContent()).toMatch(/^══ reply \(HTTP 200, complete/);

    step("second request");
    await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("again")));
    step("its row");
    await page.locator(".row.req", { hasText: "#2" }).waitFor();
    // The redraw kept the open request and its row's selection.
    expect(await page.locator("#detail h2").textContent()).toMatch(/^Request #1 · loop/);
    expect(await page.locator(".row.req.sel .seq").allTextContents()).toEqual(["#1"]);
    expect(await page.locator(".row.req").count()).toBe(2);
    // For a reviewer, beside the view tests' screenshots in the checkout's git-ignored runs/.
    mkdirSync(join(PROJECT_ROOT, "runs", "view-screenshots"), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, "runs", "view-screenshots", "live-mock.png") });

    const exited = new Promise<number | null>((done) => cli.child.once("exit", (code) => done(code)));
    step("SIGINT, the exit");
    cli.child.kill("SIGINT");
    expect(await exited).toBe(0);
    step("the page told of the end");
    await page.locator("body[data-ended]").waitFor();
    expect(await page.locator("#live").textContent()).toMatch(/^recording ended: the run is in .+tiny-mock$/);
    // What the page shows stays: both requests.
    expect(await page.locator(".row.req").count()).toBe(2);
    expect(problems).toEqual([]);
    await page.close();

    await expect(fetch(viewUrl)).rejects.toThrow();
    const marker = process.env[SUITE_MARKER_ENV] ?? "";
    expect(leftoverProcesses(cli.child.pid!, marker).filter((p) => p.command.includes(runs))).toEqual([]);
  });

  it("keeps the unit the reader chose when it draws a new request", async (context) => {
    const runs = tempDir("live-view-browser-");
    const { file } = await writeTinyProbe(runs);
    const cli = await startCli(["mock", file, "--runs", runs, "--view"]);
    const viewUrl = (await cli.line(/^VIEW /)).slice("VIEW ".length);
    const problems: string[] = [];
    const page = await pageCollecting(browser, problems, { width: 1400, height: 900 });
    const step = trail(context, page, cli);
    step("open the page");
    await page.goto(viewUrl);
    step("first request");
    await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("read notes.txt")));
    step("its row");
    await page.locator(".row.req", { hasText: "#1" }).waitFor();
    step("the unit switch");
    await page.locator("#unit").click();
    expect(await page.locator("#unit").textContent()).toBe("show tokens");

    step("second request");
    await parseReply(await postChat(`${cli.url}/chat/completions`, chatBody("again")));
    step("its row");
    await page.locator(".row.req", { hasText: "#2" }).waitFor();
    expect(await page.locator("#unit").textContent()).toBe("show tokens");
    expect(await page.locator(".row.req .num").allTextContents()).toEqual([
      expect.stringMatching(/^\d+(\.\d)? (B|KB)$/),
      expect.stringMatching(/^\d+(\.\d)? (B|KB)$/),
    ]);
    expect(problems).toEqual([]);
    step("close the page");
    await page.close();
    const exited = new Promise<number | null>((done) => cli.child.once("exit", (code) => done(code)));
    step("SIGINT, the exit");
    cli.child.kill("SIGINT");
    expect(await exited).toBe(0);
  });
});
