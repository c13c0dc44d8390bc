import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Stub MCP servers are real child processes; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One worker process runs many files: no test file mocks modules or leaves process state behind
    // (env changes are restored, no chdir), and a fresh fork per file cost ~0.5 s each in start-up and
    // re-imports (53 quick files: 41.8 s isolated, 15.6 s not; the suite 274 s → 183 s).
    isolate: false,
  },
});
