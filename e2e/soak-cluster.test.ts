import { randomInt } from "node:crypto";
import { ensureWebBuilt, runSoakCli } from "@holdfast/testkit";
import { expect, it } from "vitest";

/**
 * The cluster soak, small (`pnpm soak --cluster --runs 150`): the deployment on PostgreSQL under Patroni (behind
 * HAProxy and PgBouncer) and a Redis Cluster, every process kind killed and frozen, the PostgreSQL leader killed
 * once, a Redis master killed once and one lane worker's network path to the database cut for 10 s, while webhook
 * deliveries, approvals and replies come in; then every invariant, and each failover measured from the senders' side.
 * The seed is printed (SOAK_SEED=n to replay one). Needs the built web app, like e2e/soak.test.ts.
 */
const runs = Number(process.env.SOAK_RUNS ?? 150);
const seed = Number(process.env.SOAK_SEED ?? randomInt(1, 2 ** 31 - 1));

interface Spread {
  n: number;
  p50: number;
  max: number;
}
interface Result {
  ok: boolean;
  invariants: { name: string; figure: string; violations: string[] }[];
  faults: { injected: Record<string, number>; byTarget: Record<string, number> };
  figures: { runs: number } | null;
  cluster: {
    failovers: {
      postgres: { n: number; unavailableMs: Spread; clusterMs: Spread };
      redis: { n: number; unavailableMs: Spread; clusterMs: Spread };
      cuts: { n: number };
      each: { kind: string; target: string; clusterMs: number | null; unavailableMs: number }[];
    } | null;
  } | null;
  error?: string;
}

it(`cluster soak: ${runs} runs through a PostgreSQL failover, a Redis failover and a database path cut (seed ${seed}) break no invariant`, async () => {
  await ensureWebBuilt();
  const args = ["--cluster", "--runs", String(runs), "--seed", String(seed), "--rate", "5", "--pg-failovers", "1", "--redis-failovers", "1", "--cuts", "1", "--drain-seconds", "240", "--max-seconds", "600"];
  const { code, result } = await runSoakCli<Result>(args);
  expect(result.error).toBeUndefined();
  for (const kind of ["web", "relay", "engine", "sweeper", "lane-worker", "mail-in"]) {
    expect(result.faults.byTarget[`sigkill ${kind}`], `SIGKILL ${kind}`).toBeGreaterThanOrEqual(1);
    expect(result.faults.byTarget[`sigstop ${kind}`], `SIGSTOP ${kind}`).toBeGreaterThanOrEqual(1);
  }
  // No single-node restarts here: the cluster's nodes fail over instead.
  expect([result.faults.injected.pg_restart, result.faults.injected.redis_restart]).toEqual([undefined, undefined]);
  expect([result.faults.injected.pg_failover, result.faults.injected.redis_failover, result.faults.injected.db_cut]).toEqual([1, 1, 1]);
  // Each failover happened (another node took over, as the cluster measured) and the senders' side was measured.
  const f = result.cluster?.failovers;
  expect(f, "the cluster soak reported no failover figures").toBeTruthy();
  expect([f?.postgres.n, f?.redis.n, f?.cuts.n]).toEqual([1, 1, 1]);
  for (const e of f?.each ?? []) {
    expect(e.target, `${e.kind}: which node or process`).not.toBe("");
    expect(e.unavailableMs, `${e.kind}: the senders' unavailability`).toBeGreaterThanOrEqual(0);
    if (e.kind !== "db_cut") expect(e.clusterMs, `${e.kind}: the cluster's failover time`).toBeGreaterThan(0);
  }
  expect(result.figures?.runs).toBe(runs);
  expect(result.invariants.filter((i) => i.violations.length > 0)).toEqual([]);
  expect(result.invariants.length).toBeGreaterThanOrEqual(8);
  expect(result.ok).toBe(true);
  expect(code).toBe(0);
}, 10 * 60_000);
