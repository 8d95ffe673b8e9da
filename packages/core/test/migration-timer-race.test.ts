import { inTx, Prisma } from "@holdfast/db";
import { connectAs, createTestDatabase, publish, startTestRun, type TestDatabase, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journeyCounts } from "../src/run/counts/journey-counts";
import { advanceRun } from "../src/run/engine/advance";
import { fireAndWalkSet } from "../src/run/engine/fire-set";
import { applyMigration } from "../src/run/run-migrations/migrate";
import { type Graph, parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";
import { scanCounts } from "./journey-counts-scan";

/**
 * A wait's timer fires while a migration holds the wait's run. The timer's statement does not wait for a run another
 * transaction holds (SKIP LOCKED: the run is walked later), but it settles the wait all the same, and counts it on the
 * run's version as it reads it: the old one, while the migration has not committed. The migration had already moved
 * the waiting step's "now" to the new version, so the old version lost it twice and the new one kept a wait that had
 * passed. The migration now locks the run's unfired timers before it reads the run's steps: the firing waits for it
 * and counts the wait on the version the run is on by then. Here the migration is held open (a test trigger sleeps 3 s on
 * its `run.migrated` row, written after the version changed) while the timer is fired.
 */
let t: TestDatabase;
const graphs = new GraphCache();
let orgId = "";
let automationId = "";
let v1 = "";

const graphOf = (end: string): Graph =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "hold", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } },
      { id: end, kind: "end" },
    ],
    edges: [
      { from: "t", to: "hold" },
      { from: "hold", to: end },
    ],
  });

beforeAll(async () => {
  t = await createTestDatabase();
  const ids = await publish(t.db, graphOf("done"), { automation: "race" });
  ({ orgId, automationId, versionId: v1 } = ids);
  // Holds a migrating run's transaction open after its version changed (and its counts moved), before it commits.
  const admin = await connectAs(t.adminUrl, "postgres");
  await admin.query(`CREATE FUNCTION test_hold_migration() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.type = 'run.migrated' THEN PERFORM pg_sleep(3); END IF; RETURN NULL; END $$`);
  await admin.query("CREATE TRIGGER test_hold_migration AFTER INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION test_hold_migration()");
  await admin.end();
});
afterAll(async () => {
  await t?.drop();
});

/** The counts the canvas shows for a version and the scan of its runs' steps, in one snapshot. */
async function countsAndScan(versionId: string) {
  return t.db.$transaction(
    async (tx) => {
      const c = await journeyCounts(tx, { orgId, automationId, versionId, window: "all" });
      const nodes = Object.fromEntries(
        Object.entries(c.nodes)
          .map(([id, { email: _email, ...n }]) => [id, n] as const)
          .filter(([, n]) => Object.values(n).some((x) => x !== 0)),
      );
      const scan = await scanCounts((sql, params) => tx.$queryRawUnsafe(sql, ...params), [versionId]);
      return { counts: nodes, scan: scan.nodes };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}

describe("a timer that fires while a migration holds its run", () => {
  it("is counted on the version the run ends on, once", async () => {
    const runId = await startTestRun(t.db, "race", { id: "r1" });
    const v2 = (await publish(t.db, graphOf("done2"), { automation: "race" })).versionId;
    // Due a second ago, as the wait's rule says from its anchor (so the migration finds nothing to recompute).
    const [timer] = (
      await t.sql.query<{ id: string }>(
        "UPDATE timers SET anchor_at = now() - interval '3601 seconds', due_at = now() - interval '1 second' WHERE run_id = $1 RETURNING id",
        [runId],
      )
    ).rows;
    expect(timer).toBeDefined();

    const migrating = applyMigration(t.db, graphs, orgId, automationId, { fromVersion: 1, toVersion: 2 }, "user:sam@acme.test");
    // The migration is in its pause: its version change and its counts are written, not committed.
    const paused = await waitFor(
      async () => (await t.sql.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'")).rows[0]?.pid,
      20_000,
      "the migration's pause",
    );
    const firing = inTx(t.db, (tx) => fireAndWalkSet(tx, graphs, [timer?.id as string], null, "test"));
    // The firing waits for the migration (its timer's lock), while the migration is still open (its pause is 3 s).
    await waitFor(
      async () => (await t.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))", [paused])).rows[0]?.n,
      2_500,
      "the firing to wait for the migrating run's timer",
    );
    const [report, fired] = await Promise.all([migrating, firing]);
    expect(report).toMatchObject({ migrated: 1 });
    expect(fired.fired.map((f) => f.runId)).toEqual([runId]);
    // A run the firing found held is walked on by the engine (its run.wake); walked here the same way.
    await advanceRun(t.db, graphs, { orgId, runId, reason: "timer_fired" });

    const [{ status }] = (await t.sql.query("SELECT status FROM runs WHERE id = $1", [runId])).rows;
    expect(status).toBe("completed");
    const one = await countsAndScan(v1);
    const two = await countsAndScan(v2);
    expect(one.counts).toEqual(one.scan);
    expect(two.counts).toEqual(two.scan);
    // The run waited on version 2 when its wait passed: nothing of it is on version 1 any more.
    expect(two.scan.hold).toMatchObject({ now: 0, passed: 1 });
    expect(one.scan).toEqual({});
  });
});
