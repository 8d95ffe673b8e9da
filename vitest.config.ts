import { randomBytes } from "node:crypto";
import { defineConfig } from "vitest/config";

// Tests never use a key written in the source: each `vitest run` makes its own, inherited by every worker and every
// process the tests spawn (a test that checks key handling sets its own).
process.env.HOLDFAST_SECRET_KEY ??= randomBytes(32).toString("hex");
// The test servers (SMTP, CRM, model, Slack, HTTP targets) listen on loopback, which the egress guard refuses in a
// deployment. Tests open it explicitly; e2e/security.test.ts runs its processes without this exception.
process.env.HOLDFAST_EGRESS_ALLOW ??= "127.0.0.1,::1,localhost";

export default defineConfig({
  // The web's components (tsconfig says "preserve" for Next) are compiled with React's automatic runtime in tests.
  oxc: { jsx: { runtime: "automatic" } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "e2e/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/.next/**"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    // A failed browser test prints what its pages showed and saves screenshots (e2e/artifacts/failed-*.png).
    setupFiles: ["packages/testkit/src/failure-report.ts", "packages/testkit/src/page-audit-gate.ts"],
    pool: "forks",
    // Two cores: two files at a time. Each file has its own database and Redis prefix.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 240_000,
    // expect.poll is "eventually": one second (vitest's default) is too short for a page on a machine loaded by CI.
    expect: { poll: { timeout: 15_000 } },
  },
});
