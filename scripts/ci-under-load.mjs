#!/usr/bin/env node
/**
 * CI on a busy machine: two fresh clones of this checkout's HEAD run `bash .ci/run` at the same time,
 * beside one CPU-burning process per core, for a number of rounds; each must pass, and nothing that
 * either started may be left running afterwards.
 *
 *   node scripts/ci-under-load.mjs [--rounds N] [--limit-minutes M]   (defaults 3 rounds, 90 minutes)
 *
 * This is how the suite once failed (issue 21: mixed load, other clones building and testing beside
 * it). The clones share the machine's user cache (~/.cache/payload-probe) and the probe workspace
 * (/tmp/payload-probe) as two real CI runs would. Each round clones anew (so each run installs and
 * builds from nothing, as CI does), prints each run's result and time, then looks through /proc for
 * any process whose command line or working folder is inside a clone: each one found is named, killed
 * and fails the round. A run over M minutes (CI's own limit) is killed and fails. The logs of a failed
 * run are kept and their folder printed; every folder the script made is removed otherwise, and only
 * folders inside its own temp root are ever removed.
 *
 * It loads the whole machine for as long as it runs (about twice the suite's time per round): do not
 * start it where others are working. Exit 0 when every round passed and nothing was left running.
 */
import "./help.mjs";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const checkout = join(dirname(fileURLToPath(import.meta.url)), "..");
const flag = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`ci-under-load: --${name} expected a whole number from 1, got "${process.argv[at + 1] ?? ""}"`);
    process.exit(2);
  }
  return value;
};
const rounds = flag("rounds", 3);
const limitMs = flag("limit-minutes", 90) * 60_000;

const root = mkdtempSync(join(tmpdir(), "pp-ci-under-load-"));
/** Removes a folder this script made, refusing anything outside its own temp root. */
function removeOwn(dir) {
  const inside = relative(root, resolve(dir));
  if (dir !== root && (inside === "" || inside.startsWith("..") || inside.startsWith(sep)))
    throw new Error(`refusing to remove ${dir}: not inside ${root}`);
  rmSync(dir, { recursive: true, force: true });
}

const head = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();

/** One busy loop per core, for the whole session. */
const burners = Array.from({ length: availableParallelism() }, () =>
  spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
);
/** The CI runs under way, each the leader of its own process group. */
const running = new Set();

function stopAll() {
  for (const burner of burners) burner.kill("SIGKILL");
  for (const child of running) killGroup(child.pid);
}
function killGroup(pid) {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is gone.
  }
}
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    stopAll();
    console.error(`ci-under-load: stopped by ${signal}; logs and clones left in ${root}`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  });

function cloneInto(dir) {
  execFileSync("git", ["clone", "--quiet", "--no-hardlinks", checkout, dir], { stdio: "inherit" });
  execFileSync("git", ["-C", dir, "checkout", "--quiet", "--detach", head], { stdio: "inherit" });
}

/**
 * Runs `bash .ci/run` in a clone as CI does (CI=true, no stdin), its output written straight to `log`
 * (so that a process it leaves behind holding the output cannot hold up the end); resolves on its exit.
 */
function runCi(clone, log) {
  const started = Date.now();
  const output = openSync(log, "w");
  const child = spawn("bash", [".ci/run"], {
    cwd: clone,
    env: { ...process.env, CI: "true" },
    stdio: ["ignore", output, output],
    detached: true,
  });
  closeSync(output);
  running.add(child);
  const limit = setTimeout(() => killGroup(child.pid), limitMs);
  return new Promise((done) =>
    child.on("exit", (code, signal) => {
      clearTimeout(limit);
      running.delete(child);
      done({ code, signal, seconds: Math.round((Date.now() - started) / 1000) });
    }),
  );
}

/** Every process whose command line names a folder inside `dir`, or whose working folder is inside it. */
function processesIn(dir) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (command !== "" && (command.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)))
        found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

async function round(n) {
  const clones = ["a", "b"].map((name) => join(root, `round-${n}-${name}`));
  for (const clone of clones) cloneInto(clone);
  const results = await Promise.all(clones.map((clone) => runCi(clone, `${clone}.log`)));
  let passed = true;
  for (const [i, clone] of clones.entries()) {
    const { code, signal, seconds } = results[i];
    const name = `round ${n} clone ${"ab"[i]}`;
    const how = signal ? `killed by ${signal}` : `exit ${code}`;
    console.log(`${name}: ${code === 0 ? "pass" : "FAIL"} (${how}) in ${seconds} s`);
    const left = processesIn(clone);
    for (const p of left) {
      console.log(`${name}: left running: pid ${p.pid}: ${p.command}`);
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    removeOwn(clone);
    if (code === 0 && left.length === 0) removeOwn(`${clone}.log`);
    else {
      console.log(`${name}: its output is in ${clone}.log`);
      passed = false;
    }
  }
  return passed;
}

console.log(
  `ci-under-load: ${rounds} round(s) of two .ci/run at once on ${head.slice(0, 12)}, ${burners.length} busy loop(s), in ${root}`,
);
let failed = 0;
try {
  for (let n = 1; n <= rounds; n++) if (!(await round(n))) failed++;
} finally {
  stopAll();
}
if (failed === 0) removeOwn(root);
console.log(
  failed === 0
    ? `ci-under-load: all ${rounds} round(s) passed`
    : `ci-under-load: ${failed} of ${rounds} round(s) failed`,
);
process.exit(failed === 0 ? 0 : 1);
