import { createTestDatabase, type HttpTarget, publish, startHttpTarget, type TestDatabase, startTestRun } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { StepRunner } from "../src/run/steps/runner";
import { sweepOnce } from "../src/run/sweeper/sweep";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";
import { applyMigration, planMigration } from "../src/run/run-migrations/migrate";

/**
 * 300 runs of version 1 sit on three steps; version 2 removes one (`b`) and renames another (`c` -> `call_crm`).
 * The dry run says where each lands; apply moves each there, except the 10 with an effect in flight, which are
 * deferred and moved by a second apply once their effect settled. Every moved run has a `run.migrated` row.
 */
let t: TestDatabase;
let target: HttpTarget;
const graphs = new GraphCache();
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
let orgId = "";
let automationId = "";

const wait = (id: string) => ({ id, kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } });

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  const v1 = await publish(
    t.db,
    parseGraph({
      nodes: [{ id: "t", kind: "trigger", config: { eventIdField: "id" } }, wait("a"), wait("b"), { id: "c", kind: "http_request", config: { url: target.url } }, { id: "e", kind: "end" }],
      edges: [
        { from: "t", to: "a" },
        { from: "a", to: "b" },
        { from: "b", to: "c" },
        { from: "c", to: "e" },
      ],
    }),
    { automation: "nurture" },
  );
  orgId = v1.orgId;
  automationId = v1.automationId;
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

async function fireAndWalk(runIds: string[], nodeId: string): Promise<void> {
  await q("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = ANY($1) AND fired_at IS NULL AND step_id IN (SELECT id FROM steps WHERE node_id = $2)", [runIds, nodeId]);
  await sweepOnce(t.db, { staleSeconds: 3600, batchSize: 1000, outboxRetentionSeconds: 3600, timers: { orgs: 10, perOrg: 1000, batch: 1000, maxBatches: 5 } });
  for (const runId of runIds) await advanceRun(t.db, graphs, { orgId, runId, reason: "timer_fired" });
}

describe("migrating in-flight runs", () => {
  it("300 runs land where the dry run said; runs with an effect in flight are deferred, then moved once it settles", async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 300; i++) {
      const runId = await startTestRun(t.db, "nurture", { id: `r${i}` });
      runIds.push(runId);
    }
    const onB = runIds.slice(100, 200);
    const onC = runIds.slice(200);
    await fireAndWalk([...onB, ...onC], "a");
    await fireAndWalk(onC, "b");
    // Ten of the runs on c have their CRM call in flight right now (a live lease and an in-flight effect).
    const busy = onC.slice(0, 10);
    await q("UPDATE steps SET status = 'running', owner = 'w1', attempt = 1, lease_until = now() + interval '1 hour' WHERE run_id = ANY($1) AND node_id = 'c'", [busy]);
    await q(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
       SELECT org_id, run_id, id, run_id || '/c/1', 'http_request', 'in_flight', 'w1', now() + interval '1 hour', true FROM steps WHERE run_id = ANY($1) AND node_id = 'c'`,
      [busy],
    );
    expect(await q("SELECT node_id, status, count(*)::int AS n FROM steps WHERE status IN ('waiting', 'ready', 'running') GROUP BY 1, 2 ORDER BY 1, 2")).toEqual([
      { node_id: "a", status: "waiting", n: 100 },
      { node_id: "b", status: "waiting", n: 100 },
      { node_id: "c", status: "ready", n: 90 },
      { node_id: "c", status: "running", n: 10 },
    ]);

    await publish(
      t.db,
      parseGraph({
        nodes: [{ id: "t", kind: "trigger", config: { eventIdField: "id" } }, wait("a"), { id: "call_crm", kind: "http_request", config: { url: target.url } }, { id: "e", kind: "end" }],
        edges: [
          { from: "t", to: "a" },
          { from: "a", to: "call_crm" },
          { from: "call_crm", to: "e" },
        ],
      }),
      { automation: "nurture" },
    );
    // A mapping rewrites step history: it must be one to one and never onto an id version 1 has.
    await expect(planMigration(t.db, orgId, automationId, { fromVersion: 1, toVersion: 2, mapping: { b: "call_crm", c: "call_crm" } })).rejects.toThrow(/one to one/);
    await expect(planMigration(t.db, orgId, automationId, { fromVersion: 1, toVersion: 2, mapping: { c: "a" } })).rejects.toThrow(/version 1 too/);
    const input = { fromVersion: 1, toVersion: 2, mapping: { c: "call_crm" }, removed: { kind: "move", to: "call_crm" } };
    const plan = await planMigration(t.db, orgId, automationId, input);
    expect(plan.positions.sort((x, y) => x.from.localeCompare(y.from))).toEqual([
      { from: "a", runs: 100, deferred: 0, landing: { action: "keep", to: "a" } },
      { from: "b", runs: 100, deferred: 0, landing: { action: "move", to: "call_crm" } },
      { from: "c", runs: 100, deferred: 10, landing: { action: "rename", to: "call_crm" } },
    ]);
    const said = new Map(plan.runs.map((r) => [r.runId, r]));

    const first = await applyMigration(t.db, graphs, orgId, automationId, input, "user:sam@acme.test", { batchSize: 50 });
    expect(first).toMatchObject({ migrated: 290, deferred: 10, cancelled: 0, stayed: 0, remaining: 10 });
    const where = async () =>
      new Map(
        (
          await q(
            `SELECT r.id, v.version, s.node_id, s.status FROM runs r JOIN automation_versions v ON v.id = r.version_id
             JOIN steps s ON s.run_id = r.id AND s.status IN ('waiting', 'ready', 'running') WHERE r.id = ANY($1)`,
            [runIds],
          )
        ).map((r) => [r.id as string, r]),
      );
    let now = await where();
    for (const runId of runIds) {
      const p = said.get(runId);
      const row = now.get(runId);
      if (p?.deferred) {
        expect(row).toMatchObject({ version: 1, node_id: "c", status: "running" });
        continue;
      }
      expect(row).toMatchObject({ version: 2, node_id: p?.landing && "to" in p.landing ? p.landing.to : "?" });
    }
    // The removed step's wait and timer were closed; the renamed step kept its history under the new id.
    expect(await q("SELECT count(*)::int AS n FROM steps WHERE node_id = 'b' AND status = 'cancelled'")).toEqual([{ n: 100 }]);
    expect(await q("SELECT count(*)::int AS n FROM timers WHERE fired_by = 'cancelled'")).toEqual([{ n: 100 }]);

    // The in-flight calls settle (their workers finish); a second apply moves them.
    await q("UPDATE steps SET status = 'ready', owner = NULL, lease_until = NULL WHERE run_id = ANY($1) AND node_id = 'c'", [busy]);
    await q("DELETE FROM effects WHERE run_id = ANY($1)", [busy]);
    const second = await applyMigration(t.db, graphs, orgId, automationId, input, "user:sam@acme.test", { migrationId: first.migrationId });
    expect(second).toMatchObject({ migrated: 10, deferred: 0, remaining: 0 });
    now = await where();
    for (const runId of busy) expect(now.get(runId)).toMatchObject({ version: 2, node_id: "call_crm", status: "ready" });
    expect(await q("SELECT status, migrated FROM run_migrations WHERE id = $1", [first.migrationId])).toEqual([{ status: "done", migrated: 300 }]);

    const events = await q("SELECT run_id, data FROM run_events WHERE type = 'run.migrated'");
    expect(events).toHaveLength(300);
    for (const e of events) {
      const p = said.get(e.run_id);
      expect(e.data).toMatchObject({ fromVersion: 1, toVersion: 2, fromStep: p?.from, action: p?.landing.action });
    }
    // A moved run goes on on its new version: its CRM call runs as call_crm, with the new key.
    const moved = onB[0] as string;
    const [step] = await q("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'call_crm'", [moved]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log: createLogger("test", "silent") });
    expect((await runner.run(step.id)).kind).toBe("settled");
    expect(await q("SELECT status FROM runs WHERE id = $1", [moved])).toEqual([{ status: "completed" }]);
    expect(target.calls.get(`${moved}/call_crm/1`)).toBe(1);

    // v3 shortens the wait on `a` from an hour to a minute: the kept runs' timers follow, from when the wait began.
    await publish(
      t.db,
      parseGraph({
        nodes: [
          { id: "t", kind: "trigger", config: { eventIdField: "id" } },
          { id: "a", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } },
          { id: "call_crm", kind: "http_request", config: { url: target.url } },
          { id: "e", kind: "end" },
        ],
        edges: [
          { from: "t", to: "a" },
          { from: "a", to: "call_crm" },
          { from: "call_crm", to: "e" },
        ],
      }),
      { automation: "nurture" },
    );
    const third = await applyMigration(t.db, graphs, orgId, automationId, { fromVersion: 2, toVersion: 3 }, "user:sam@acme.test");
    expect(third.migrated).toBe(299);
    expect(
      await q(
        `SELECT round(EXTRACT(EPOCH FROM t.due_at - t.anchor_at))::int AS seconds, count(*)::int AS n
         FROM timers t JOIN steps s ON s.id = t.step_id WHERE s.node_id = 'a' AND t.fired_at IS NULL GROUP BY 1`,
      ),
    ).toEqual([{ seconds: 60, n: 100 }]);
  });
});
