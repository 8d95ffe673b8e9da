import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "e2e/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/.next/**"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    pool: "forks",
    // Two cores: two files at a time. Each file has its own database and Redis prefix.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
});
