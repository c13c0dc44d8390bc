#!/usr/bin/env node
/**
 * `run all` with `--otel` pointed at an endpoint that is down, against `run all` without it.
 *
 *   node scripts/bench-otel-down.mjs [--rounds N]     (default 3)
 *
 * Runs the built CLI (`dist/cli/main.js run all --no-db`, runs in a temp folder) N times each way,
 * alternating so a busy shared machine weighs on both sides alike; the "down" side exports to a
 * 127.0.0.1 port that was just closed. Prints each side's wall times, the medians side by side with
 * their ratio (the target is at most 1.10), and how many OpenTelemetry warnings each down run printed
 * (the target is exactly one).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const at = process.argv.indexOf("--rounds");
const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;

async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function runAll(extra) {
  const runs = mkdtempSync(join(tmpdir(), "pp-bench-otel-"));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [join(root, "dist/cli/main.js"), "run", "all", "--no-db", "--runs", runs, ...extra],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      rmSync(runs, { recursive: true, force: true });
      const warnings = stderr.split("\n").filter((line) => line.includes("OpenTelemetry")).length;
      resolve({ ms: performance.now() - started, code, warnings });
    }),
  );
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const base = [];
const down = [];
for (let round = 1; round <= rounds; round++) {
  const plain = await runAll([]);
  const port = await closedPort();
  const otel = await runAll(["--otel", `http://127.0.0.1:${port}`]);
  if (plain.code !== 0 || otel.code !== 0) throw new Error(`run all exited ${plain.code} / ${otel.code}`);
  base.push(plain.ms);
  down.push(otel);
  console.log(
    `round ${round}: without --otel ${(plain.ms / 1000).toFixed(2)} s, endpoint down ${(otel.ms / 1000).toFixed(2)} s (${otel.warnings} warning(s))`,
  );
}
const baseMedian = median(base);
const downMedian = median(down.map((d) => d.ms));
console.log(
  `median: without --otel ${(baseMedian / 1000).toFixed(2)} s | endpoint down ${(downMedian / 1000).toFixed(2)} s | ratio ${(downMedian / baseMedian).toFixed(3)}`,
);
console.log(`warnings per down run: ${down.map((d) => d.warnings).join(", ")}`);
