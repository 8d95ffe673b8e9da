import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stepReady } from "../../src/run/apply/rows";
import { createConnection } from "../../src/providers/connections/connect";
import { breakerProbes } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** A connection whose breaker opened `openedSecondsAgo` (cool-down 30 s) with `parked` steps waiting on it. */
async function openBreaker(name: string, openedSecondsAgo: number, parked: number) {
  const connectionId = await createConnection(bed.t.db, {
    orgId: bed.orgId,
    kind: "smtp",
    name,
    config: { host: "127.0.0.1", port: 2525, from: "a@acme.test" },
    secret: null,
    limits: { breaker: { coolDownMs: 30_000 } },
  });
  await bed.rows("UPDATE connections SET breaker_state = 'open', breaker_opened_at = now() - make_interval(secs => $2) WHERE id = $1", [connectionId, openedSecondsAgo]);
  const steps: string[] = [];
  for (let i = 0; i < parked; i++) {
    const { stepId } = await bed.start("call");
    await bed.rows("UPDATE steps SET status = 'parked', error = jsonb_build_object('code', 'breaker_open', 'connectionId', $2::text) WHERE id = $1", [stepId, connectionId]);
    steps.push(stepId);
  }
  await bed.sendOutbox();
  return steps;
}

describe("breaker-probes", () => {
  it("wakes one parked step per connection whose breaker is past its cool-down, to be the half-open probe", async () => {
    const cooled = await openBreaker("cooled", 60, 2);
    const hot = await openBreaker("hot", 5, 1);
    const service = breakerProbes.make();

    expect(await service.runOnce(bed.ctx)).toEqual({ woken: 1 });
    const states = await bed.rows("SELECT id, status FROM steps WHERE id = ANY($1) ORDER BY updated_at, id", [[...cooled, ...hot]]);
    expect(states.filter((s) => s.status === "ready")).toHaveLength(1);
    expect(cooled).toContain(states.find((s) => s.status === "ready")?.id);
    expect(await bed.rows("SELECT status FROM steps WHERE id = $1", [hot[0]])).toEqual([{ status: "parked" }]);
    const [woken] = await bed.rows("SELECT payload->>'stepId' AS step FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL");
    expect(cooled).toContain(woken?.step);
    expect(await bed.rows("SELECT worker FROM run_events WHERE step_id = $1 AND type = 'step.resumed'", [woken?.step])).toEqual([{ worker: "sweeper" }]);
    // Written in SQL by the set-based resume: exactly the applier's step.ready payload (run/apply/rows.ts).
    const [row] = (await bed.rows(
      "SELECT o.payload, s.org_id, s.run_id, s.id, s.lane FROM outbox o JOIN steps s ON s.id = o.payload->>'stepId' WHERE o.topic = 'step.ready' AND o.sent_at IS NULL",
    )) as [{ payload: unknown; org_id: string; run_id: string; id: string; lane: "io" }];
    expect(row.payload).toEqual(stepReady({ orgId: row.org_id, runId: row.run_id, id: row.id, lane: row.lane }).payload);
  });
});
