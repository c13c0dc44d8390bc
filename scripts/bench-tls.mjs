#!/usr/bin/env node
/**
 * What record's certificates cost in CPU (user + system, every thread: key generation runs on the
 * thread pool), for this checkout and, with --baseline, another one side by side.
 *
 *   node scripts/bench-tls.mjs [--rounds 7] [--baseline=<other checkout>]
 *
 * Each figure comes from a fresh Node process, as a session pays it, importing the checkout's tsc
 * output (dist/capture/; run `./run.sh` there once first):
 *   local first     `localCertificate()` once: the certificate library loaded, an authority and a
 *                   server certificate made (a ChatGPT sign-in's session)
 *   local next      the same again in that process: the making alone, the library already loaded
 *   forward kept    `userAuthority()` + `certificateFor(host)` with the authority already in the
 *                   cache (record --forward's every session): the library loaded, the authority read,
 *                   a host key and certificate made
 *   forward new     the same in that process with an empty cache: the authority made as well (a
 *                   user's first session), the library already loaded
 * The library is imported as tsc's ES modules import it; the CLI's bundle require()s it, which costs
 * a package of many small CommonJS files less (no export scan of each).
 *
 * Each round runs every side once, in an order that alternates between rounds, so load from other
 * work on the machine falls on all sides alike; the figures are medians over the rounds, and the
 * ratio line divides the baseline's by this checkout's.
 */
import "./help.mjs";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const FIGURES = ["local first", "local next", "forward kept", "forward new"];
const HOST = "api.anthropic.com";

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** The child: one side's figures in this fresh process, printed as one JSON line. */
async function measure(dir, keptCache) {
  const load = (file) => import(pathToFileURL(join(dir, "dist/capture", file)).href);
  const { localCertificate } = await load("local-tls.js");
  const { userAuthority } = await load("user-ca.js");
  const figures = {};
  const time = async (name, step) => {
    const start = cpuMs();
    await step();
    figures[name] = cpuMs() - start;
  };
  const forward = async (cache) => (await userAuthority({ XDG_CACHE_HOME: cache })).certificateFor(HOST);
  if (process.argv.includes("--forward")) {
    await time("forward kept", () => forward(keptCache));
    const empty = mkdtempSync(join(tmpdir(), "bench-tls-new-"));
    try {
      await time("forward new", () => forward(empty));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  } else {
    await time("local first", localCertificate);
    await time("local next", localCertificate);
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

function runChild(side, mode) {
  const args = [fileURLToPath(import.meta.url), "--child", side.dir, side.cache, ...mode];
  const result = spawnSync(process.execPath, args, { encoding: "utf8" });
  if (result.status !== 0) {
    console.error(`bench-tls: ${side.label} (${side.dir}) exited ${result.status}:\n${result.stderr}`);
    process.exit(1);
  }
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main() {
  const option = (name, fallback) => {
    const inline = process.argv.find((arg) => arg.startsWith(`--${name}=`));
    if (inline) return inline.slice(name.length + 3);
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 ? process.argv[at + 1] : fallback;
  };
  const rounds = Number(option("rounds", "7"));
  const baseline = option("baseline");
  const sides = [{ label: "this", dir: resolve(dirname(fileURLToPath(import.meta.url)), "..") }];
  if (baseline) sides.unshift({ label: "baseline", dir: resolve(baseline) });
  for (const side of sides) {
    // Each side's own cache: the authority its first run makes is the one its rounds keep.
    side.cache = mkdtempSync(join(tmpdir(), `bench-tls-${side.label}-`));
    side.figures = Object.fromEntries(FIGURES.map((name) => [name, []]));
  }
  try {
    for (const side of sides) runChild(side, ["--forward"]); // warm-up: makes the kept authority
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 ? [...sides].reverse() : sides;
      for (const side of order)
        for (const mode of [[], ["--forward"]])
          for (const [name, ms] of Object.entries(runChild(side, mode))) side.figures[name].push(ms);
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
  } finally {
    for (const side of sides) rmSync(side.cache, { recursive: true, force: true });
  }

  console.log(`CPU ms (user + system), median of ${rounds} interleaved rounds`);
  console.log(`${"".padEnd(9)}${FIGURES.map((name) => name.padStart(14)).join("")}`);
  const row = (label, values) => console.log(`${label.padEnd(9)}${values.map((v) => v.padStart(14)).join("")}`);
  for (const side of sides)
    row(
      side.label,
      FIGURES.map((name) => median(side.figures[name]).toFixed(1)),
    );
  if (baseline) {
    const [base, mine] = sides;
    const ratios = FIGURES.map((name) => `${(median(base.figures[name]) / median(mine.figures[name])).toFixed(2)}×`);
    row("ratio", ratios);
    console.log("(ratio: baseline / this)");
  }
}

const childAt = process.argv.indexOf("--child");
if (childAt > 0) await measure(process.argv[childAt + 1], process.argv[childAt + 2]);
else await main();
