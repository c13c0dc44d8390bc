#!/usr/bin/env node
/**
 * The whole `./run.sh <probe>` process, as a user starts it: wall time and peak resident memory.
 *
 *   node scripts/bench-probe.mjs [--probe p1|all] [--rounds 5] [--baseline=<other checkout>] [--no-pi] [--parts]
 *
 * When the real pi is installed (`./run.sh agents install pi`), its run of the same probe
 * (`./run.sh <probe> --agent pi`: pi in print mode against our mock, as the fidelity table runs it)
 * is a side of its own in the same rounds, and the ratio pi / this is the "times faster than the
 * real agent" figure.
 *
 * Each round runs every side once, in an order that alternates between rounds, so load from other
 * work on the machine falls on all sides alike; the figures are medians over the rounds. Peak RSS is
 * the largest single process of the run (GNU time's %M, from the kernel's rusage), which for a probe
 * with a stub MCP server is the payload-probe process itself. Each side gets its own workspace root
 * and runs folder (PAYLOAD_PROBE_WORKSPACE, --runs) so another run of the probe elsewhere on the
 * machine never makes a round wait for its lock; a round that still waited is reported.
 * Both checkouts must be built (`./run.sh` once) before timing starts; the first round warms the disk
 * cache and is dropped.
 *
 * `--parts` adds, in the same rounds, what a probe's wall time is made of, each as a process of its
 * own: a bare Node start (`node -e 0`), the CLI's start (`--version`: Node, the bundle from its code
 * cache, nothing else), and the probe stub's whole life (start, one `initialize` answered, exit on
 * end of input), the process p1 starts when it calls the lazy server's tool; and the same life of the
 * fixture stub over stdio (configurable-stub.js), the server of the MCP probes and of most MCP tests.
 */
import "./help.mjs";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const option = (name, fallback) => {
  const inline = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  if (inline) return inline.slice(name.length + 3);
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const probe = option("probe", "p1");
const rounds = Number(option("rounds", "5"));
const baseline = option("baseline");
const TIME = "/usr/bin/time";
if (!existsSync(TIME)) {
  console.error("bench-probe: needs GNU time at /usr/bin/time for peak RSS");
  process.exit(2);
}

const sides = [{ label: "this", dir: here, extra: [] }];
if (baseline) sides.unshift({ label: "baseline", dir: resolve(baseline), extra: [] });
if (!process.argv.includes("--no-pi")) {
  // tsc's output of this checkout (run.sh builds it); it only looks, it never installs.
  const { findPi } = await import(join(here, "dist/agents/pi-install.js"));
  if (findPi()) sides.push({ label: "pi", dir: here, extra: ["--agent", "pi"] });
  else console.error("bench-probe: the real pi is not installed (./run.sh agents install pi); timing without it");
}
const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
})}\n`;
if (process.argv.includes("--parts"))
  sides.push(
    { label: "node -e 0", dir: here, command: ["node", "-e", "0"] },
    { label: "--version", dir: here, command: ["node", "dist/cli/main.js", "--version"] },
    { label: "stub", dir: here, command: ["node", "dist/stub-mcp/probe-stub.js"], input: INITIALIZE },
    {
      label: "fixture stub",
      dir: here,
      command: ["node", "dist/stub-mcp/configurable-stub.js", "--fixture", "fixtures/stub-servers/a.json"],
      input: INITIALIZE,
    },
  );
for (const side of sides) {
  side.scratch = mkdtempSync(join(tmpdir(), `bench-${side.label}-`));
  side.walls = [];
  side.rss = [];
  side.waits = 0;
}

/** One `./run.sh <probe>`; GNU time writes "wall maxrssKB" as the last stderr line. */
function runOnce(side) {
  if (side.command) return timeCommand(side);
  const env = { ...process.env, PAYLOAD_PROBE_WORKSPACE: join(side.scratch, "ws") };
  const command = probe === "all" ? ["run", "all"] : [probe];
  const args = ["-f", "BENCH %e %M", "./run.sh", ...command, ...side.extra, "--runs", join(side.scratch, "runs")];
  const started = process.hrtime.bigint();
  const result = spawnSync(TIME, args, { cwd: side.dir, env, encoding: "utf8" });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const line = result.stderr.split("\n").find((l) => l.startsWith("BENCH "));
  if (result.status !== 0 || !line) {
    console.error(`bench-probe: ${side.label} (${side.dir}) exited ${result.status}:\n${result.stderr}`);
    process.exit(1);
  }
  if (result.stderr.includes("waiting for")) side.waits++;
  return { wall, rssMb: Number(line.split(" ")[2]) / 1024 };
}

/** A part of `--parts`: one process, its wall time and peak RSS as GNU time gives them. */
function timeCommand(side) {
  const started = process.hrtime.bigint();
  // As run.sh starts the CLI and a probe its stubs: without the CA file Node 20 would parse at start.
  const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
  const result = spawnSync(TIME, ["-f", "BENCH %e %M", ...side.command], {
    cwd: side.dir,
    env,
    input: side.input ?? "",
    encoding: "utf8",
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const line = result.stderr.split("\n").find((l) => l.startsWith("BENCH "));
  if (result.status !== 0 || !line) {
    console.error(`bench-probe: ${side.command.join(" ")} exited ${result.status}:\n${result.stderr}`);
    process.exit(1);
  }
  return { wall, rssMb: Number(line.split(" ")[2]) / 1024 };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

for (const side of sides) runOnce(side); // warm-up: builds if needed, fills the disk cache
for (let round = 0; round < rounds; round++) {
  const order = round % 2 ? [...sides].reverse() : sides;
  for (const side of order) {
    const { wall, rssMb } = runOnce(side);
    side.walls.push(wall);
    side.rss.push(rssMb);
  }
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}

const format = (n, digits) => n.toFixed(digits);
console.log(`./run.sh ${probe === "all" ? "run all" : probe}, median of ${rounds} interleaved rounds`);
for (const side of sides) {
  const waits = side.waits ? `  (${side.waits} rounds waited for a lock)` : "";
  console.log(
    `${side.label.padEnd(12)} wall ${format(median(side.walls), 3)} s  peak RSS ${format(median(side.rss), 1)} MB  ${side.dir}${waits}`,
  );
}
const mine = sides.find((side) => side.label === "this");
for (const other of sides.filter((side) => side !== mine && !side.command)) {
  const wall = format(median(other.walls) / median(mine.walls), 2);
  const rss = format(median(other.rss) / median(mine.rss), 2);
  console.log(`ratio     wall ${wall}×  RSS ${rss}× (${other.label} / this)`);
}
for (const part of sides.filter((side) => side.command))
  console.log(
    `share     ${part.label.padEnd(12)} ${format((median(part.walls) / median(mine.walls)) * 100, 0)}% of this`,
  );
for (const side of sides) rmSync(side.scratch, { recursive: true, force: true });
