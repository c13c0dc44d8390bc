/**
 * What a benchmark starts, stopped whatever happens: child processes, servers in this process, timers
 * and temporary folders are registered as they are started, and `withHarness` stops them in reverse
 * order when its body ends, returns or throws, and when the bench is stopped by SIGINT or SIGTERM.
 * A step that fails to stop is reported after the others have been stopped, never instead of them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";

/** How long a child has after SIGTERM before it gets SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** Harnesses whose body is still running: a signal stops what each of them started. */
const running = new Set();

/** True once `child` has exited or been killed by a signal (its 'exit' event may already be past). */
const exited = (child) => child.exitCode !== null || child.signalCode !== null;

/**
 * Ends `child`: `signal`, then SIGKILL if it has not exited within `graceMs`. Resolves at once for a
 * child that had already exited (waiting for its 'exit' event then would wait forever).
 */
export async function stopChild(child, signal = "SIGTERM", graceMs = STOP_GRACE_MS) {
  if (exited(child)) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve("late"), graceMs);
  });
  const outcome = await Promise.race([gone, late]);
  clearTimeout(timer);
  if (outcome === "late" && !exited(child)) {
    child.kill("SIGKILL");
    await gone;
  }
}

class Harness {
  /** Stop steps, run last first. */
  steps = [];

  /** Registers `stop` to run when the harness ends; returns `value`. */
  defer(stop, value) {
    this.steps.push(stop);
    return value;
  }

  /** `spawn(command, args, options)`, the child stopped at the end unless it has exited. */
  spawn(command, args, options) {
    const child = spawn(command, args, options);
    // A child that cannot start emits 'error'; it has nothing to stop, and the error must not go unhandled.
    child.once("error", () => undefined);
    return this.defer(() => stopChild(child), child);
  }

  /**
   * Starts `node <flags> <script> <args>` and resolves with the child and the URL of the
   * `LISTENING <url>` line it prints first; rejects when it prints something else first or exits.
   * `env` is the child's whole environment.
   */
  startListening(script, args, { stderr = "inherit", flags = [], env = process.env } = {}) {
    const stdio = ["ignore", "pipe", stderr];
    const child = this.spawn(process.execPath, [...flags, script, ...args], { stdio, env });
    const name = `${basename(script)} ${args[0] ?? ""}`.trim();
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", (line) => {
        const match = /^LISTENING (\S+)$/.exec(line);
        if (match) resolve({ child, url: match[1] });
        else reject(new Error(`${name} did not start: ${line}`));
      });
      child.once("exit", (code, signal) => reject(new Error(`${name} exited ${code ?? signal} before it listened`)));
      child.once("error", reject);
    });
  }

  /** Listens with `server` on 127.0.0.1 (a free port); resolves with its URL. Closed at the end. */
  async listen(server) {
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    this.defer(() => {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(() => resolve()));
    });
    return `http://127.0.0.1:${server.address().port}`;
  }

  /** A new folder in the system's temporary directory, removed at the end. */
  tempDir(prefix) {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    return this.defer(() => rmSync(dir, { recursive: true, force: true }), dir);
  }

  /** `setInterval(tick, ms)`, cleared at the end (or by the returned function, earlier). */
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    const clear = () => clearInterval(timer);
    return this.defer(clear, clear);
  }

  /** Runs every stop step, last registered first, each whatever the others did; throws the first failure. */
  async stopAll() {
    const failures = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

/** Runs `body(harness)`; whatever it started is stopped when it ends, however it ends. */
export async function withHarness(body) {
  const harness = new Harness();
  running.add(harness);
  try {
    return await body(harness);
  } finally {
    running.delete(harness);
    await harness.stopAll();
  }
}

/** SIGINT and SIGTERM stop what every running harness started, then end the bench as the signal would. */
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
]) {
  process.once(signal, async () => {
    console.error(`bench: ${signal}, stopping what it started`);
    await Promise.allSettled([...running].map((harness) => harness.stopAll()));
    process.exit(code);
  });
}
