/**
 * The view pages in a real browser: Debian's Chromium driven headless through playwright-core
 * (test/fixtures/chromium.ts). Where no Chromium can be had the tests skip with one line.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { captureRun, codexDefaultModelBodies } from "../../fixtures/api-sessions.js";
import {
  chromiumPath,
  closePages,
  pageCollecting,
  sharedChromium,
  warnWithoutChromium,
} from "../../fixtures/chromium.js";
import { growingSessionRun, runPartedProbe, runProbesInto, viewCli } from "./view-runs.js";

warnWithoutChromium("view browser tests");

/** Screenshots for a reviewer, in the checkout's git-ignored runs/. */
const SHOTS = join(PROJECT_ROOT, "runs", "view-screenshots");

const cli = viewCli;

let base: string;
let runs: string;
let browser: Browser;
let page: Page;
/** Anything the page tried to load that is not its own file, and every script error. */
const problems: string[] = [];

async function open(file: string): Promise<void> {
  await page.goto(`file://${file}`);
  await page.waitForSelector("body[data-ready]");
}

describe.skipIf(!chromiumPath)("view pages in headless Chromium", () => {
  beforeAll(async () => {
    ({ base, runs } = await runProbesInto(["p1", "seq-search", "seq-namespace", "p7", "p4"]));
    await runPartedProbe(base, "parted");
    mkdirSync(SHOTS, { recursive: true });
    browser = await sharedChromium();
    page = await pageCollecting(browser, problems, { width: 1400, height: 900 });
    page.on("request", (r) => {
      if (!r.url().startsWith("file:")) problems.push(`request: ${r.url()}`);
    });
  });
  afterAll(async () => {
    await closePages(browser);
    rmSync(base, { recursive: true, force: true });
  });

  it("p1: one bar per request, a click opens the request with its markers highlighted", async () => {
    await cli("view", "p1", "--runs", runs);
    await open(join(runs, "p1", "view.html"));
    expect(await page.locator(".row.req .bar").count()).toBe(4);
    await page.locator(".row.req", { hasText: "#2" }).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^Request #2 · loop/);
    // p1's marker `schema` matches "Shape:" in messages: the search result shows it marked.
    expect(await page.locator("#detail mark.marker", { hasText: "Shape:" }).count()).toBeGreaterThan(0);
    await page.locator("#raw").click();
    await expect.poll(() => page.locator(".raw-body .facts").textContent()).toMatch(/matches the captured body/);
    await page.screenshot({ path: join(SHOTS, "p1.png") });
    expect(problems).toEqual([]);
  });

  it("a run stored in parts: each request's raw body is rebuilt from the page's parts and matches its hash", async () => {
    await cli("view", "parted", "--runs", runs);
    await open(join(runs, "parted", "view.html"));
    expect(await page.locator(".row.req .bar").count()).toBe(3);
    for (const seq of [2, 3]) {
      await page.locator(".row.req", { hasText: `#${seq}` }).click();
      await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(new RegExp(`^Request #${seq} `));
      await page.locator("#raw").click();
      await expect.poll(() => page.locator(".raw-body .facts").textContent()).toMatch(/matches the captured body/);
    }
    // The last body holds the three prompts, each stored once as a part of the run.
    const last = (await page.locator(".raw-body pre").textContent())!;
    expect(["alpha16", "beta16", "gamma16"].every((word) => last.includes(word))).toBe(true);
    expect(problems).toEqual([]);
  });

  it("a session that re-sends its conversation: its page, data gzip'd, draws every request and rebuilds the last body", async () => {
    const dir = join(base, "growing");
    const bodies = await growingSessionRun(dir, 30);
    const file = join(base, "growing.html");
    await cli("view", dir, "--out", file);
    expect(readFileSync(file, "utf8")).toContain('<script type="application/gzip" id="view-items">');
    await open(file);
    expect(await page.locator(".row.req .bar").count()).toBe(30);
    await page.locator(".row.req", { hasText: "#30" }).click();
    await page.locator("#raw").click();
    await expect.poll(() => page.locator(".raw-body .facts").textContent()).toMatch(/matches the captured body/);
    expect(await page.locator(".raw-body pre").textContent()).toBe(bodies.at(-1));
    expect(problems).toEqual([]);
  });

  it("a Codex session on its default model: a body whose frame holds its tools' namespaces as a stored piece is rebuilt and matches its hash", async () => {
    const dir = join(base, "codex-default-model");
    const bodies = codexDefaultModelBodies(3);
    await captureRun(
      dir,
      "openai-responses",
      bodies.map((body) => ({ url: "/v1/responses", body })),
    );
    const file = join(base, "codex-default-model.html");
    await cli("view", dir, "--out", file);
    await open(file);
    await page.locator(".row.req", { hasText: "#5" }).click();
    await page.locator("#raw").click();
    await expect.poll(() => page.locator(".raw-body .facts").textContent()).toMatch(/matches the captured body/);
    expect(await page.locator(".raw-body pre").textContent()).toBe(bodies.at(-1));
    expect(problems).toEqual([]);
  });

  it("a request clicked before the page has unzipped its texts opens once they are read", async () => {
    await cli("view", "p1", "--runs", runs);
    const tab = await pageCollecting(browser, problems, { width: 1400, height: 900 });
    try {
      // The page's second unzipping is its items' (the index's comes first): held until released.
      await tab.addInitScript(() => {
        const Real = DecompressionStream;
        const w = window as unknown as { releaseItems: () => void };
        const held = new Promise<void>((resolve) => {
          w.releaseItems = resolve;
        });
        let made = 0;
        window.DecompressionStream = class {
          readonly writable: WritableStream<BufferSource>;
          readonly readable: ReadableStream<Uint8Array>;
          constructor(format: CompressionFormat) {
            const real = new Real(format);
            const wait = new TransformStream<Uint8Array, Uint8Array>({
              start: () => (++made === 2 ? held : undefined),
            });
            this.writable = real.writable;
            this.readable = real.readable.pipeThrough(wait);
          }
        } as unknown as typeof DecompressionStream;
      });
      await tab.goto(`file://${join(runs, "p1", "view.html")}`);
      await tab.waitForSelector("body[data-ready]");
      await tab.locator(".row.req", { hasText: "#2" }).click();
      await expect.poll(() => tab.locator("#detail").textContent()).toBe("reading the page's texts …");
      await tab.evaluate(() => (window as unknown as { releaseItems: () => void }).releaseItems());
      await expect.poll(() => tab.locator("#detail h2").textContent()).toMatch(/^Request #2 · loop/);
      const clicked = await tab.locator(".row.req", { hasText: "#2" }).textContent();
      expect(await tab.locator(".row.req.sel").textContent()).toBe(clicked);
    } finally {
      await tab.close();
    }
    expect(problems).toEqual([]);
  });

  it("a browser without DecompressionStream is told why the page cannot draw", async () => {
    await cli("view", "p1", "--runs", runs);
    const seen: string[] = [];
    const tab = await pageCollecting(browser, seen);
    try {
      await tab.addInitScript(() => {
        Reflect.deleteProperty(window, "DecompressionStream");
      });
      await tab.goto(`file://${join(runs, "p1", "view.html")}`);
      await expect
        .poll(() => tab.locator("#detail").textContent())
        .toMatch(/^This browser cannot read the page's data, which are gzip'd \(DecompressionStream: Chrome 80/);
      expect(await tab.locator(".row.req").count()).toBe(0);
      expect(seen).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it("p1 at 800 and 1280 px: a narrow request list, the detail readable without sideways scrolling, the model's reply under the request's facts", async () => {
    await cli("view", "p1", "--runs", runs);
    for (const width of [800, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await open(join(runs, "p1", "view.html"));
      await page.locator(".row.req", { hasText: "#1" }).click();
      await expect.poll(() => page.locator("#detail pre.reply").textContent()).toMatch(/stop reason: tool_calls/);
      const reply = (await page.locator("#detail pre.reply").textContent())!;
      expect(reply).toContain("── tool call mcp");
      // The usage as a small table beside our count, not a line of JSON.
      const usage = await page
        .locator("#detail .usage tr")
        .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent)));
      expect(usage[0]).toEqual(["usage", "reported", "ours"]);
      expect(usage[1]).toEqual(["prompt tokens", "—", expect.stringMatching(/^\d+$/)]);
      const box = await page.evaluate(() => {
        const list = document.querySelector("#timeline")!.getBoundingClientRect();
        const detail = document.querySelector("#detail")!;
        return { list: list.width, scroll: detail.scrollWidth, client: detail.clientWidth };
      });
      // The list leaves the detail most of the page; nothing in the detail is wider than its pane.
      expect(box.list).toBeLessThanOrEqual(Math.min(420, width * 0.31));
      expect(box.scroll).toBeLessThanOrEqual(box.client);
      await page.screenshot({ path: join(SHOTS, `p1-detail-${width}.png`) });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    expect(problems).toEqual([]);
  });

  it("seq-search: six bars, +a_tool1 called out at request 2, the added tool's prompt line picked out", async () => {
    await cli("view", "seq-search", "--runs", runs);
    await open(join(runs, "seq-search", "view.html"));
    expect(await page.locator(".row.req .bar").count()).toBe(6);
    const second = page.locator(".row.req", { hasText: "#2" });
    expect(await second.locator(".badge.tc").allTextContents()).toEqual(["+a_tool1"]);
    expect(await page.locator(".badge.tc").allTextContents()).toEqual(["+a_tool1", "+b_tool2"]);
    await second.click();
    const detail = page.locator("#detail");
    await expect.poll(() => detail.locator("h2").textContent()).toMatch(/^Request #2/);
    expect(await detail.locator(".ln.toolline").allTextContents()).toEqual([
      expect.stringMatching(/^- mcp: /),
      "- a_tool1: Call server a tool1",
    ]);
    expect(await detail.locator(".brkline").textContent()).toMatch(
      /^cache prefix ends here \(\d+ B read from #1\) · breaks in tools: tools\[1\] added: a_tool1/,
    );
    // The facts say where the prefix is read from, as the analysis does; the first request starts its conversation.
    expect(await detail.locator(".facts", { hasText: "cache prefix" }).textContent()).toMatch(
      /^cache prefix: \d+ B \/ \d+ tok read from #1 · breaks in tools/,
    );
    await page.locator(".row.req", { hasText: "#1" }).first().click();
    await expect.poll(() => detail.locator("h2").textContent()).toMatch(/^Request #1/);
    expect(await detail.locator(".facts", { hasText: "cache prefix" }).textContent()).toBe(
      "cache prefix: new conversation",
    );
    // the bytes toggle redraws the bars
    await page.locator("#unit").click();
    expect(await page.locator("#unit").textContent()).toBe("show tokens");
    await page.screenshot({ path: join(SHOTS, "seq-search.png") });
    expect(problems).toEqual([]);
  });

  it("seq-search --cost: the detail shows the cost lines show prints; the unit switch redraws in bytes, the detail kept", async () => {
    const file = join(runs, "seq-search", "view-cost.html");
    await cli("view", "seq-search", "--cost", "--model", "gpt-4.1", "--out", file, "--runs", runs);
    await open(file);
    const second = page.locator(".row.req", { hasText: "#2" });
    await second.click();
    const detail = page.locator("#detail");
    await expect.poll(() => detail.locator("h2").textContent()).toMatch(/^Request #2/);
    const shown = (await cli("show", "seq-search", "2", "--cost", "--model", "gpt-4.1", "--runs", runs)).split("\n");
    // The cost, the break's re-billing and the prices' source, as show --cost prints them first.
    const facts = await detail.locator(".facts.cost").allTextContents();
    expect(facts.slice(0, 3)).toEqual(shown.slice(0, 3));
    // Then the request's cache figures (issue 27).
    expect(facts.slice(3)).toEqual([expect.stringMatching(/^cache: read \d+ of \d+ prompt tokens \(/)]);
    const sizes = () => page.locator(".row.req .num").allTextContents();
    expect(await sizes()).toEqual(Array(6).fill(expect.stringMatching(/^\d+ tok$/)));
    // Bars are scaled to the largest request in the unit shown: its bar fills the track, whose width follows the list's.
    const track = await page
      .locator(".row.req .track")
      .first()
      .evaluate((t) => t.getBoundingClientRect().width);
    expect(track).toBeGreaterThan(150);
    const widest = () =>
      page
        .locator(".row.req .bar")
        .evaluateAll((bars) =>
          Math.max(...bars.map((b) => [...b.children].reduce((a, s) => a + s.getBoundingClientRect().width, 0))),
        );
    expect(await widest()).toBeCloseTo(track, 0);
    await page.locator("#unit").click();
    expect(await sizes()).toEqual(Array(6).fill(expect.stringMatching(/^\d+(\.\d)? (B|KB)$/)));
    expect(await widest()).toBeCloseTo(track, 0);
    expect(await detail.locator("h2").textContent()).toMatch(/^Request #2/);
    expect(await page.locator(".row.req.sel .seq").allTextContents()).toEqual(["#2"]);
    expect(problems).toEqual([]);
  });

  it("diff seq-namespace vs seq-search: aligned pairs, the added prompt lines highlighted on B's side", async () => {
    await cli("view", "seq-namespace", "--diff", "seq-search", "--runs", runs);
    await open(join(runs, "seq-namespace", "view-diff-seq-search.html"));
    // Six pairs under the one heading of the probe's conversation.
    expect(await page.locator(".row.group").allTextContents()).toEqual([expect.stringMatching(/^▾c1main6 pairs/)]);
    expect(await page.locator(".row:not(.group)").count()).toBe(6);
    expect(await page.locator(".row .side .bar").count()).toBe(12);
    await page.locator(".row:not(.group)").nth(1).click();
    const detail = page.locator("#detail");
    await expect.poll(() => detail.locator("h2").textContent()).toMatch(/^#2 vs #2 · first differs in tools/);
    expect(await detail.textContent()).toContain("tools only in B: a_tool1");
    expect(await detail.locator(".d-add", { hasText: "- a_tool1: Call server a tool1" }).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, "diff-seq-namespace-seq-search.png") });
    expect(problems).toEqual([]);
  });

  it("p7: the sampling request is set apart from the loop requests", async () => {
    await cli("view", "p7", "--runs", runs);
    await open(join(runs, "p7", "view.html"));
    expect(await page.locator(".row.req").count()).toBe(3);
    expect(await page.locator(".row.req.apart .seq").allTextContents()).toEqual(["#2"]);
    expect(await page.locator(".row.req.apart .kind").allTextContents()).toEqual(["sampling"]);
    await page.locator(".row.req.apart").click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^Request #2 · sampling/);
    expect(problems).toEqual([]);
  });

  it("p4: the skills block of the system prompt and the expanded skill body in the user message picked out", async () => {
    await cli("view", "p4", "--runs", runs);
    await open(join(runs, "p4", "view.html"));
    await page.locator(".row.req").first().click();
    const detail = page.locator("#detail");
    await expect.poll(() => detail.locator("h2").textContent()).toMatch(/^Request #1/);
    const skills = await detail.locator(".ln.skills").allTextContents();
    expect(skills[0]).toBe("<available_skills>");
    expect(skills.at(-1)).toBe("</available_skills>");
    expect(skills.some((l) => l.includes("<name>probe-marker</name>"))).toBe(true);
    const body = await detail.locator(".ln.skillbody").allTextContents();
    expect(body[0]).toMatch(/<skill name="probe-marker"/);
    expect(body.some((l) => l.trim() === "MARKER-BODY-7731")).toBe(true);
    expect(await detail.locator("mark.marker").allTextContents()).toContain("MARKER-BODY-7731");
    await page.screenshot({ path: join(SHOTS, "p4.png") });
    expect(problems).toEqual([]);
  });

  it("a long run keeps only the rows on screen in the DOM and draws the end when scrolled there", async () => {
    const dir = join(base, "long");
    spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts/gen-synthetic-run.mjs"), dir, "600", "--payloads"], {
      timeout: 120_000,
    });
    await cli("view", dir, "--runs", runs);
    await open(join(dir, "view.html"));
    const rows = await page.locator(".row.req").count();
    expect(rows).toBeGreaterThan(20);
    expect(rows).toBeLessThan(100);
    await page.locator("#timeline").evaluate((e) => {
      e.scrollTop = e.scrollHeight;
    });
    await expect.poll(() => page.locator(".row.req", { hasText: "#600" }).count()).toBe(1);
    expect(problems).toEqual([]);
  });
});
