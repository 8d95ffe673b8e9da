import { randomInt } from "node:crypto";
import { ensureWebBuilt, runSoakCli } from "@holdfast/testkit";
import { expect, it } from "vitest";

/**
 * The chaos soak, small (`pnpm soak --runs 200`): every process kind killed and frozen, PostgreSQL and Redis
 * restarted (the soak's own instances, not the machine's), wake-ups dropped, repeated and delayed, while webhook
 * deliveries, approvals and replies come in; then every invariant is checked. The seed is printed (SOAK_SEED=n to
 * replay one). Needs the built web app (apps/web/.next), which it copies under the web lock. Runs settle within a
 * minute here; the drain bound (300 s) and the soak's own bound (780 s) sit below this test's timeout, so a soak that
 * stalls reports which runs did not settle and in which stage it stopped.
 */
const runs = Number(process.env.SOAK_RUNS ?? 200);
const seed = Number(process.env.SOAK_SEED ?? randomInt(1, 2 ** 31 - 1));

interface Result {
  ok: boolean;
  runs: number;
  invariants: { name: string; figure: string; violations: string[] }[];
  faults: { injected: Record<string, number>; byTarget: Record<string, number>; queue: Record<string, number> };
  figures: { runs: number; byStatus: Record<string, number> } | null;
  error?: string;
}

it(`soak: ${runs} runs under every kind of fault (seed ${seed}) break no invariant`, async () => {
  // The soak serves a copy of the web's build: this run's build, made here when the soak is the first to need it.
  await ensureWebBuilt();
  const { code, result } = await runSoakCli<Result>(["--runs", String(runs), "--seed", String(seed), "--rate", "5", "--drain-seconds", "300", "--max-seconds", "780"]);
  expect(result.error).toBeUndefined();
  // Every fault kind happened: each process kind killed and frozen, both services restarted, the queue misbehaved.
  for (const kind of ["web", "relay", "engine", "sweeper", "lane-worker", "mail-in"]) {
    expect(result.faults.byTarget[`sigkill ${kind}`], `SIGKILL ${kind}`).toBeGreaterThanOrEqual(1);
    expect(result.faults.byTarget[`sigstop ${kind}`], `SIGSTOP ${kind}`).toBeGreaterThanOrEqual(1);
  }
  expect(result.faults.injected.pg_restart).toBeGreaterThanOrEqual(1);
  expect(result.faults.injected.redis_restart).toBeGreaterThanOrEqual(1);
  for (const kind of ["drop", "duplicate", "delay"]) expect(result.faults.queue[kind], `queue ${kind}`).toBeGreaterThanOrEqual(1);
  expect(result.figures?.runs).toBe(runs);
  // Each broken invariant shows with what broke it.
  expect(result.invariants.filter((i) => i.violations.length > 0)).toEqual([]);
  expect(result.invariants.length).toBeGreaterThanOrEqual(8);
  expect(result.ok).toBe(true);
  expect(code).toBe(0);
}, 15 * 60_000);
