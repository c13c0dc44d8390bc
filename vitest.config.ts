import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Stub MCP servers are real child processes; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default, one worker fewer than cores, is a single worker on two cores; most test
    // files wait on child processes (stub servers, the CLI), so one file per core overlaps them.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
