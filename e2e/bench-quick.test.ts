import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createTestPrefix, repoRoot } from "@holdfast/testkit";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `pnpm bench --quick` and a small `pnpm bench --spike --quick` in CI: small loads, and the one thing they assert is
 * that nothing was lost or duplicated (every system of the race, every case of the spike).
 */
const prefix = createTestPrefix();
afterAll(() => prefix.clear());

const bench = (args: string[], timeout: number) =>
  spawnSync(process.execPath, ["--import", "tsx", join(repoRoot, "bench/src/main.ts"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_DATABASE: `holdfast_bench_ci_${process.pid}`, BENCH_SPIKE_DATABASE: `holdfast_spike_ci_${process.pid}`, BENCH_REDIS_PREFIX: prefix.prefix },
    encoding: "utf8",
    timeout,
  });

describe("pnpm bench --quick", () => {
  it("runs the race (Holdfast, DBOS, graphile-worker; http and noop steps) and loses or duplicates no step", () => {
    const out = bench(["--quick"], 240_000);
    console.log(out.stdout);
    expect(out.stderr).not.toMatch(/Error/);
    expect(out.stdout).toMatch(/lost steps: 0, duplicated steps: 0/);
    // Where the WAL went, read back for Holdfast's peak rows (pg_walinspect by relation).
    expect(out.stdout).toMatch(/WAL a step by relation, Holdfast http x10: \d+ B a step/);
    // The targets table closes the output: each race target with a figure (every row of the race ran), and the
    // lost/duplicated row met.
    const table = out.stdout.slice(out.stdout.indexOf("targets, this run"));
    expect(table).toMatch(/^targets, this run \(quick[^)]*\): \d+ of \d+ met/);
    expect(table).toMatch(/\(a\) http steps per CPU second, Holdfast \/ DBOS +>= 2x +(met|not met) +\d/);
    expect(table).toMatch(/WAL a step at peak, noop +<= 1000 B +(met|not met) +\d+ B/);
    expect(table).toMatch(/race: lost \/ duplicated steps, every row +0 \/ 0 +met/);
    expect(out.status).toBe(0);
  }, 260_000);

  it("runs a small 09:00 spike (queue working and sweep only) and loses or fires twice no timer", () => {
    const out = bench(["--spike", "--quick", "--waits", "1000", "--orgs", "10", "--spreads", "0"], 300_000);
    console.log(out.stdout);
    expect(out.stderr).not.toMatch(/Error/);
    expect(out.stdout).toMatch(/spike: lost timers or runs: 0, duplicated firings: 0/);
    expect(out.stdout).toMatch(/spike, queue working: lost \/ duplicated +0 \/ 0 +met/);
    expect(out.stdout).toMatch(/spike, every delayed job lost: CPU a timer \(node \+ postgres\) +<= 0.05 ms +(met|not met) +[\d.]+ ms/);
    expect(out.status).toBe(0);
  }, 320_000);
});
