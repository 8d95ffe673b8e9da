import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stepsClaimIfLeaseFree } from "../../src/store/sql/steps-claim";
import { leaseRescue } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";
import { effectKinds } from "../../src/versions/kinds/registry";
import { stepReady } from "../../src/run/apply/rows";
import { topics } from "../../src/base/catalog";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** A step claimed by a worker whose lease then lapsed (it died or hung). */
async function lapsed() {
  const run = await bed.start("call");
  await stepsClaimIfLeaseFree(bed.t.sql, run.stepId, "dead-worker", 30_000, effectKinds());
  await bed.rows("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [run.stepId]);
  return run;
}

describe("lease-rescue", () => {
  it("makes a running step whose lease lapsed ready again, with a fresh wake-up and a timeline row; a live lease is left alone", async () => {
    const dead = await lapsed();
    const live = await bed.start("call");
    await stepsClaimIfLeaseFree(bed.t.sql, live.stepId, "live-worker", 30_000, effectKinds());
    await bed.sendOutbox();

    const result = await leaseRescue.make({ batch: 10 }).runOnce(bed.ctx);
    expect(result).toEqual({ reclaimed: 1, steps: [{ orgId: bed.orgId, runId: dead.runId, stepId: dead.stepId }] });
    expect(await bed.rows("SELECT status, owner, lease_until FROM steps WHERE id = $1", [dead.stepId])).toEqual([{ status: "ready", owner: null, lease_until: null }]);
    expect(await bed.rows("SELECT topic, payload->>'stepId' AS step FROM outbox WHERE sent_at IS NULL")).toEqual([{ topic: "step.ready", step: dead.stepId }]);
    // The set-based re-wake writes the payload in SQL: exactly the applier's step.ready (run/apply/rows.ts), valid for the catalog.
    const [{ payload, lane }] = (await bed.rows(
      "SELECT o.payload, s.lane FROM outbox o JOIN steps s ON s.id = o.payload->>'stepId' WHERE o.sent_at IS NULL",
    )) as [{ payload: unknown; lane: "io" }];
    expect(payload).toEqual(stepReady({ orgId: bed.orgId, runId: dead.runId, id: dead.stepId, lane }).payload);
    expect(topics["step.ready"].payload.safeParse(payload).success).toBe(true);
    expect(await bed.rows("SELECT type FROM run_events WHERE run_id = $1 AND type = 'step.lease_expired'", [dead.runId])).toHaveLength(1);
    expect(await bed.rows("SELECT status, owner FROM steps WHERE id = $1", [live.stepId])).toEqual([{ status: "running", owner: "live-worker" }]);

    expect(await leaseRescue.make({ batch: 10 }).runOnce(bed.ctx)).toEqual({ reclaimed: 0, steps: [] });
  });

  it("a claim that waited for a rescue's commit claims the step the rescue made ready: one step.lease_expired, the sweeper's", async () => {
    const dead = await lapsed();
    // The rescue's change, not committed yet (as stepsReclaimExpired writes it).
    const sweeper = await bed.t.sql.connect();
    try {
      await sweeper.query("BEGIN");
      await sweeper.query("UPDATE steps SET status = 'ready', owner = NULL, lease_until = NULL, available_at = now() WHERE id = $1", [dead.stepId]);
      await sweeper.query(
        "INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker) SELECT org_id, run_id, id, node_id, attempt, 'step.lease_expired', lane, 'sweeper' FROM steps WHERE id = $1",
        [dead.stepId],
      );
      // The claim sees the step running under a lapsed lease and waits for the rescue's row lock in its takeover.
      const claim = stepsClaimIfLeaseFree(bed.t.sql, dead.stepId, "next-worker", 30_000, effectKinds());
      await expect
        .poll(async () => (await bed.rows("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"))[0]?.n)
        .toBe(1);
      await sweeper.query("COMMIT");
      expect((await claim)?.attempt).toBe(2);
    } finally {
      sweeper.release();
    }
    expect(await bed.rows("SELECT status, owner FROM steps WHERE id = $1", [dead.stepId])).toEqual([{ status: "running", owner: "next-worker" }]);
    expect(await bed.rows("SELECT type, attempt, worker FROM run_events WHERE step_id = $1 AND type IN ('step.lease_expired', 'step.claimed') ORDER BY id", [dead.stepId])).toEqual([
      { type: "step.claimed", attempt: 1, worker: "dead-worker" },
      { type: "step.lease_expired", attempt: 1, worker: "sweeper" },
      { type: "step.claimed", attempt: 2, worker: "next-worker" },
    ]);
  });

  it("takes at most a batch and says when it was full", async () => {
    await bed.rows("UPDATE steps SET status = 'cancelled', owner = NULL, lease_until = NULL WHERE status IN ('ready', 'running')");
    for (let i = 0; i < 3; i++) await lapsed();
    const service = leaseRescue.make({ batch: 2 });
    const first = await service.runOnce(bed.ctx);
    expect(first.reclaimed).toBe(2);
    expect(service.full(first)).toBe(true);
    const second = await service.runOnce(bed.ctx);
    expect(second.reclaimed).toBe(1);
    expect(service.full(second)).toBe(false);
    expect(await bed.rows("SELECT count(*)::int AS n FROM steps WHERE status = 'running'")).toEqual([{ n: 0 }]);
  });
});
