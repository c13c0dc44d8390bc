#!/usr/bin/env node
/**
 * `run all` with `--otel` pointed at an endpoint that is down, against `run all` without it.
 *
 *   node scripts/bench-otel-down.mjs [--rounds N]     (default 3)
 *
 * Runs the built CLI (`dist/cli/main.js run all --no-db`, runs in a temp folder) N times each way,
 * alternating so a busy shared machine weighs on both sides alike; the "down" side exports to a
 * 127.0.0.1 port that was just closed. Prints each side's wall and CPU times (user + system, through
 * /usr/bin/time when there is one: on a shared machine the wall time swings with other people's load,
 * the CPU time much less), the medians side by side with their ratios (the target is at most 1.10),
 * and how many OpenTelemetry warnings each down run printed (the target is exactly one).
 */
import "./help.mjs";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const at = process.argv.indexOf("--rounds");
const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;
const TIME = "/usr/bin/time";
const CPU_LINE = /^__cpu ([\d.]+) ([\d.]+)$/m;

async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function runAll(extra) {
  const runs = mkdtempSync(join(tmpdir(), "pp-bench-otel-"));
  const command = [process.execPath, join(root, "dist/cli/main.js"), "run", "all", "--no-db", "--runs", runs, ...extra];
  const timed = existsSync(TIME) ? [TIME, "-f", "__cpu %U %S", ...command] : command;
  const started = performance.now();
  const child = spawn(timed[0], timed.slice(1), { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const ms = performance.now() - started;
      rmSync(runs, { recursive: true, force: true });
      const warnings = stderr.split("\n").filter((line) => line.includes("OpenTelemetry")).length;
      const cpu = CPU_LINE.exec(stderr);
      resolve({ ms, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : null, code, warnings });
    }),
  );
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const seconds = (ms) => (ms === null ? "?" : `${(ms / 1000).toFixed(2)} s`);
const base = [];
const down = [];
for (let round = 1; round <= rounds; round++) {
  const plain = await runAll([]);
  const port = await closedPort();
  const otel = await runAll(["--otel", `http://127.0.0.1:${port}`]);
  if (plain.code !== 0 || otel.code !== 0) throw new Error(`run all exited ${plain.code} / ${otel.code}`);
  base.push(plain);
  down.push(otel);
  console.log(
    `round ${round}: without --otel ${seconds(plain.ms)} (cpu ${seconds(plain.cpuMs)}), endpoint down ${seconds(otel.ms)} (cpu ${seconds(otel.cpuMs)}), ${otel.warnings} warning(s)`,
  );
}
for (const [what, key] of [
  ["wall", "ms"],
  ["cpu", "cpuMs"],
]) {
  if (base.some((b) => b[key] === null)) continue;
  const a = median(base.map((b) => b[key]));
  const b = median(down.map((d) => d[key]));
  console.log(
    `median ${what}: without --otel ${seconds(a)} | endpoint down ${seconds(b)} | ratio ${(b / a).toFixed(3)}`,
  );
}
console.log(`warnings per down run: ${down.map((d) => d.warnings).join(", ")}`);
