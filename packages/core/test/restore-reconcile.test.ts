import { createDb, type Db } from "@holdfast/db";
import { createTestDatabase, lineGraph, publish, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideCarry } from "../src/run/restore/carry-plan";
import { RestoreRefused, reconcileRestore } from "../src/run/restore/reconcile";

/**
 * `holdfast restore reconcile` on two databases with one history: `restored` stops at a point, `latest` (cloned from
 * it, then written further, as the archive's end would be) knows what happened after. The e2e drill
 * (e2e/restore-drill.test.ts) runs it on real restores; here every kind of row is carried and checked.
 */
let restored: TestDatabase;
let latestName = "";
let latest: Db;
let orgId = "";
let kept = "";
let late = "";

const server = (db: string) => {
  const u = new URL(restored.adminUrl);
  u.pathname = `/${db}`;
  return u.toString();
};
/** One statement as the superuser on the server's `postgres` database (CREATE/DROP DATABASE). */
async function onServer(sql: string): Promise<void> {
  const admin = createDb(server("postgres"), { poolSize: 1 });
  await admin.$executeRawUnsafe(sql).finally(() => admin.$disconnect());
}
const effect = (db: Db, key: string, runId: string, status: string, extra = "") =>
  db.$executeRawUnsafe(
    `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, result, started_at)
     VALUES ($1, $2, 'stp_x', $3, 'send_email', $4, CASE WHEN $4 = 'in_flight' THEN 'stp_x:1' END,
             CASE WHEN $4 = 'in_flight' THEN now() + interval '1 minute' END,
             CASE WHEN $4 = 'settled' THEN '{"messageId":"<m@x>","accepted":["ada@example.com"]}'::jsonb END, now()) ${extra}`,
    orgId,
    runId,
    key,
    status,
  );

beforeAll(async () => {
  restored = await createTestDatabase();
  // Set up with a client of its own, closed before the clone (a template must have no connections).
  const setup = createDb(restored.url, { poolSize: 1 });
  ({ orgId } = await publish(setup, lineGraph(
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 600 } } },
        { id: "e", kind: "end" },
      ), { automation: "drill" }));
  kept = await startTestRun(setup, "drill", { id: "evt_kept" });
  await effect(setup, `${kept}/before/1`, kept, "settled");
  await effect(setup, `${kept}/lapsed/1`, kept, "in_flight");
  await setup.$executeRawUnsafe("INSERT INTO contacts (org_id, email, consent) VALUES ($1, 'bo@example.com', 'granted')", orgId);
  await setup.$disconnect();
  latestName = `${restored.name}_latest`;
  await onServer(`CREATE DATABASE ${latestName} TEMPLATE ${restored.name}`);
  const latestUrl = restored.url.replace(`/${restored.name}`, `/${latestName}`);
  latest = createDb(latestUrl, { poolSize: 2 });
  // After the point: the latest state's history.
  late = await startTestRun(latest, "drill", { id: "evt_late", email: "dee@example.com" });
  await effect(latest, `${kept}/sent/1`, kept, "settled");
  await effect(latest, `${kept}/calling/1`, kept, "in_flight");
  await effect(latest, `${kept}/parked/1`, kept, "needs_review");
  await latest.$executeRawUnsafe("UPDATE effects SET status = 'settled', owner = NULL, lease_until = NULL, result = '{\"ok\":true}', updated_at = now() WHERE key = $1", `${kept}/lapsed/1`);
  await effect(latest, `${late}/sent/1`, late, "settled");
  await latest.$executeRawUnsafe("INSERT INTO suppressions (org_id, email, reason) VALUES ($1, 'cy@example.com', 'unsubscribed')", orgId);
  await latest.$executeRawUnsafe("UPDATE contacts SET consent = 'withdrawn', consent_changed_at = now() WHERE email = 'bo@example.com'");
}, 60_000);

afterAll(async () => {
  await latest?.$disconnect();
  if (latestName) await onServer(`DROP DATABASE IF EXISTS ${latestName} WITH (FORCE)`);
  await restored?.drop();
});

describe("decideCarry", () => {
  it("carries what is further along in the latest state, as settled, uncertain or parked; never into a missing run", () => {
    expect(decideCarry("settled", undefined, true)).toEqual({ action: "carry", status: "settled" });
    expect(decideCarry("settled", "in_flight", true)).toEqual({ action: "carry", status: "settled" });
    expect(decideCarry("in_flight", undefined, true)).toEqual({ action: "carry", status: "outcome_unknown" });
    expect(decideCarry("in_flight", "in_flight", true)).toEqual({ action: "carry", status: "outcome_unknown" });
    expect(decideCarry("outcome_unknown", "needs_review", true)).toEqual({ action: "skip", why: "already_known" });
    expect(decideCarry("needs_review", "outcome_unknown", true)).toEqual({ action: "carry", status: "needs_review" });
    expect(decideCarry("settled", "settled", true)).toEqual({ action: "skip", why: "already_known" });
    expect(decideCarry("settled", undefined, false)).toEqual({ action: "skip", why: "run_missing" });
  });
});

describe("reconcileRestore", () => {
  it("carries effects, sent messages, suppressions and withdrawn consent; says so on the run's timeline; twice is once", async () => {
    // The restore point: the restored copy's last write (it is the older copy of one history).
    const [{ at }] = (await restored.sql.query("SELECT GREATEST((SELECT max(updated_at) FROM effects), (SELECT max(at) FROM run_events)) AS at")).rows;
    const point = at as Date;
    const report = await reconcileRestore(restored.db, latest, { point });
    expect(report.effectsCarried).toEqual({ settled: 2, outcomeUnknown: 1, needsReview: 1 });
    expect(report.runsTouched).toBe(1);
    // The run started after the point is carried whole, its settled effect with it.
    expect(report.runsNotCarried).toEqual([]);
    expect(report.runsCarried).toBe(1);
    expect(report.contacts).toBe(1);
    expect(report.runsMissing).toEqual([]);
    const [lateRun] = (await restored.sql.query("SELECT status FROM runs WHERE id = $1", [late])).rows;
    expect(lateRun).toBeDefined();
    expect((await restored.sql.query("SELECT status FROM effects WHERE run_id = $1", [late])).rows).toEqual([{ status: "settled" }]);
    const lateEvents = (await restored.sql.query("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [late])).rows.map((r) => r.type);
    expect(lateEvents[0]).toBe("run.started");
    expect(lateEvents.at(-1)).toBe("restore.run_carried");
    expect(report.suppressions).toBe(1);
    expect(report.consentWithdrawals).toBe(1);
    const rows = (await restored.sql.query("SELECT key, status, owner, lease_until FROM effects WHERE run_id = $1 ORDER BY key", [kept])).rows;
    const status = Object.fromEntries(rows.map((r) => [r.key.split("/")[1], r.status]));
    expect(status).toEqual({ before: "settled", calling: "outcome_unknown", lapsed: "settled", parked: "needs_review", sent: "settled" });
    expect(rows.every((r) => r.status === "in_flight" || (r.owner === null && r.lease_until === null))).toBe(true);
    const events = (await restored.sql.query("SELECT data FROM run_events WHERE run_id = $1 AND type = 'restore.effects_carried'", [kept])).rows;
    expect(events).toHaveLength(1);
    expect(events[0].data.note).toMatch(/^The database was restored from a backup to .+\. 4 effects of this run happened after that point/);
    const [contact] = (await restored.sql.query("SELECT consent FROM contacts WHERE email = 'bo@example.com'")).rows;
    expect(contact.consent).toBe("withdrawn");
    expect((await restored.sql.query("SELECT 1 FROM suppressions WHERE email = 'cy@example.com'")).rowCount).toBe(1);

    const again = await reconcileRestore(restored.db, latest, { point });
    // A process already running on the restored database: refused, nothing written.
    const engine = createDb(restored.url, { poolSize: 1, applicationName: "holdfast-engine" });
    try {
      await engine.$queryRaw`SELECT 1`;
      await expect(reconcileRestore(restored.db, latest, { point })).rejects.toThrow(RestoreRefused);
      await expect(reconcileRestore(restored.db, latest, { point })).rejects.toThrow(/processes are connected to the restored database \(holdfast-engine\)/);
    } finally {
      await engine.$disconnect();
    }
    expect(again.effectsCarried).toEqual({ settled: 0, outcomeUnknown: 0, needsReview: 0 });
    expect(again.runsTouched).toBe(0);
    expect(again.runsCarried).toBe(0);
    expect([again.suppressions, again.consentWithdrawals]).toEqual([0, 0]);
  });
});
