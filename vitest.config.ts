import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Stub MCP servers are real child processes; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
