import { inTx } from "@holdfast/db";
import { connectAs, createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceMany, advanceRun } from "../src/run/engine/advance";
import { fireAndWalkSet } from "../src/run/engine/fire-set";
import { timerPlansOf } from "../src/run/engine/timer-plans";
import { startRun } from "../src/run/start/start-run";
import { timersFireIfDueMany } from "../src/store/sql/timers";
import { type Graph, parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

// The set path (holdfast_timers_fire_walk): timers fired and their runs moved on in one statement where the graph
// alone decides the walk, against the walk's own path (fire, then advanceMany) on twin runs.

const trigger = { id: "t", kind: "trigger", config: { eventIdField: "id" } };
const hour = { id: "w", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } };
const call = { id: "call", kind: "http_request", config: { url: "http://127.0.0.1:9/unused", method: "POST" } };
const graphs: Record<string, Graph> = {
  // wait -> a plain step -> end: the next step scheduled, ready and claimable.
  step: parseGraph({ nodes: [trigger, hour, call, { id: "e", kind: "end" }], edges: [{ from: "t", to: "w" }, { from: "w", to: "call" }, { from: "call", to: "e" }] }),
  // wait -> end: the run completes.
  end: parseGraph({ nodes: [trigger, hour, { id: "e", kind: "end" }], edges: [{ from: "t", to: "w" }, { from: "w", to: "e" }] }),
  // wait -> branch on the run's input: the walk needs the run's data, so it is walked in TypeScript.
  branch: parseGraph({
    nodes: [trigger, hour, { id: "b", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } }, { id: "yes", kind: "end" }, { id: "no", kind: "end" }],
    edges: [{ from: "t", to: "w" }, { from: "w", to: "b" }, { from: "b", to: "yes", label: "true" }, { from: "b", to: "no", label: "false" }],
  }),
};

let t: TestDatabase;
let orgId: string;
const versions: Record<string, string> = {};
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
const actor = "engine-test";

beforeAll(async () => {
  t = await createTestDatabase();
  for (const [name, graph] of Object.entries(graphs)) {
    const p = await publish(t.db, graph, { automation: name });
    orgId = p.orgId;
    versions[name] = p.versionId;
  }
});
afterAll(() => t?.drop());

let n = 0;
/** A run of `automation` waiting on its hour's timer, made due now. */
async function waiting(automation: string, input: Record<string, unknown> = {}): Promise<{ runId: string; timerId: string; wake: number }> {
  const body = { id: `evt_${++n}`, ...input };
  const headers = { "webhook-id": body.id, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: automation, rawBody: "{}", body, headers, via: "test", auth: { kind: "operator" } });
  await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
  const [timer] = await rows("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = $1 RETURNING id, wake", [runId]);
  return { runId, timerId: timer.id, wake: timer.wake };
}

/** The walk's own path: fire in one statement, then advanceMany, in one transaction. */
const byWalk = (dues: { timerId: string; wake: number }[]) =>
  inTx(t.db, async (tx) => {
    const fired = await timersFireIfDueMany(tx, dues, actor);
    await advanceMany(tx, new GraphCache(), fired.map((f) => ({ orgId: f.orgId, runId: f.runId })), actor);
  });

/** The set path with a book that knows every graph here. */
function taught(): GraphCache {
  const cache = new GraphCache();
  const book = timerPlansOf(cache);
  for (const [name, graph] of Object.entries(graphs)) book.learn(versions[name] as string, "w", graph);
  return cache;
}
const bySet = (cache: GraphCache, dues: { timerId: string; wake: number }[]) =>
  inTx(t.db, (tx) => fireAndWalkSet(tx, cache, dues.map((d) => d.timerId), dues.map((d) => d.wake), actor));

/** Everything the firing and the walk wrote for a run, without ids and instants: two runs walked alike compare equal. */
async function written(runId: string) {
  const steps = await rows(
    `SELECT id, node_id, iteration, kind, lane, status, attempt, max_attempts, owner, lease_until IS NULL AS unleased,
            advanced_at IS NOT NULL AS advanced, settled_at IS NOT NULL AS settled, available_at <= now() AS due,
            ARRAY(SELECT jsonb_object_keys(COALESCE(output, '{}'::jsonb)) ORDER BY 1) AS output_keys
     FROM steps WHERE run_id = $1 ORDER BY created_at, id`,
    [runId],
  );
  const stepNode = new Map(steps.map((s) => [s.id, `${s.node_id}#${s.iteration}`]));
  const named = (v: unknown) => (typeof v === "string" && stepNode.has(v) ? stepNode.get(v) : v);
  const run = await rows(
    "SELECT status, seq, error, finished_at IS NOT NULL AS finished, held_at IS NULL AS unheld, updated_at = created_at AS untouched FROM runs WHERE id = $1",
    [runId],
  );
  const events = await rows(
    `SELECT type, step_id, node_id, attempt, lane, worker, data - 'timerId' - 'dueAt' - 'latenessMs' - 'startKey' AS data,
            (data ? 'timerId') AND (data ? 'dueAt') AND (data ? 'latenessMs') AS timed
     FROM run_events WHERE run_id = $1 ORDER BY id`,
    [runId],
  );
  const outbox = await rows("SELECT topic, payload, available_at <= now() AS due, sent_at IS NULL AS unsent FROM outbox WHERE run_id = $1 AND topic <> 'timer.due' ORDER BY id", [runId]);
  const counts = await rows(
    "SELECT c.node_id, c.to_bucket, c.version_id = r.version_id AS own_version FROM count_changes c JOIN runs r ON r.id = c.run_id WHERE c.run_id = $1 ORDER BY c.node_id, c.to_bucket",
    [runId],
  );
  return {
    run,
    steps: steps.map(({ id, ...s }) => s),
    events: events.map((e) => ({ ...e, step_id: named(e.step_id) })),
    outbox: outbox.map((o) => ({ ...o, payload: { ...o.payload, runId: o.payload.runId === runId, stepId: named(o.payload.stepId) } })),
    counts,
  };
}

/**
 * Runs `write` in a transaction that holds `timerId`'s row (unfired), starts `call` (a firing of that timer: it reads
 * its snapshot, then waits for the row), and commits `write` only once `call` waits: the firing's snapshot is then
 * older than what `write` wrote, as when another writer commits between the statement's start and its locks.
 */
async function behindItsSnapshot<T>(timerId: string, write: (q: (sql: string, p?: unknown[]) => Promise<unknown>) => Promise<void>, call: () => Promise<T>): Promise<T> {
  const holder = await t.sql.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM timers WHERE id = $1 AND fired_at IS NULL FOR UPDATE", [timerId]);
    await write((q, p) => holder.query(q, p));
    const result = call();
    result.catch(() => {});
    for (let i = 0; ; i++) {
      const [w] = await rows(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND wait_event_type = 'Lock' AND query LIKE '%holdfast_timers_fire_walk%'`,
      );
      if (w.n > 0) break;
      if (i > 200) throw new Error("the firing never waited for the timer's row");
      await new Promise((r) => setTimeout(r, 25));
    }
    await holder.query("COMMIT");
    return await result;
  } catch (e) {
    await holder.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    holder.release();
  }
}

describe("timers fired as a set (holdfast_timers_fire_walk)", () => {
  it("writes what the walk writes: the next step ready with its wake-up, or the run's end, with the same timeline and counts", async () => {
    for (const automation of ["step", "end"]) {
      const [a, b, c, d] = [await waiting(automation), await waiting(automation), await waiting(automation), await waiting(automation)];
      if (!a || !b || !c || !d) throw new Error("setup");
      // The steps' count changes (no run) and the runs' ends (node ''): one row each by the walk (a run's end by its
      // trigger), summed into count_tallies by the set.
      await rows("DELETE FROM count_tallies; DELETE FROM count_changes");
      await byWalk([a, b]);
      const changes = "SELECT node_id, from_bucket, to_bucket, count(*)::int AS n FROM count_changes GROUP BY 1, 2, 3 ORDER BY 1, 2, 3";
      const byTheWalk = await rows(changes);
      expect(byTheWalk.length).toBeGreaterThan(0);
      expect(byTheWalk.some((c) => c.node_id === "" && c.to_bucket === "completed")).toBe(automation === "end");
      await rows("DELETE FROM count_changes");
      const { fired, walks } = await bySet(taught(), [c, d]);
      expect(await rows(changes)).toEqual([]);
      expect(await rows("SELECT node_id, from_bucket, to_bucket, n FROM count_tallies ORDER BY 1, 2, 3")).toEqual(byTheWalk);
      expect(fired.map((f) => f.walked)).toEqual([automation === "end" ? "completed" : "running", automation === "end" ? "completed" : "running"]);
      expect(walks.get(c.runId)?.commands).toEqual(["mark_advanced", "take_edge", automation === "end" ? "complete_run" : "schedule_step"]);
      const walked = await written(a.runId);
      expect(walked.events.slice(-2).map((e) => e.type)).toEqual(["timer.fired", automation === "end" ? "run.completed" : "step.scheduled"]);
      for (const twin of [b, c, d]) expect(await written(twin.runId), `${automation}: run ${twin.runId}`).toEqual(walked);
    }
  });

  it("leaves to the walk what the graph alone does not decide, and runs that are cancelling, held, or at their step budget", async () => {
    const cache = taught();
    const branchy = await waiting("branch", { plan: "pro" });
    const [cancelling, held, budget] = [await waiting("step"), await waiting("step"), await waiting("step")];
    const twins = [await waiting("branch", { plan: "pro" }), await waiting("step"), await waiting("step"), await waiting("step")];
    const odd = async (runs: { runId: string }[]) => {
      await rows("UPDATE runs SET cancel_requested_at = now(), cancel_reason = 'test' WHERE id = $1", [runs[1]?.runId]);
      await rows("UPDATE runs SET held_at = now() WHERE id = $1", [runs[2]?.runId]);
      await rows("UPDATE runs SET max_steps = 1 WHERE id = $1", [runs[3]?.runId]);
    };
    await odd([branchy, cancelling, held, budget]);
    await odd(twins);
    const { fired } = await bySet(cache, [branchy, cancelling, held, budget]);
    expect(fired.map((f) => f.walked)).toEqual([null, null, null, null]);
    await byWalk(twins);
    for (const [i, run] of [branchy, cancelling, held, budget].entries()) {
      expect(await written(run.runId)).toEqual(await written((twins[i] as { runId: string }).runId));
    }
    expect((await rows("SELECT status FROM runs WHERE id = ANY($1) ORDER BY status", [[branchy.runId, cancelling.runId, budget.runId]])).map((r) => r.status)).toEqual([
      "cancelled",
      "completed",
      "failed",
    ]);
  });

  it("does not wait for a run another transaction holds: its timer fires and the engine gets a run.wake for it", async () => {
    const run = await waiting("step");
    const holder = await t.sql.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM runs WHERE id = $1 FOR UPDATE", [run.runId]);
      await rows("DELETE FROM count_tallies; DELETE FROM count_changes WHERE run_id IS NULL");
      const { fired } = await bySet(taught(), [run]);
      expect(fired.map((f) => [f.runId, f.walked])).toEqual([[run.runId, null]]);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect(await rows("SELECT topic, payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND topic = 'run.wake'", [run.runId])).toEqual([
      { topic: "run.wake", reason: "timer_fired" },
    ]);
    expect(await rows("SELECT node_id, status, advanced_at IS NULL AS unwalked FROM steps WHERE run_id = $1 ORDER BY created_at", [run.runId])).toEqual([
      { node_id: "w", status: "done", unwalked: true },
    ]);
    // The wait it settled is counted, though the statement did not lock (nor read through the lock) its run.
    expect(
      await rows(`SELECT node_id, from_bucket, to_bucket, n FROM count_tallies
                  UNION ALL SELECT node_id, from_bucket, to_bucket, 1 FROM count_changes WHERE run_id IS NULL`),
    ).toEqual([{ node_id: "w", from_bucket: "now", to_bucket: "passed", n: 1 }]);
  });

  it("counts a wait at its run's version and node as they are when it settles, and applies no plan, when a migration moved both after the statement began", async () => {
    // Each (version, node, bucket)'s runs in the journey counts' pending changes: to minus from.
    const net = async () =>
      new Map(
        (
          await rows(`SELECT version_id || ' ' || node_id || ' ' || b AS k, sum(n)::int AS n FROM (
                        SELECT version_id, node_id, to_bucket AS b, n FROM count_tallies WHERE to_bucket IS NOT NULL
                        UNION ALL SELECT version_id, node_id, from_bucket, -n FROM count_tallies WHERE from_bucket IS NOT NULL
                        UNION ALL SELECT version_id, node_id, to_bucket, 1 FROM count_changes WHERE to_bucket IS NOT NULL AND node_id <> ''
                        UNION ALL SELECT version_id, node_id, from_bucket, -1 FROM count_changes WHERE from_bucket IS NOT NULL AND node_id <> '') m
                      GROUP BY 1`)
        ).map((r) => [r.k as string, r.n as number]),
      );
    const delta = (before: Map<string, number>, after: Map<string, number>) =>
      Object.fromEntries([...after].map(([k, n]) => [k, n - (before.get(k) ?? 0)]).filter(([, d]) => d !== 0));
    // The run held by a migration through the firing (the statement skips it), and held before its snapshot (locked).
    for (const held of [true, false]) {
      const run = await waiting("step");
      const before = await net();
      const holder = await t.sql.connect();
      try {
        await holder.query("BEGIN");
        if (!held) await holder.query("SELECT id FROM timers WHERE id = $1 FOR UPDATE", [run.timerId]);
        await holder.query("UPDATE steps SET node_id = 'w2' WHERE run_id = $1 AND node_id = 'w'", [run.runId]);
        await holder.query("UPDATE runs SET version_id = $2 WHERE id = $1", [run.runId, versions.end]);
        const firing = bySet(taught(), [run]);
        firing.catch(() => {});
        for (let i = 0; ; i++) {
          const [w] = await rows(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND wait_event_type = 'Lock' AND backend_type = 'client backend' AND state = 'active' AND query LIKE '%holdfast_timers_fire_walk%'`,
          );
          if (w.n > 0) break;
          if (i > 200) throw new Error("the firing never waited for the migration");
          await new Promise((r) => setTimeout(r, 25));
        }
        await holder.query("COMMIT");
        const { fired } = await firing;
        // Left to the walk either way: held, the statement read nothing of the run; moved before the lock, the plan it
        // holds is keyed by the wait's old node, so none is applied here.
        expect(fired.map((f) => [f.runId, f.walked])).toEqual([[run.runId, null]]);
      } finally {
        await holder.query("ROLLBACK").catch(() => {});
        holder.release();
      }
      expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1 AND node_id = 'w2'", [run.runId])).toEqual([{ node_id: "w2", status: "done" }]);
      // The migration moved the waiting run from (step, w) to (end, w2); the firing moved it on from there.
      const moved = delta(before, await net());
      expect(moved[`${versions.step} w now`]).toBe(-1);
      expect(moved[`${versions.end} w2 now`] ?? 0).toBe(0);
      expect(moved[`${versions.end} w2 passed`]).toBe(1);
    }
  });

  it("counts nothing of a test run: neither its wait settled here nor the step its walk inserts", async () => {
    const run = await waiting("step");
    await rows("UPDATE runs SET test = true WHERE id = $1", [run.runId]);
    await rows("DELETE FROM count_tallies; DELETE FROM count_changes WHERE run_id IS NULL");
    const { fired } = await bySet(taught(), [run]);
    expect(fired.map((f) => f.runId)).toEqual([run.runId]);
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1 ORDER BY created_at", [run.runId])).toEqual([
      { node_id: "w", status: "done" },
      { node_id: "call", status: "ready" },
    ]);
    expect(await rows("SELECT node_id FROM count_tallies UNION ALL SELECT node_id FROM count_changes WHERE run_id IS NULL")).toEqual([]);
  });

  it("learns the walks of every version with running runs before its first batch; a version met later is learnt from the first batch that meets it, which it walks the usual way", async () => {
    const cache = new GraphCache();
    // Before a spike's first batch, as after a deploy: 100 organisations' versions walked as a set from the start.
    const first = await bySet(cache, [await waiting("end"), await waiting("step"), await waiting("branch")]);
    expect(first.fired.map((f) => `${Object.keys(versions).find((k) => versions[k] === f.versionId)} ${f.walked}`).sort()).toEqual([
      "branch null", // the walk needs the run's data: never a plan
      "end completed",
      "step running",
    ]);
    expect(timerPlansOf(cache).knowsVersion(versions.step as string)).toBe(true);
    // Published after the book learnt (it learns again at most once a minute): its first batch walks it the usual way.
    const later = await publish(t.db, graphs.end as Graph, { automation: "later" });
    const met = await bySet(cache, [await waiting("later")]);
    expect(met.fired.map((f) => f.walked)).toEqual([null]);
    expect([...met.walks.values()].map((w) => w.status)).toEqual(["completed"]);
    const next = await bySet(cache, [await waiting("later"), await waiting("end")]);
    expect(next.fired.map((f) => f.walked)).toEqual(["completed", "completed"]);
    expect(next.fired.map((f) => f.versionId).sort()).toEqual([later.versionId, versions.end].sort());
  });

  it("finds its rows by key, never by reading a whole table, however small the tables look to the planner", async () => {
    // Joined to a batch of fired timers, a scan of all steps by hash can look cheaper than a probe a timer (with 20,000
    // steps and true statistics the planner chose it). On a new connection, in one transaction (rolled back), the
    // statistics of that transaction count the scans the statement made; this database's tables are small and analyzed.
    const admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    await admin.query("ANALYZE steps, runs, timers");
    await admin.end();
    const dues = [await waiting("end"), await waiting("step"), await waiting("branch", { plan: "pro" })];
    const client = await connectAs(t.url, "holdfast_worker");
    try {
      await client.query("BEGIN");
      const fired = await client.query("SELECT * FROM holdfast_timers_fire_walk($1::text[], $2::int[], $3, '{}'::jsonb, true)", [
        dues.map((d) => d.timerId),
        dues.map((d) => d.wake),
        actor,
      ]);
      expect(fired.rows).toHaveLength(3);
      const scans = await client.query("SELECT relname, seq_scan::text, idx_scan > 0 AS probed FROM pg_stat_xact_user_tables WHERE relname IN ('steps', 'runs', 'timers') ORDER BY relname");
      expect(scans.rows).toEqual([
        { relname: "runs", seq_scan: "0", probed: true },
        { relname: "steps", seq_scan: "0", probed: true },
        { relname: "timers", seq_scan: "0", probed: true },
      ]);
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      await client.end();
    }
  });

  it("fires a timer once: not again, not at an old wake number, not before it is due, and nothing when its transaction fails", async () => {
    const cache = taught();
    const [once, old, early, failed] = [await waiting("step"), await waiting("step"), await waiting("step"), await waiting("step")];
    await rows("UPDATE timers SET due_at = now() + interval '1 hour' WHERE id = $1", [early.timerId]);
    const rollback = new Error("the engine died before its commit");
    await expect(inTx(t.db, async (tx) => {
      await fireAndWalkSet(tx, cache, [failed.timerId], [failed.wake], actor);
      throw rollback;
    })).rejects.toBe(rollback);
    expect(await rows("SELECT fired_at FROM timers WHERE id = $1", [failed.timerId])).toEqual([{ fired_at: null }]);
    expect(await rows("SELECT count(*)::int AS n FROM steps WHERE run_id = $1", [failed.runId])).toEqual([{ n: 1 }]);

    const batch = [once, once, { ...old, wake: old.wake + 1 }, early, failed];
    const [a, b] = await Promise.all([bySet(cache, batch), bySet(cache, batch)]);
    // Two engines with the same jobs at once: each timer fired by one of them.
    expect([...a.fired, ...b.fired].map((f) => f.timerId).sort()).toEqual([once.timerId, failed.timerId].sort());
    expect((await bySet(cache, batch)).fired).toEqual([]);
    const runIds = [once, old, early, failed].map((r) => r.runId);
    expect(await rows("SELECT run_id, count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'timer.fired' GROUP BY run_id ORDER BY run_id", [runIds])).toEqual(
      [once.runId, failed.runId].sort().map((run_id) => ({ run_id, n: 1 })),
    );
    expect(await rows("SELECT run_id, count(*)::int AS n FROM steps WHERE run_id = ANY($1) AND node_id = 'call' GROUP BY run_id ORDER BY run_id", [runIds])).toEqual(
      [once.runId, failed.runId].sort().map((run_id) => ({ run_id, n: 1 })),
    );
  });
  it("applies no plan to a run whose wait another writer settled after the statement's snapshot (its timer still unfired)", async () => {
    const cache = taught();
    const [run, other] = [await waiting("end"), await waiting("step")];
    const [wait] = await rows("SELECT id FROM steps WHERE run_id = $1", [run.runId]);
    // The edges counted at each run's version (no run named: a wait is no split; a row each: called without a tally).
    const edgesOf = "SELECT (SELECT count(*)::int FROM count_changes c WHERE c.version_id = r.version_id AND c.to_bucket LIKE 'edge:%') AS edges FROM runs r WHERE r.id = $1";
    const [edgesBefore, otherEdgesBefore] = [(await rows(edgesOf, [run.runId]))[0].edges, (await rows(edgesOf, [other.runId]))[0].edges];
    const [before] = await rows("SELECT seq FROM runs WHERE id = $1", [run.runId]);
    const fired = await behindItsSnapshot(
      run.timerId,
      async (q) => {
        await q("UPDATE steps SET status = 'done', settled_at = now(), advanced_at = now(), updated_at = now() WHERE id = $1", [wait.id]);
      },
      async () =>
        (
          await t.sql.query('SELECT "runId", walked FROM holdfast_timers_fire_walk($1::text[], $2::int[], $3, $4::jsonb, false)', [
            [run.timerId, other.timerId],
            [run.wake, other.wake],
            actor,
            timerPlansOf(cache).sql(),
          ])
        ).rows,
    );
    // Fired, and left to the walk; the other run of the batch moved on here.
    expect(fired.map((f) => [f.runId, f.walked]).sort()).toEqual([[run.runId, null], [other.runId, "running"]].sort());
    expect(await rows("SELECT status, seq FROM runs WHERE id = $1", [run.runId])).toEqual([{ status: "running", seq: before.seq }]);
    expect(await rows("SELECT type FROM run_events WHERE run_id = $1 AND type IN ('run.completed', 'step.scheduled')", [run.runId])).toEqual([]);
    // No edge counted from the wait (the journey counts' edge rows; the step rows' own come from their trigger).
    expect(await rows(edgesOf, [run.runId])).toEqual([{ edges: edgesBefore }]);
    expect(await rows(edgesOf, [other.runId])).toEqual([{ edges: otherEdgesBefore + 1 }]);
    // The wait is as the other writer left it: not settled again by the firing.
    expect(await rows("SELECT status, COALESCE(output ? 'firedAt', false) AS fired FROM steps WHERE run_id = $1", [run.runId])).toEqual([{ status: "done", fired: false }]);
    expect(await rows("SELECT fired_at IS NOT NULL AS fired FROM timers WHERE id = $1", [run.timerId])).toEqual([{ fired: true }]);
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1 ORDER BY created_at", [other.runId])).toEqual([
      { node_id: "w", status: "done" },
      { node_id: "call", status: "ready" },
    ]);
  });

  it("keeps a step already at the next step's (run, node, iteration) and fires the rest of the batch: that run goes to the walk", async () => {
    const cache = taught();
    const [clash, fine] = [await waiting("step"), await waiting("step")];
    await rows("DELETE FROM count_tallies; DELETE FROM count_changes WHERE run_id IS NULL");
    const { fired, walks } = await behindItsSnapshot(
      clash.timerId,
      async (q) => {
        await q(
          `INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, attempt)
           VALUES ('stp_already_there', $1, $2, 'call', 1, 'http_request', 'io', 1, 'ready', 0)`,
          [orgId, clash.runId],
        );
      },
      () => bySet(cache, [clash, fine]),
    );
    expect(fired.map((f) => [f.runId, f.walked]).sort()).toEqual([[clash.runId, null], [fine.runId, "running"]].sort());
    expect(walks.get(clash.runId)?.status).toBe("running");
    expect(await rows("SELECT id, node_id, iteration, status FROM steps WHERE run_id = $1 AND node_id = 'call'", [clash.runId])).toEqual([
      { id: "stp_already_there", node_id: "call", iteration: 1, status: "ready" },
    ]);
    expect(await rows("SELECT status, advanced_at IS NOT NULL AS advanced FROM steps WHERE run_id = $1 AND node_id = 'w'", [clash.runId])).toEqual([
      { status: "done", advanced: true },
    ]);
    expect(await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [clash.runId])).not.toContainEqual({ type: "step.scheduled" });
    expect(await rows("SELECT topic FROM outbox WHERE run_id = $1 AND topic = 'step.ready'", [clash.runId])).toEqual([]);
    // The edge out of the wait is counted once, for `fine` (summed, no run: it leaves no split); the clash's dropped plan
    // and its walk, which kept the step already there, count none.
    expect(
      await rows(`SELECT (SELECT COALESCE(sum(n), 0)::int FROM count_tallies WHERE node_id = 'w' AND to_bucket LIKE 'edge:%') AS summed,
                         (SELECT count(*)::int FROM count_changes WHERE node_id = 'w' AND to_bucket LIKE 'edge:%') AS rows`),
    ).toEqual([{ summed: 1, rows: 0 }]);
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1 ORDER BY created_at", [fine.runId])).toEqual([
      { node_id: "w", status: "done" },
      { node_id: "call", status: "ready" },
    ]);
    expect(await rows("SELECT type FROM run_events WHERE run_id = $1 AND type = 'step.scheduled'", [fine.runId])).toEqual([{ type: "step.scheduled" }]);
  });
});
