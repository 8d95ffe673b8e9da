import { createTestDatabase, type HttpTarget, httpChainGraph, publish, startHttpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceRun } from "../src/run/engine/advance";
import { stepsClaimIfLeaseFree } from "../src/store/sql/steps-claim";
import { stepsSettleIfToken } from "../src/store/sql/steps-settle";
import { startRun } from "../src/run/start/start-run";
import { sweepOnce } from "../src/run/sweeper/sweep";
import { GraphCache } from "../src/versions/graph-cache";
import { effectKinds } from "../src/versions/kinds/registry";

let t: TestDatabase;
let target: HttpTarget;
const graphs = new GraphCache();
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await publish(t.db, httpChainGraph(target.url, 2, { maxAttempts: 3 }));
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
const staleSeconds = 5;
const sweep = () => sweepOnce(t.db, { staleSeconds, batchSize: 100, outboxRetentionSeconds: 3600 });

/** A run whose first step is settled to the state a settle leaves it in. */
async function runWithFirstStep(status: "parked" | "done") {
  const key = `evt_${++n}`;
  const headers = { "webhook-id": key, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers, via: "test", auth: { kind: "operator" } });
  const orgId = (await rows("SELECT org_id FROM runs WHERE id = $1", [runId]))[0].org_id as string;
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const step = (await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]))[0] as { id: string };
  const claimed = await stepsClaimIfLeaseFree(t.sql, step.id, "w1", 30_000, effectKinds());
  if (!claimed) throw new Error("no claim");
  const error = status === "parked" ? { code: "authorisation", message: "The connection's login was refused: reconnect it in Settings." } : null;
  expect((await stepsSettleIfToken(t.sql, { step: claimed, worker: "w1", status, output: {}, error })).changed).toBe(true);
  return runId;
}

/** Moves the run's instants `seconds` into the past (the database clock stands; the rows age) and sends its outbox. */
async function age(runId: string, seconds: number) {
  await t.sql.query("UPDATE outbox SET sent_at = now() WHERE run_id = $1 AND sent_at IS NULL", [runId]);
  await t.sql.query(
    `UPDATE runs SET updated_at = updated_at - make_interval(secs => $2), swept_at = swept_at - make_interval(secs => $2),
       created_at = created_at - make_interval(secs => $2) WHERE id = $1`,
    [runId, seconds],
  );
  await t.sql.query(
    `UPDATE steps SET updated_at = updated_at - make_interval(secs => $2), available_at = available_at - make_interval(secs => $2),
       woken_at = woken_at - make_interval(secs => $2) WHERE run_id = $1`,
    [runId, seconds],
  );
}

const count = async (runId: string) => ({
  events: (await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [runId]))[0].n as number,
  outbox: (await rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1", [runId]))[0].n as number,
});

describe("the sweeper and a parked run", () => {
  it("a run whose only open step is parked gains no timeline or outbox rows while it stays parked for 5 minutes", async () => {
    const runId = await runWithFirstStep("parked");
    expect(await rows("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "parked" }]);
    await age(runId, 0);
    const before = await count(runId);
    // Five minutes of sweeps, one per stale interval: the rows age by the interval between two sweeps.
    let rewoken = 0;
    for (let s = 0; s < (5 * 60) / staleSeconds; s++) {
      await age(runId, staleSeconds + 1);
      rewoken += (await sweep()).runsRewoken;
    }
    expect(rewoken).toBe(0);
    expect(await count(runId)).toEqual(before);
  });

  it("a run whose settled step lost its wake-up is still re-woken, once per stale interval", async () => {
    const runId = await runWithFirstStep("done");
    // The settle without a plan wrote a run.wake for the engine; it was lost.
    await age(runId, staleSeconds + 1);
    expect((await sweep()).runsRewoken).toBe(1);
    expect((await sweep()).runsRewoken).toBe(0);
    const types = (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((e) => e.type);
    expect(types.filter((x) => x === "run.rewoken")).toHaveLength(1);
  });
});
