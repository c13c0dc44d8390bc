/**
 * The view page's layout in headless Chromium (test/fixtures/chromium.ts), at 800 and 1280 px: the
 * request list by conversation (the main agent, its subagent and side call beneath it), narrow, the
 * detail without sideways scrolling, the usage as a table; and the diff page: its pairs by conversation,
 * and its "next change" control clicked through. The conversations are those of real clients' bodies (test/fixtures/conversations)
 * replayed through a Capture that writes a real run folder.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Capture } from "../../../src/capture/capture.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { codecFor } from "../../../src/providers/codecs.js";
import type { WireApi } from "../../../src/providers/types.js";
import {
  chromiumPath,
  closePages,
  pageCollecting,
  sharedChromium,
  warnWithoutChromium,
} from "../../fixtures/chromium.js";
import { runProbesInto, toolSearchRun, viewCli } from "./view-runs.js";

warnWithoutChromium("view layout browser tests");

const SHOTS = join(PROJECT_ROOT, "runs", "view-screenshots");
const FIXTURES = join(PROJECT_ROOT, "test/fixtures/conversations");

const cli = viewCli;

const CLAUDE_CODE = ["claude-code-2.1.328-subagent", true] as const;
const SDK_SCRIPT = ["anthropic-sdk-1.16.0-side-call", false] as const;

/**
 * Claude Code's session (main, a subagent, main again; its session header given) then an SDK
 * script's (its conversation, a title call beside it, the conversation again), as one run; or the
 * two sessions in the order given.
 */
async function conversationRun(dir: string, sessions = [CLAUDE_CODE, SDK_SCRIPT]): Promise<void> {
  const capture = new Capture({ run: "conv", probe: "conv", dir, db: null, markers: {}, codecFor });
  const start = Date.parse("2026-12-04T10:00:00.000Z");
  let i = 0;
  for (const [name, header] of sessions) {
    for (const line of readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8")
      .trim()
      .split("\n")) {
      const row = JSON.parse(line) as { api: WireApi; body: string; response: string };
      const session = header ? codecFor(row.api).dissect(row.body).conversationKeys?.session : undefined;
      const request = { kind: "loop", api: row.api, url: "http://127.0.0.1:8787/v1", body: row.body } as const;
      const sessionHeader = session ? { sessionHeader: { name: "x-claude-code-session-id", value: session } } : {};
      const outcome = { body: row.response, status: 200, firstByteMs: 0, ending: "complete" } as const;
      await capture.recordExchange(
        { ...request, ...sessionHeader },
        outcome,
        new Date(start + i++ * 1000).toISOString(),
        1,
      );
    }
  }
  capture.close();
}

let base: string;
let runs: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];

async function open(file: string, width: number): Promise<void> {
  await page.setViewportSize({ width, height: 800 });
  await page.goto(`file://${file}`);
  await page.waitForSelector("body[data-ready]");
}

/** The list's rows as drawn, top to bottom: their text, left edge of their first cell, and top. */
function listRows() {
  return page.locator("#timeline .row").evaluateAll((rows) =>
    rows
      .map((row) => {
        const first = row.children[0]!.getBoundingClientRect();
        return {
          group: row.classList.contains("group"),
          text: [...row.children].map((cell) => (cell.textContent ?? "").trim()).join(" "),
          left: Math.round(first.left),
          top: Math.round(row.getBoundingClientRect().top),
        };
      })
      .sort((a, b) => a.top - b.top),
  );
}

/** Sizes that say whether the page fits: the list's width, the detail's and anything wider inside it. */
function pageFit() {
  return page.evaluate(() => {
    const detail = document.querySelector("#detail")!;
    return {
      list: document.querySelector("#timeline")!.getBoundingClientRect().width,
      page: document.documentElement.scrollWidth,
      detailScroll: detail.scrollWidth,
      detailClient: detail.clientWidth,
    };
  });
}

/** How many of the diff's sizes reach past their side of the pair. */
function cutSizes() {
  return page
    .locator("#timeline .side .num")
    .evaluateAll(
      (cells) =>
        cells.filter((c) => c.getBoundingClientRect().right > c.parentElement!.getBoundingClientRect().right + 0.5)
          .length,
    );
}

describe.skipIf(!chromiumPath)("view page layout in headless Chromium", () => {
  beforeAll(async () => {
    ({ base, runs } = await runProbesInto(["seq-namespace", "seq-search"]));
    await conversationRun(join(base, "conv"));
    await conversationRun(join(base, "conv-sdk-first"), [SDK_SCRIPT, CLAUDE_CODE]);
    await toolSearchRun(join(base, "tool-search"));
    mkdirSync(SHOTS, { recursive: true });
    browser = await sharedChromium();
    page = await pageCollecting(browser, problems);
  });
  afterAll(async () => {
    await closePages(browser);
    rmSync(base, { recursive: true, force: true });
  });

  it("lays the requests out by conversation: each main one, then its subagent and side call beneath it, indented", async () => {
    await cli("view", join(base, "conv"), "--out", join(base, "conv.html"));
    for (const width of [800, 1280]) {
      await open(join(base, "conv.html"), width);
      const rows = await listRows();
      expect(rows.map((r) => (r.group ? r.text.split(" ").slice(1, 4).join(" ") : r.text.split(" ")[0]))).toEqual([
        "c1 main 3",
        "#1",
        "#2",
        "#4",
        "c2 subagent 1",
        "#3",
        "c3 main 2",
        "#5",
        "#7",
        "c4 side 1",
        "#6",
      ]);
      // A conversation beneath another is set in further than its parent's rows, its own rows further still.
      const at = (text: string) => rows.find((r) => r.text.startsWith(text) || r.text.includes(` ${text} `))!;
      expect(at("#1").left).toBeGreaterThan(at("c1").left);
      expect(at("c2").left).toBe(at("#1").left);
      expect(at("#3").left).toBeGreaterThan(at("#1").left);
      expect(at("#6").left).toBeGreaterThan(at("#5").left);
      const box = await pageFit();
      // The list takes under a third of the page; nothing is wider than the page or the detail pane.
      expect(box.list / width).toBeLessThanOrEqual(0.31);
      expect(box.page).toBeLessThanOrEqual(width);
      await page.locator(".row.req", { hasText: "#3" }).click();
      await expect.poll(() => page.locator("#detail h2").textContent()).toBe("Request #3 · loop");
      expect(await page.locator("#detail .facts").first().textContent()).toMatch(/conversation c2 · subagent of c1$/);
      // The usage as a table of figures, its raw fields folded away.
      expect(await page.locator("#detail .usage th").allTextContents()).toEqual(["usage", "reported", "ours"]);
      expect(await page.locator("#detail .usage details[open]").count()).toBe(0);
      const after = await pageFit();
      expect(after.detailScroll).toBeLessThanOrEqual(after.detailClient);
      // Readable: the detail keeps most of the page, and its usage table sits inside it.
      expect(after.detailClient).toBeGreaterThanOrEqual(width * 0.66);
      const table = await page.locator("#detail .usage table").boundingBox();
      const detail = await page.locator("#detail").boundingBox();
      expect(table!.x + table!.width).toBeLessThanOrEqual(detail!.x + detail!.width);
      await page.screenshot({ path: join(SHOTS, `conversations-${width}.png`) });
    }
    expect(problems).toEqual([]);
  });

  it("a deferred tool no message loads reads 0 tokens with a 'deferred' badge, and the tools' sum leaves it out", async () => {
    await cli("view", join(base, "tool-search"), "--out", join(base, "tool-search.html"));
    await open(join(base, "tool-search.html"), 1280);
    await page.locator(".row.req", { hasText: "#1" }).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^Request #1/);
    const tools = page.locator("#detail details.tool");
    const placeholder = tools.filter({ hasText: "DeferredToolPlaceholder" });
    expect(await placeholder.locator(".badge.deferred").count()).toBe(1);
    expect(await placeholder.locator(".num").textContent()).toMatch(/^0 tok · \d+ B$/);
    expect(await tools.locator(".badge.deferred").count()).toBe(1);
    // The heading's sum is the other tools' tokens, as the capture counted the request's tools part.
    const each = (await tools.locator(".num").allTextContents()).map((t) => Number(t.split(" ")[0]));
    const heading = await page.locator("#detail h3", { hasText: /^tools · / }).textContent();
    expect(heading).toMatch(new RegExp(`^tools · ${each.length} · ${each.reduce((a, b) => a + b, 0)} tok · `));
    expect(problems).toEqual([]);
  });

  it("folds a conversation under its heading and unfolds it again", async () => {
    await open(join(base, "conv.html"), 1280);
    await page.locator(".row.group", { hasText: "c1" }).click();
    const folded = (await listRows()).map((r) => r.text.split(" ")[r.text.startsWith("#") ? 0 : 1]);
    expect(folded).toEqual(["c1", "c3", "#5", "#7", "c4", "#6"]);
    await page.locator(".row.group", { hasText: "c1" }).click();
    expect(await page.locator("#timeline .row").count()).toBe(11);
    expect(problems).toEqual([]);
  });

  it("diff: the pairs by run A's conversation, each under its heading; 'next change' follows the list", async () => {
    const file = join(base, "conv-diff.html");
    await cli("view", join(base, "conv"), "--diff", join(base, "conv-sdk-first"), "--out", file);
    for (const width of [800, 1280]) {
      await open(file, width);
      const rows = await listRows();
      const headings = rows.filter((r) => r.group).map((r) => r.text.split(" ").slice(1, 5).join(" "));
      expect(headings).toEqual(["c1 main 3 pairs", "c2 subagent 1 pair", "c3 main 2 pairs", "c4 side 1 pair"]);
      // Every pair row sits under a heading, set in further than it; a subagent's heading under its parent's rows.
      const at = (text: string) => rows.find((r) => r.group && r.text.includes(` ${text} `))!;
      const pairRows = rows.filter((r) => !r.group);
      expect(pairRows).toHaveLength(7);
      for (const row of pairRows) expect(row.left).toBeGreaterThan(at("c1").left);
      expect(at("c2").left).toBeGreaterThan(at("c1").left);
      // Set in as they are, each side's size still stays whole beside its bar, a side call's label shortened.
      expect(await cutSizes()).toBe(0);
      expect((await pageFit()).page).toBeLessThanOrEqual(width);
      await page.screenshot({ path: join(SHOTS, `diff-by-conversation-${width}.png`) });
    }
    // Side A's sequence numbers under each heading are that conversation's requests.
    const sidesA = await page
      .locator("#timeline .row:not(.group)")
      .evaluateAll((list) =>
        list
          .sort((x, y) => x.getBoundingClientRect().top - y.getBoundingClientRect().top)
          .map((row) => (row.querySelector(".side .seq")?.textContent ?? "—").trim()),
      );
    expect(sidesA).toEqual(["#1", "#2", "#4", "#3", "#5", "#7", "#6"]);
    // "next change" walks the differing pairs in the order drawn, not in the pairs' own order.
    const drawn = await page.locator("#timeline .row:not(.group)").evaluateAll((list) =>
      list
        .sort((x, y) => x.getBoundingClientRect().top - y.getBoundingClientRect().top)
        .filter((r) => r.classList.contains("differs"))
        .map((r) => Number((r as HTMLElement).dataset.index)),
    );
    expect(drawn.length).toBeGreaterThan(1);
    const opened: number[] = [];
    for (let press = 0; press < drawn.length; press++) {
      await page.keyboard.press("n");
      await expect.poll(() => page.locator("#change-at").textContent()).toBe(`change ${press + 1} of ${drawn.length}`);
      opened.push(Number(await page.locator("#timeline .row.sel").getAttribute("data-index")));
    }
    expect(opened).toEqual(drawn);
    expect(problems).toEqual([]);
  });

  it("diff: 'next change' opens each differing pair in turn, then the first again; the key n does the same", async () => {
    const file = join(base, "diff.html");
    await cli("view", "seq-namespace", "--diff", "seq-search", "--out", file, "--runs", runs);
    for (const width of [800, 1280]) {
      await open(file, width);
      const differing = await page
        .locator("#timeline .row")
        .evaluateAll((rows) =>
          rows.filter((r) => r.classList.contains("differs")).map((r) => Number((r as HTMLElement).dataset.index)),
        );
      expect(differing.length).toBeGreaterThan(1);
      const opened: number[] = [];
      const positions: string[] = [];
      for (let press = 0; press <= differing.length; press++) {
        if (press % 2 === 0) await page.locator("#next-change").click();
        else await page.keyboard.press("n");
        const selected = page.locator("#timeline .row.sel");
        await expect.poll(() => selected.count()).toBe(1);
        opened.push(Number(await selected.getAttribute("data-index")));
        positions.push((await page.locator("#change-at").textContent())!);
        // The detail opens at the first part that differs, unfolded.
        expect(await page.locator("#detail .first-change").count()).toBe(1);
        expect(await page.locator("#detail details.first-change[open]").count()).toBe(1);
      }
      expect(opened).toEqual([...differing, differing[0]]);
      expect(positions).toEqual([...differing.map((_, i) => `change ${i + 1} of ${differing.length}`), positions[0]]);
      const box = await pageFit();
      expect(box.page).toBeLessThanOrEqual(width);
      expect(box.detailScroll).toBeLessThanOrEqual(box.detailClient);
      expect(box.list / width).toBeLessThanOrEqual(0.39);
      // Each side's size stays whole beside its bar.
      expect(await cutSizes()).toBe(0);
      await page.screenshot({ path: join(SHOTS, `diff-next-change-${width}.png`) });
    }
    expect(problems).toEqual([]);
  });
});
