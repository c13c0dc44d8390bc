/**
 * The view page's context by source (issue 41) in headless Chromium (test/fixtures/chromium.ts), on
 * the shipped probe p2-direct, whose requests carry an MCP server's tools: a column per request
 * stacked by source group with a legend, fitting the page at 800 and 1280 px; and, in a request's
 * detail, its tokens by source, largest first, adding up to the request's total. A long synthetic run
 * given sources of twelve groups checks the chart's bounds: columns that stand for neighbours, "other".
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourceGroup } from "../../../src/analysis/context/source-groups.js";
import type { RequestRecord } from "../../../src/capture/types.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import {
  chromiumPath,
  closePages,
  pageCollecting,
  sharedChromium,
  warnWithoutChromium,
} from "../../fixtures/chromium.js";
import { sharedRecords } from "../../fixtures/shared-runs.js";
import { runProbesInto, viewCli } from "./view-runs.js";

warnWithoutChromium("view context browser tests");

const SHOTS = join(PROJECT_ROOT, "runs", "view-screenshots");

let base: string;
let file: string;
let records: RequestRecord[];
let browser: Browser;
let page: Page;
const problems: string[] = [];

/** A record's tokens by source group, the groups with tokens only. */
function groupsOf(record: RequestRecord): Map<string, number> {
  const groups = new Map<string, number>();
  for (const [source, n] of Object.entries(record.sources ?? {}))
    groups.set(sourceGroup(source), (groups.get(sourceGroup(source)) ?? 0) + n);
  return new Map([...groups].filter(([, n]) => n > 0));
}

/** The sources table of the open detail: its rows as [source, tokens, share]. */
function sourceRows(): Promise<string[][]> {
  return page
    .locator("#detail table.sources tr")
    .evaluateAll((rows) => rows.slice(1).map((row) => [...row.children].map((cell) => cell.textContent ?? "")));
}

describe.skipIf(!chromiumPath)("view page: context by source, in headless Chromium", () => {
  beforeAll(async () => {
    let runs: string;
    ({ base, runs } = await runProbesInto(["p2-direct"]));
    records = await sharedRecords("p2-direct");
    file = join(base, "p2-direct.html");
    await viewCli("view", "p2-direct", "--out", file, "--runs", runs);
    mkdirSync(SHOTS, { recursive: true });
    browser = await sharedChromium();
    page = await pageCollecting(browser, problems);
  });
  afterAll(async () => {
    await closePages(browser);
    rmSync(base, { recursive: true, force: true });
  });

  it("charts each request by source group with a legend, fitting the page at 800 and 1280 px", async () => {
    const counted = records.filter((r) => r.sources);
    expect(counted.length).toBeGreaterThan(1);
    const everyGroup = new Set(counted.flatMap((r) => [...groupsOf(r).keys()]));
    expect([...everyGroup].some((g) => g.startsWith("mcp:"))).toBe(true);
    for (const width of [800, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`file://${file}`);
      await page.waitForSelector("body[data-ready]");
      const legend = await page.locator("#context-chart .ctx-key").allTextContents();
      expect(new Set(legend)).toEqual(everyGroup);
      expect(legend).toHaveLength(everyGroup.size);
      const columns = await page
        .locator("#context-chart .ctx-col")
        .evaluateAll((cols) => cols.map((c) => ({ title: (c as HTMLElement).title, parts: c.children.length })));
      expect(columns.map((c) => c.title)).toEqual(counted.map((r) => `#${r.seq} · ${r.tokens!.total} tok`));
      expect(columns.map((c) => c.parts)).toEqual(counted.map((r) => groupsOf(r).size));
      const fit = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        chart: document.querySelector("#context-chart")!.getBoundingClientRect(),
        detail: document.querySelector("#detail")!.getBoundingClientRect().height,
      }));
      expect(fit.page).toBeLessThanOrEqual(width);
      expect(fit.chart.right).toBeLessThanOrEqual(width);
      // Small: the request list and its detail keep most of the page's height.
      expect(fit.chart.height).toBeLessThan(120);
      expect(fit.detail).toBeGreaterThan(800 * 0.6);
      await page.screenshot({ path: join(SHOTS, `context-${width}.png`) });
    }
    expect(problems).toEqual([]);
  });

  it("a column opens its request, whose sources, largest first, add up to its total", async () => {
    const last = records.filter((r) => r.sources).at(-1)!;
    await page.locator("#context-chart .ctx-col").last().click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(new RegExp(`^Request #${last.seq} `));
    // The column of the open request is marked; a row clicked in the list moves the mark to its column.
    expect(await page.locator("#context-chart .ctx-col.sel").getAttribute("title")).toMatch(
      new RegExp(`^#${last.seq} `),
    );
    const rows = await sourceRows();
    const [total, ...reversed] = rows.reverse();
    const sources = reversed.reverse();
    expect(total).toEqual(["total", String(last.tokens!.total), "100%"]);
    expect(sources.map(([s, n]) => [s, Number(n)])).toEqual(Object.entries(last.sources!).sort((a, b) => b[1] - a[1]));
    expect(sources.reduce((a, [, n]) => a + Number(n), 0)).toBe(last.tokens!.total);
    const shares = sources.map(([, , share]) => Number.parseFloat(share!));
    expect(Math.abs(shares.reduce((a, n) => a + n, 0) - 100)).toBeLessThan(0.05 * shares.length);
    const fit = await page.evaluate(() => {
      const detail = document.querySelector("#detail")!;
      return { scroll: detail.scrollWidth, client: detail.clientWidth };
    });
    expect(fit.scroll).toBeLessThanOrEqual(fit.client);
    await page.screenshot({ path: join(SHOTS, "context-detail.png") });
    await page.locator(".row.req", { hasText: "#1 " }).first().click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^Request #1 /);
    expect(await page.locator("#context-chart .ctx-col.sel").count()).toBe(1);
    expect(await page.locator("#context-chart .ctx-col.sel").getAttribute("title")).toMatch(/^#1 /);
    expect(problems).toEqual([]);
  });

  it("600 requests of twelve groups: 400 columns at most, each a mean of neighbours, the smallest groups as 'other'", async () => {
    const dir = join(base, "long");
    const made = spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts/gen-synthetic-run.mjs"), dir, "600"]);
    expect(made.status).toBe(0);
    // The synthetic records carry no sources: each gets twelve, one per group, adding up to its total.
    const names = ["system[0]", "instructions:CLAUDE.md", "skill:a", "tools:builtin", "mcp:one", "mcp:two"];
    names.push("mcp:three", "mcp-adapter", "history", "result:read", "reasoning", "overhead");
    const file = join(dir, "requests.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const withSources = lines.map((line) => {
      const record = JSON.parse(line) as RequestRecord;
      const each = Math.floor(record.tokens!.total / names.length);
      const sources = Object.fromEntries(names.map((n) => [n, each]));
      sources["system[0]"] = record.tokens!.total - each * (names.length - 1);
      return JSON.stringify({ ...record, sources });
    });
    writeFileSync(file, `${withSources.join("\n")}\n`);
    await viewCli("view", dir, "--out", join(dir, "view.html"));
    await page.setViewportSize({ width: 800, height: 800 });
    await page.goto(`file://${join(dir, "view.html")}`);
    await page.waitForSelector("body[data-ready]");
    const titles = await page
      .locator("#context-chart .ctx-col")
      .evaluateAll((c) => c.map((x) => (x as HTMLElement).title));
    expect(titles).toHaveLength(300);
    expect(titles[0]).toMatch(/^#1–#2 \(mean\) · \d+ tok$/);
    const legend = await page.locator("#context-chart .ctx-key").allTextContents();
    expect(legend).toHaveLength(10);
    expect(legend.at(-1)).toBe("other");
    expect(legend[0]).toBe("system");
    const fit = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(fit).toBeLessThanOrEqual(800);
    expect(problems).toEqual([]);
  });
});
