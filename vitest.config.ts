import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A temp folder for probe runs that test files share (test/fixtures/shared-runs.ts), and at the end
    // the check that fails the run when a test left a process running (test/fixtures/suite-processes.ts).
    globalSetup: ["test/global-setup.ts"],
    // Children started through the test harnesses are stopped after each test, whatever its outcome.
    setupFiles: ["test/fixtures/stop-children.ts"],
    // A bound for a test that hangs, not a measure of speed: tests wait for events, never for a clock,
    // and a machine loaded by other builds and suites (load average 15 on two cores) runs them several
    // times slower. Tests set no limit of their own, shorter or longer, and spawnSync calls take the same
    // bound, except where a real agent or a package install runs: test/probes/pi-runner.test.ts (the
    // real pi on Node 22 with its MCP adapter, several runs a test) and test/package.test.ts (npm pack,
    // an install that compiles the SQLite addon: minutes).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One worker process runs many files: no test file mocks modules or leaves process state behind
    // (env changes are restored, and so is the cwd of a command run in the test's process; no other
    // chdir), and a fresh fork per file cost ~0.5 s each in start-up and
    // re-imports (53 quick files: 41.8 s isolated, 15.6 s not; the suite 274 s → 183 s).
    isolate: false,
    // One worker more than cores: most files spend part of their time waiting on child processes (stub
    // servers, the CLI), which the extra file fills. On two cores: 1 worker 183 s, 2 → 128 s, 3 → 98 s,
    // 4 → 128 s (more workers than that only fight over the cores).
    maxWorkers: availableParallelism() + 1,
    // Each module as Vite transformed it, kept on disk (node_modules/.experimental-vitest-cache) under a
    // hash of its path, its text and the config, so a run after the first transforms only what changed
    // (docs/performance.md, "A tenth look"). Vitest clears it when the lockfile changes.
    experimental: { fsModuleCache: true },
  },
});
