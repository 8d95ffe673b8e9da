import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createTestPrefix, repoRoot } from "@holdfast/testkit";
import { afterAll, describe, expect, it } from "vitest";

/** `pnpm bench --quick` in CI: small load, and the one thing it asserts is that nothing was lost or duplicated. */
const prefix = createTestPrefix();
afterAll(() => prefix.clear());

describe("pnpm bench --quick", () => {
  it("runs the engine scenarios and loses or duplicates no step", () => {
    const out = spawnSync(process.execPath, ["--import", "tsx", join(repoRoot, "bench/src/main.ts"), "--quick"], {
      cwd: repoRoot,
      env: { ...process.env, BENCH_DATABASE: `holdfast_bench_ci_${process.pid}`, BENCH_REDIS_PREFIX: prefix.prefix },
      encoding: "utf8",
      timeout: 120_000,
    });
    console.log(out.stdout);
    expect(out.stderr).not.toMatch(/Error/);
    expect(out.stdout).toMatch(/lost steps: 0, duplicated steps: 0/);
    expect(out.status).toBe(0);
  });
});
