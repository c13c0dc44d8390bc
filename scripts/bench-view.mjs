#!/usr/bin/env node
// The `view` page of a long synthetic run in headless Chromium: how long the page takes to show its
// timeline, whether scrolling it freezes, and how large it is against the run it was made from.
// Printed side by side with a baseline measured in the same browser session: a page of the same
// size whose script does nothing but read its data element's text (the cost any page that embeds
// this much data pays before doing anything). Reads the built code (./run.sh once first).
//
//   node scripts/bench-view.mjs [requests=100000] [--dir $TMPDIR/pp-view-bench] [--chromium PATH] [--reuse]
//
// --reuse measures the page already written for that run instead of writing it again.
//
// The run is made by scripts/gen-synthetic-run.mjs (with --payloads) when missing: 100,000 requests
// are about 2.5 GB of run files and take a few minutes to generate and to turn into a page. Targets:
// first render under 2 s; scrolling without freezing (no frame and no long task over 200 ms while
// the timeline is scrolled from top to bottom in 100 steps).
import "./help.mjs";
import { spawnSync } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const VALUED = ["--dir", "--chromium"];
const requests = Number(args.find((a, i) => !a.startsWith("--") && !VALUED.includes(args[i - 1])) ?? 100_000);
const benchDir = flag("--dir", join(tmpdir(), "pp-view-bench"));
const chromiumPath =
  flag("--chromium", process.env.CHROMIUM_PATH) ??
  spawnSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).stdout.trim();
if (!chromiumPath) {
  console.error("bench-view: no chromium on PATH (apt-get install chromium, or --chromium PATH)");
  process.exit(2);
}

const runDir = join(benchDir, `run-${requests}`);
const page = join(runDir, "view.html");
const size = (f) => (existsSync(f) ? statSync(f).size : 0);

function timed(label, argv) {
  process.stderr.write(`${label} …\n`);
  const started = performance.now();
  const child = spawnSync(process.execPath, argv, { stdio: ["ignore", "ignore", "inherit"] });
  if (child.status !== 0) process.exit(child.status ?? 1);
  return (performance.now() - started) / 1000;
}

if (!existsSync(join(runDir, "payloads.jsonl")))
  timed(`generating ${runDir}`, [join(root, "scripts/gen-synthetic-run.mjs"), runDir, String(requests), "--payloads"]);
const reuse = args.includes("--reuse") && existsSync(page);
const buildSeconds = reuse
  ? null
  : timed("writing the view page", [join(root, "dist/cli/main.js"), "view", runDir, "--out", page]);
const rawBytes = size(join(runDir, "requests.jsonl")) + size(join(runDir, "payloads.jsonl"));
const pageBytes = size(page);

// The baseline page: as many bytes in one data element, read once, nothing drawn from them.
const baseline = join(runDir, "baseline.html");
writeFileSync(
  baseline,
  `<!doctype html><meta charset="utf-8"><body><script type="application/json" id="d">${"x".repeat(pageBytes)}</script>` +
    `<script>document.getElementById("d").textContent.length; performance.mark("view-ready");</script>`,
);

const browser = await chromium.launch({ executablePath: chromiumPath });
const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });

async function firstRender(file) {
  await tab.goto(`file://${file}`, { timeout: 120_000 });
  await tab.waitForFunction(() => performance.getEntriesByName("view-ready").length > 0, null, { timeout: 120_000 });
  return tab.evaluate(() => performance.getEntriesByName("view-ready")[0].startTime);
}

const baselineMs = await firstRender(baseline);
const renderMs = await firstRender(page);

// Scroll the timeline top to bottom in 100 steps, one per frame; watch frame gaps and long tasks.
const scroll = await tab.evaluate(async () => {
  const longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longTasks.push(e.duration);
  }).observe({ type: "longtask", buffered: false });
  const timeline = document.getElementById("timeline");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  let last = await frame();
  let longestFrame = 0;
  for (let i = 1; i <= 100; i++) {
    timeline.scrollTop = (timeline.scrollHeight * i) / 100;
    const now = await frame();
    longestFrame = Math.max(longestFrame, now - last);
    last = now;
  }
  await frame();
  return {
    longestFrame,
    longestTask: longTasks.length ? Math.max(...longTasks) : 0,
    rowsInDom: document.querySelectorAll(".row").length,
  };
});

// A click on a request of the far end opens its detail (items parsed on demand).
const clickStarted = Date.now();
await tab.locator(".row").last().click();
await tab.waitForSelector("#detail h2");
const detailMs = Date.now() - clickStarted;
await browser.close();

const mb = (n) => `${(n / (1 << 20)).toFixed(1)} MB`;
const ms = (n) => `${Math.round(n)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(3)}×`;
console.log(`view of a ${requests}-request synthetic run (${runDir})`);
console.log(
  `  page size     ${mb(pageBytes).padStart(10)}  vs run files ${mb(rawBytes).padStart(10)}  ratio ${ratio(pageBytes, rawBytes)}`,
);
console.log(
  `  first render  ${ms(renderMs).padStart(10)}  vs baseline  ${ms(baselineMs).padStart(10)}  ratio ${ratio(renderMs, baselineMs)}  (target < 2000 ms: ${renderMs < 2000 ? "met" : "MISSED"})`,
);
console.log(
  `  scroll        longest frame ${ms(scroll.longestFrame)}, longest task ${ms(scroll.longestTask)}, ${scroll.rowsInDom} rows in the DOM (target < 200 ms: ${Math.max(scroll.longestFrame, scroll.longestTask) < 200 ? "met" : "MISSED"})`,
);
console.log(`  detail        ${ms(detailMs)} from a click on the last request to its detail`);
if (buildSeconds !== null) console.log(`  page written  in ${buildSeconds.toFixed(1)} s by 'payload-probe view'`);
