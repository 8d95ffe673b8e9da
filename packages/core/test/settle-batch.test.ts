import { connectAs, createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceRun } from "../src/run/engine/advance";
import { effectKinds } from "../src/versions/kinds/registry";
import { createLogger } from "../src/base/log";
import type { ClaimedStep } from "../src/store/sql/steps";
import { stepsClaimIfLeaseFree } from "../src/store/sql/steps-claim";
import { type RunSettleRequest, stepsSettleManyIfToken } from "../src/store/sql/steps-settle";
import { startRun } from "../src/run/start/start-run";
import { ReadyDemand } from "../src/run/steps/ready-demand";
import { SettleBatcher } from "../src/run/steps/settle-batch";
import { Slots } from "../src/run/steps/slots";
import { GraphCache } from "../src/versions/graph-cache";
import { walkOnAfterSettle } from "../src/run/steps/walk-on";
import { stepReady } from "../src/run/apply/rows";
import { stepsSettleIfToken } from "../src/store/sql/steps-settle";

// Group commit of settles: many steps of many runs in one statement and one commit, each fenced by its own attempt.

let t: TestDatabase;
const graphs = new GraphCache();
let n = 0;
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  // The steps are claimed and settled by hand here: the call's address is never used.
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/", 2, { maxAttempts: 3 }));
  createLogger("test", "silent");
});
afterAll(async () => {
  await t?.drop();
});

/** A run started and walked, its first step claimed by `worker`. */
async function claimedStep(worker = "w1"): Promise<ClaimedStep> {
  const key = `evt_${++n}`;
  const headers = { "webhook-id": key, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers, via: "test", auth: { kind: "operator" } });
  const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
  const step = await stepsClaimIfLeaseFree(t.sql, id, worker, 30_000, effectKinds());
  if (!step) throw new Error("not claimed");
  return step;
}

/** A second worker takes the step over after its lease lapsed: `step`'s attempt is now stale. */
async function takeOver(step: ClaimedStep): Promise<ClaimedStep> {
  await t.sql.query("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [step.id]);
  const newer = await stepsClaimIfLeaseFree(t.sql, step.id, "w2", 30_000, effectKinds());
  if (!newer) throw new Error("not taken over");
  return newer;
}

const done = (step: ClaimedStep, output: unknown): RunSettleRequest => ({ step, worker: "w1", status: "done", output });
/**
 * When each step was last written, by its transaction's clock (now() is the transaction's start): one value for steps
 * settled in one commit. (Not xmin: each item of a batch writes in its own subtransaction, with its own xid.)
 */
const writers = async (ids: string[]) =>
  (await rows("SELECT id, (extract(epoch FROM updated_at) * 1e6)::bigint::text AS x FROM steps WHERE id = ANY($1) ORDER BY id", [ids])).map((r) => r.x as string);

describe("settles of many runs in one statement", () => {
  it("commits every current attempt in one transaction; a stale attempt changes nothing and does not fail its neighbours", async () => {
    const [a, b, c, d] = await Promise.all([claimedStep(), claimedStep(), claimedStep(), claimedStep()]);
    if (!a || !b || !c || !d) throw new Error("claims");
    await takeOver(b);
    const cNewer = await takeOver(c);
    const staleWithPlan: RunSettleRequest = {
      ...done(c, { from: "stale" }),
      // A stale attempt whose walk still matches the run's seq: the run update applies, then the step's fence refuses
      // it (HF003) and that item alone is undone.
      advance: {
        runSeq: c.runSeq,
        rows: { steps: [], events: [{ orgId: c.orgId, runId: c.runId, type: "run.completed" }], outbox: [], finish: { status: "completed", error: null }, advanced: [], claim: null },
      },
    };
    const { results } = await stepsSettleManyIfToken(t.sql, [done(a, { from: "a" }), done(b, { from: "b" }), staleWithPlan, done(d, { from: "d" })]);
    expect(results.map((r) => r.changed)).toEqual([true, false, false, true]);
    expect(await rows("SELECT id, status, output, attempt FROM steps WHERE id = ANY($1) ORDER BY id", [[a.id, b.id, c.id, d.id]])).toEqual(
      [
        { id: a.id, status: "done", output: { from: "a" }, attempt: 1 },
        { id: b.id, status: "running", output: null, attempt: 2 },
        { id: c.id, status: "running", output: null, attempt: 2 },
        { id: d.id, status: "done", output: { from: "d" }, attempt: 1 },
      ].sort((x, y) => (x.id < y.id ? -1 : 1)),
    );
    // The stale plan's run update was undone with its item: c's run is running, its seq as before.
    expect(await rows("SELECT status, seq::text AS seq FROM runs WHERE id = $1", [c.runId])).toEqual([{ status: "running", seq: String(c.runSeq) }]);
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [c.runId])).toEqual([{ n: 0 }]);
    const [xa, xd] = await writers([a.id, d.id]);
    expect(xa).toBe(xd);
    // The newer attempt still settles afterwards.
    const [later] = (await stepsSettleManyIfToken(t.sql, [{ ...done(cNewer, { from: "c2" }), worker: "w2" }])).results;
    expect(later?.changed).toBe(true);
  });

  it("answers in the requests' order whatever order the runs lock in", async () => {
    const steps = await Promise.all(Array.from({ length: 6 }, () => claimedStep()));
    const { results } = await stepsSettleManyIfToken(t.sql, steps.map((s, i) => done(s, { i })));
    expect(results.every((r) => r.changed)).toBe(true);
    for (const [i, s] of steps.entries()) expect(await rows("SELECT output FROM steps WHERE id = $1", [s.id])).toEqual([{ output: { i } }]);
  });
});

describe("walked settles as sets (holdfast_step_settle_set)", () => {
  /** A first step claimed and its settle with the walk its worker makes: the next step claimed for it (local dispatch). */
  async function walked(i: number, last = false): Promise<RunSettleRequest & { step: ClaimedStep }> {
    let step = await claimedStep();
    if (last) {
      // The run's second (last) step: its walk ends the run.
      const [first] = (await stepsSettleManyIfToken(t.sql, [await walked(i)])).results;
      if (!first?.changed || !first.claimed) throw new Error("no chained step");
      step = first.claimed;
    }
    const graph = await graphs.get(t.db, step.orgId, step.versionId);
    const own = { status: "done" as const, output: { i }, error: null };
    const advance = walkOnAfterSettle(graph, step, own, "w1", { lane: "io", leaseMs: 30_000 });
    if (!advance) throw new Error("no walk");
    return { step, worker: "w1", status: "done", output: own.output, advance, ...(step.effect?.claimed ? { effect: { orgId: step.orgId, key: `${step.runId}/${step.nodeId}/${step.iteration}`, owner: `${step.id}:${step.attempt}`, result: { ok: i }, error: null } } : {}) };
  }
  /** Names a run's ids by position (ids differ from run to run): the run, its steps in order, its start key. */
  async function naming(runId: string) {
    const ids = (await rows("SELECT id FROM steps WHERE run_id = $1 ORDER BY created_at, id", [runId])).map((s) => s.id as string);
    const name = (text: string) =>
      text
        .replaceAll(runId, "RUN")
        .replace(/stp_[0-9A-Za-z_-]+/g, (id) => `STEP${ids.indexOf(id)}`)
        .replace(/:wh:evt_\d+/g, ":wh:EVT");
    return (v: unknown) => JSON.parse(name(JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x))));
  }
  /** What a settle wrote, named by position. */
  async function written(runIds: string[]) {
    const out = [];
    for (const runId of runIds) {
      const named = await naming(runId);
      const steps = await rows(
        `SELECT node_id, iteration, status, attempt, owner, output, error, lease_until IS NOT NULL AS leased, advanced_at IS NOT NULL AS advanced,
                settled_at IS NOT NULL AS settled, available_at <= now() AS available, deferrals FROM steps WHERE run_id = $1 ORDER BY created_at, id`,
        [runId],
      );
      out.push({
        run: await rows("SELECT status, seq::int AS seq, error, finished_at IS NOT NULL AS finished FROM runs WHERE id = $1", [runId]),
        steps,
        events: named(await rows("SELECT step_id, node_id, attempt, type, lane, worker, data FROM run_events WHERE run_id = $1 ORDER BY id", [runId])),
        outbox: named(await rows("SELECT topic, payload, sent_at IS NULL AS unsent FROM outbox WHERE run_id = $1 ORDER BY id", [runId])),
        effects: named(await rows(`SELECT key, step_id, kind, status, owner, result, error, attempts, lease_until IS NOT NULL AS leased, settled_at IS NOT NULL AS settled
                  FROM effects WHERE run_id = $1 ORDER BY key`, [runId])),
      });
    }
    // The journey counts' moves, summed (a batch writes them summed in count_tallies, a settle alone a row each).
    const moves = await rows(
      `SELECT node_id, from_bucket, to_bucket, sum(n)::int AS n FROM (
         SELECT node_id, from_bucket, to_bucket, n FROM count_tallies UNION ALL SELECT node_id, from_bucket, to_bucket, 1 FROM count_changes) m
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    return { runs: out, moves };
  }
  const xmins = async (ids: string[]) => new Set((await rows("SELECT xmin::text AS x FROM steps WHERE id = ANY($1)", [ids])).map((r) => r.x));

  it("writes, for chains that go on and chains that end, exactly the rows each settled alone writes, in one subtransaction", async () => {
    const make = async () => [await walked(1), await walked(2), await walked(3, true), await walked(4, true)];
    const alone = await make();
    const together = await make();
    await t.sql.query("DELETE FROM count_tallies; DELETE FROM count_changes");
    const answeredAlone = [];
    for (const r of alone) answeredAlone.push(await stepsSettleIfToken(t.sql, r));
    const wroteAlone = await written(alone.map((r) => r.step.runId));
    await t.sql.query("DELETE FROM count_tallies; DELETE FROM count_changes");
    const { results } = await stepsSettleManyIfToken(t.sql, together);
    expect(results.map((r) => [r.changed, r.changed && r.advanced, r.changed && r.claimed !== null])).toEqual([
      [true, true, true],
      [true, true, true],
      [true, true, false],
      [true, true, false],
    ]);
    expect(await written(together.map((r) => r.step.runId))).toEqual(wroteAlone);
    // The answers too: a chained step comes back claimed as a settle alone returns it (its effect key taken, the run
    // as its walk sees it: version, input, seq, steps), each run's own input.
    const answers = async (list: typeof results, requests: typeof alone) =>
      Promise.all(
        list.map(async (a, k) => {
          const runId = requests[k]?.step.runId as string;
          const [{ input }] = await rows("SELECT input FROM runs WHERE id = $1", [runId]);
          if (a.changed && a.claimed) expect(a.claimed.input).toEqual(input);
          return (await naming(runId))(a.changed && a.claimed ? { ...a, claimed: { ...a.claimed, input: "INPUT" } } : a);
        }),
      );
    expect(await answers(results, together)).toEqual(await answers(answeredAlone, alone));
    // Settled as one set: every step of the batch written by one (sub)transaction; alone, each by its own.
    expect((await xmins(together.map((r) => r.step.id))).size).toBe(1);
  });

  it("finds its rows by key, never by reading a whole table, however small the tables look to the planner", async () => {
    // The set's statements join the batch's items to steps, effects and runs. On tables that are (or, by their
    // statistics, seem) small, reading the whole table and joining by hash looks cheaper than a probe a row, and the
    // connection keeps a plan made so while the table grows: every batch then read every row (issue 47: a fresh
    // database's race). This database's tables hold a few dozen rows, analyzed. On a new connection (no plan kept from
    // before, no scan counted yet), in one transaction, the statistics of that transaction count the scans it made.
    const admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    await admin.query("ANALYZE steps, effects, runs");
    await admin.end();
    const batch = [await walked(21), await walked(22), await walked(23, true)];
    const client = await connectAs(t.url, "holdfast_worker");
    try {
      await client.query("BEGIN");
      const { results } = await stepsSettleManyIfToken(client, batch);
      expect(results.map((r) => r.changed)).toEqual([true, true, true]);
      const scans = await client.query<{ relname: string; seq_scan: string; probed: boolean }>(
        "SELECT relname, seq_scan::text, idx_scan > 0 AS probed FROM pg_stat_xact_user_tables WHERE relname IN ('steps', 'effects', 'runs') ORDER BY relname",
      );
      await client.query("COMMIT");
      expect(scans.rows).toEqual([
        { relname: "effects", seq_scan: "0", probed: true },
        { relname: "runs", seq_scan: "0", probed: true },
        { relname: "steps", seq_scan: "0", probed: true },
      ]);
    } finally {
      await client.end();
    }
    expect((await xmins(batch.map((r) => r.step.id))).size).toBe(1);
  });

  it("settles every item one by one when one of them cannot go with the others, and a mixed batch both ways", async () => {
    // A walked settle whose attempt was taken over: the set's fence check fails, nothing of the set is kept, and the
    // items go one by one (the stale one changes nothing, its run's seq as before; its neighbour settles).
    const stale = await walked(7);
    await takeOver(stale.step);
    const { results } = await stepsSettleManyIfToken(t.sql, [await walked(8), stale]);
    expect(results.map((r) => r.changed)).toEqual([true, false]);
    expect(await rows("SELECT status, seq::text AS seq FROM runs WHERE id = $1", [stale.step.runId])).toEqual([{ status: "running", seq: String(stale.step.runSeq) }]);
    // A walked settle whose run is being cancelled: its walk does not apply (alone: the step settles, the engine is
    // woken to finish the cancellation), so the set is not kept and both go one by one.
    const going = await walked(11);
    const cancelling = await walked(12);
    await t.sql.query("UPDATE runs SET cancel_requested_at = now() WHERE id = $1", [cancelling.step.runId]);
    const both = (await stepsSettleManyIfToken(t.sql, [going, cancelling])).results;
    expect(both.map((r) => [r.changed, r.changed && r.advanced])).toEqual([
      [true, true],
      [true, false],
    ]);
    expect(await rows("SELECT payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND topic = 'run.wake'", [cancelling.step.runId])).toEqual([{ reason: "step_settled" }]);
    expect((await xmins([going.step.id, cancelling.step.id])).size).toBe(2);
    // An effect answer whose owner is not the effect's (taken over by a newer attempt): alone, refused (HF002); here the
    // set is not kept, and one by one that item changes nothing while its neighbour settles.
    const fine = await walked(13);
    const takenOver = await walked(14);
    const foreignOwner = { ...takenOver, effect: { ...(takenOver.effect as NonNullable<RunSettleRequest["effect"]>), owner: "stp_other:9" } };
    expect((await stepsSettleManyIfToken(t.sql, [fine, foreignOwner])).results.map((r) => r.changed)).toEqual([true, false]);
    // A walk whose rows name another run: never written by the set (it is refused as it would be alone, HF005, and
    // nothing of the batch commits: its caller settles each alone and the engine walks that run).
    const own = await walked(15);
    const other = await walked(16);
    const foreign = await walked(17);
    const advance = foreign.advance as NonNullable<RunSettleRequest["advance"]>;
    const stray = { orgId: foreign.step.orgId, runId: other.step.runId, type: "run.completed" };
    const naming = { ...foreign, advance: { ...advance, rows: { ...advance.rows, events: [...advance.rows.events, stray] } } };
    const otherEvents = async () => (await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.step.runId]))[0]?.n;
    const before = await otherEvents();
    await expect(stepsSettleManyIfToken(t.sql, [own, naming])).rejects.toMatchObject({ code: "HF005" });
    expect((await rows("SELECT status FROM steps WHERE id = ANY($1)", [[own.step.id, foreign.step.id]])).map((r) => r.status)).toEqual(["running", "running"]);
    expect(await otherEvents()).toBe(before);
    // A retry (back to ready) beside walked settles. The batch goes in its runs' order (run ids grow with time): the
    // walked ones before the retry as a set, the retry alone after them; a walked one after the retry alone too, so the
    // set's runs are always locked before the others' and two batches lock runs in one order.
    const retrying = async () => {
      const step = await claimedStep();
      return { step, worker: "w1", status: "ready" as const, delayMs: 1000, error: { code: "http_503" }, retry: stepReady(step, 1000) };
    };
    const early = await retrying();
    const a = await walked(9);
    const b = await walked(10);
    const late = await retrying();
    const c = await walked(11);
    const mixed = await stepsSettleManyIfToken(t.sql, [c, late, b, early, a]);
    expect(mixed.results.map((r) => r.changed)).toEqual([true, true, true, true, true]);
    expect(await rows("SELECT status FROM steps WHERE id = ANY($1)", [[early.step.id, late.step.id]])).toEqual([{ status: "ready" }, { status: "ready" }]);
    // early sorts first: nothing before it is walked, so every item goes alone.
    expect((await xmins([a.step.id, b.step.id, c.step.id, early.step.id, late.step.id])).size).toBe(5);
    const [d, e] = [await walked(12), await walked(13)];
    const last = await retrying();
    const f = await walked(14);
    await stepsSettleManyIfToken(t.sql, [f, last, e, d]);
    // d and e (before the retry) as one set; the retry and f (after it) each alone.
    expect((await xmins([d.step.id, e.step.id])).size).toBe(1);
    expect((await xmins([d.step.id, last.step.id, f.step.id])).size).toBe(3);
  });
});

describe("a batch's journey counts", () => {
  const counted = async () => ({
    tallies: await rows("SELECT node_id, from_bucket, to_bucket, n FROM count_tallies ORDER BY node_id, from_bucket, to_bucket"),
    stepRows: (await rows("SELECT count(*)::int AS n FROM count_changes WHERE run_id IS NULL"))[0].n as number,
  });

  it("are summed: one count_tallies row per node and move, none for a stale attempt", async () => {
    const steps = await Promise.all(Array.from({ length: 5 }, () => claimedStep()));
    await takeOver(steps[4] as ClaimedStep);
    await t.sql.query("DELETE FROM count_tallies; DELETE FROM count_changes");
    const [{ node_id: node }] = await rows("SELECT node_id FROM steps WHERE id = $1", [steps[0]?.id]);
    const { results } = await stepsSettleManyIfToken(t.sql, steps.map((s, i) => done(s, { i })));
    expect(results.map((r) => r.changed)).toEqual([true, true, true, true, false]);
    // Four runs moved from 'now' to 'passed' at the first step: one row, n = 4; no row of a step's own.
    expect(await counted()).toEqual({ tallies: [{ node_id: node, from_bucket: "now", to_bucket: "passed", n: 4 }], stepRows: 0 });
    // A settle alone (a batch's fallback, a person's approval) still writes one change a row.
    await t.sql.query("DELETE FROM count_tallies");
    await t.sql.query("UPDATE steps SET status = 'done', owner = NULL, lease_until = NULL WHERE id = $1 AND status = 'running'", [steps[4]?.id]);
    expect(await counted()).toEqual({ tallies: [], stepRows: 1 });
  });

  it("are collected in the transaction: a rolled-back subtransaction's changes go with it, and the flush ends the collecting", async () => {
    // More changes than one chunk of the collected list holds (about 4 kB: 40 of these), and a rollback across a chunk's end.
    const steps: ClaimedStep[] = [];
    for (let i = 0; i < 75; i++) steps.push(await claimedStep());
    const [a, kept, undone] = [steps[0] as ClaimedStep, steps.slice(1, 31), steps.slice(31)];
    await t.sql.query("DELETE FROM count_tallies; DELETE FROM count_changes");
    const client = await t.sql.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT holdfast_count_tally_start()");
      await client.query("UPDATE steps SET status = 'done', owner = NULL, lease_until = NULL WHERE id = ANY($1)", [kept.map((s) => s.id)]);
      await client.query("SAVEPOINT item");
      await client.query("UPDATE steps SET status = 'failed', owner = NULL, lease_until = NULL WHERE id = ANY($1)", [undone.map((s) => s.id)]);
      await client.query("ROLLBACK TO SAVEPOINT item");
      await client.query("UPDATE steps SET status = 'done', owner = NULL, lease_until = NULL WHERE id = ANY($1)", [undone.slice(0, 10).map((s) => s.id)]);
      await client.query("SELECT holdfast_count_tally_flush()");
      expect((await client.query("SELECT current_setting('holdfast.count_tally') AS state")).rows).toEqual([{ state: "" }]);
      // After the flush a change is a row of its own again.
      await client.query("UPDATE steps SET status = 'failed', owner = NULL, lease_until = NULL WHERE id = $1", [a.id]);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    const [{ node_id: node }] = await rows("SELECT node_id FROM steps WHERE id = $1", [a.id]);
    expect(await counted()).toEqual({ tallies: [{ node_id: node, from_bucket: "now", to_bucket: "passed", n: 40 }], stepRows: 1 });
  });
});

describe("a batch takes first steps for the slots it frees", () => {
  const take = { lane: "io", worker: "w1", leaseMs: 30_000, effectKinds: effectKinds() };
  /** A run started: its first step ready and its step.ready row due in the outbox, as a start leaves them. */
  async function started(): Promise<{ runId: string; stepId: string }> {
    const headers = { "webhook-id": `evt_${++n}`, "webhook-timestamp": null, "webhook-signature": null };
    const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers, via: "test", auth: { kind: "operator" } });
    const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
    return { runId, stepId: id };
  }

  it("one step to each settle that asked and freed its slot, claimed in the batch's commit; not to a stale one or one that did not ask", async () => {
    const [a, b, c, d] = await Promise.all([claimedStep(), claimedStep(), claimedStep(), claimedStep()]);
    if (!a || !b || !c || !d) throw new Error("claims");
    await takeOver(d);
    await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const waiting = [await started(), await started(), await started()];
    const { results, looked, taken, more } = await stepsSettleManyIfToken(
      t.sql,
      [
        { ...done(a, { from: "a" }), take: true },
        { ...done(b, { from: "b" }), take: true },
        done(c, { from: "c" }),
        { ...done(d, { from: "stale" }), take: true },
      ],
      take,
    );
    expect(results.map((r) => [r.changed, r.taken !== undefined])).toEqual([
      [true, true],
      [true, true],
      [true, false],
      [false, false],
    ]);
    // The two oldest due rows, their steps claimed by this worker (attempt 1) and their rows marked sent; the third
    // is left, and the answer says so.
    expect({ looked, taken, more }).toEqual({ looked: true, taken: 2, more: true });
    const got = results.flatMap((r) => (r.taken ? [r.taken] : []));
    expect(got.map((s) => s.id).sort()).toEqual(waiting.slice(0, 2).map((w) => w.stepId).sort());
    expect(got.map((s) => [s.attempt, s.lane, s.runSteps.length])).toEqual([
      [1, "io", 1],
      [1, "io", 1],
    ]);
    expect(await rows("SELECT DISTINCT status, owner FROM steps WHERE id = ANY($1)", [got.map((s) => s.id)])).toEqual([{ status: "running", owner: "w1" }]);
    expect(await rows("SELECT payload->>'stepId' AS step FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL")).toEqual([{ step: waiting[2]?.stepId }]);
    // One transaction: the settles and the claims were written at one instant.
    expect(new Set(await writers([a.id, b.id, c.id, ...got.map((s) => s.id)])).size).toBe(1);
  });

  it("takes nothing when no settle freed a slot, and says it did not look", async () => {
    const [a] = await Promise.all([claimedStep()]);
    if (!a) throw new Error("claims");
    await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const waiting = await started();
    const answer = await stepsSettleManyIfToken(t.sql, [done(a, {})], take);
    expect({ looked: answer.looked, taken: answer.taken }).toEqual({ looked: false, taken: 0 });
    expect(await rows("SELECT status FROM steps WHERE id = $1", [waiting.stepId])).toEqual([{ status: "ready" }]);
  });

  it("leaves a first step whose run another transaction holds for another take, without waiting for that run", async () => {
    const [a] = await Promise.all([claimedStep()]);
    if (!a) throw new Error("claims");
    await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const held = await started();
    const free = await started();
    // Another transaction holds the first run (as a batch settling one of its steps, or the engine walking it, would).
    const other = await t.sql.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [held.runId]);
      const b = await claimedStep();
      await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL AND payload->>'stepId' NOT IN ($1, $2)", [held.stepId, free.stepId]);
      const answer = await Promise.race([
        stepsSettleManyIfToken(t.sql, [{ ...done(a, {}), take: true }, { ...done(b, {}), take: true }], take),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the take waited for the held run")), 5_000)),
      ]);
      // The free run's step was taken; the held run's row is left unsent, and the answer says a look is still owed.
      expect({ looked: answer.looked, taken: answer.taken, more: answer.more }).toEqual({ looked: true, taken: 1, more: true });
      expect(answer.results.flatMap((r) => (r.taken ? [r.taken.id] : []))).toEqual([free.stepId]);
      expect(await rows("SELECT payload->>'stepId' AS step FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL")).toEqual([{ step: held.stepId }]);
    } finally {
      await other.query("ROLLBACK");
      other.release();
    }
  });

  it("a failed batch takes nothing: each settle goes alone and the first steps stay for another take", async () => {
    const [first, a, b] = await Promise.all([claimedStep(), claimedStep(), claimedStep()]);
    if (!first || !a || !b) throw new Error("claims");
    await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const waiting = await started();
    const slots = new Slots(4);
    const demand = new ReadyDemand(slots);
    demand.notified();
    const fallbacks: number[] = [];
    const batcher = new SettleBatcher(t.sql, { max: 32, parallel: 1, take: { params: () => take, demand }, onFallback: (_e, n) => fallbacks.push(n) });
    // A retry without its step.ready row is refused by the settle function with an error (not a stale attempt).
    const bad: RunSettleRequest = { step: b, worker: "w1", status: "ready", delayMs: 10, take: true };
    // The first goes alone (and asks nothing); the other two wait for it and go together, and that batch fails. Before
    // it is sent, a listener's take answers the look (as one that skipped the rows the batch's take locked would).
    void Promise.resolve().then(() => demand.answered(demand.mark(), false));
    const outcomes = await Promise.allSettled([batcher.settle(done(first, {})), batcher.settle({ ...done(a, {}), take: true }), batcher.settle(bad)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(batcher.stats).toEqual({ settles: 3, statements: 2, fallbacks: 1, taken: 0 });
    expect(fallbacks).toEqual([1]);
    expect(await rows("SELECT status FROM steps WHERE id = $1", [waiting.stepId])).toEqual([{ status: "ready" }]);
    expect(demand.isOwed).toBe(true);
  });
});

describe("the settle batcher (group commit)", () => {
  it("sends a lone settle at once, and the settles that arrive while a batch is in flight together in one commit", async () => {
    const steps = await Promise.all(Array.from({ length: 5 }, () => claimedStep()));
    const batcher = new SettleBatcher(t.sql, { max: 32, parallel: 1 });
    const results = await Promise.all(steps.map((s, i) => batcher.settle(done(s, { i }))));
    expect(results.every((r) => r.changed)).toBe(true);
    expect(batcher.stats).toEqual({ settles: 5, statements: 2, fallbacks: 0, taken: 0 });
    const x = await writers(steps.map((s) => s.id));
    expect(new Set(x).size).toBe(2);
  });

  it("opens a second batch beside the one in flight only for a crowd (crowd settles waiting); fewer wait and go together", async () => {
    const few = await Promise.all(Array.from({ length: 3 }, () => claimedStep()));
    const waitForCrowd = new SettleBatcher(t.sql, { max: 32, parallel: 2, crowd: 4 });
    await Promise.all(few.map((s) => waitForCrowd.settle(done(s, {}))));
    // 1 alone; the other 2 (fewer than 4) waited for it and went together: 2 statements, not 3.
    expect(waitForCrowd.stats).toEqual({ settles: 3, statements: 2, fallbacks: 0, taken: 0 });
    const many = await Promise.all(Array.from({ length: 6 }, () => claimedStep()));
    const crowded = new SettleBatcher(t.sql, { max: 32, parallel: 2, crowd: 4 });
    await Promise.all(many.map((s) => crowded.settle(done(s, {}))));
    // 1 alone; when the fourth is waiting (a crowd), those four go as a second batch beside the first; the last waits
    // for one of them to return.
    expect(crowded.stats).toEqual({ settles: 6, statements: 3, fallbacks: 0, taken: 0 });
    const eager = new SettleBatcher(t.sql, { max: 32, parallel: 2, crowd: 1 });
    await Promise.all((await Promise.all(Array.from({ length: 3 }, () => claimedStep()))).map((s) => eager.settle(done(s, {}))));
    // crowd 1 (the behaviour before): the second settle opens the second batch at once, alone; the third waits.
    expect(eager.stats).toEqual({ settles: 3, statements: 3, fallbacks: 0, taken: 0 });
  });

  it("sends the settles that waited as soon as the batch in flight has its answer, before that batch's settles resolve", async () => {
    const [first, second, third] = await Promise.all(Array.from({ length: 3 }, () => claimedStep()));
    if (!first || !second || !third) throw new Error("claims");
    const batcher = new SettleBatcher(t.sql, { max: 32, parallel: 1 });
    // The first goes alone; the other two wait for it. When the first's caller hears its answer, the two are on their
    // way already (the batcher's place went back to them when the first's commit answered), not only queued.
    const seen: number[] = [];
    const all = [
      batcher.settle(done(first, {})).then(() => seen.push(batcher.stats.statements)),
      batcher.settle(done(second, {})),
      batcher.settle(done(third, {})).then(() => seen.push(batcher.stats.statements)),
    ];
    await Promise.all(all);
    expect(seen).toEqual([2, 2]);
    expect(batcher.stats).toEqual({ settles: 3, statements: 2, fallbacks: 0, taken: 0 });
  });

  it("caps a batch at max", async () => {
    const steps = await Promise.all(Array.from({ length: 7 }, () => claimedStep()));
    const batcher = new SettleBatcher(t.sql, { max: 3, parallel: 1 });
    await Promise.all(steps.map((s) => batcher.settle(done(s, {}))));
    // 1 alone, then 3 and 3.
    expect(batcher.stats).toEqual({ settles: 7, statements: 3, fallbacks: 0, taken: 0 });
  });

  it("when a batch fails as a whole, settles each alone: the good ones commit, the bad one fails by itself", async () => {
    const [first, ...rest] = await Promise.all(Array.from({ length: 4 }, () => claimedStep()));
    if (!first) throw new Error("claims");
    const batcher = new SettleBatcher(t.sql, { max: 32, parallel: 1 });
    // A retry without its step.ready row is refused by the settle function with an error (not a stale attempt).
    const bad: RunSettleRequest = { step: rest[1] as ClaimedStep, worker: "w1", status: "ready", delayMs: 10 };
    const settled = [batcher.settle(done(first, {})), batcher.settle(done(rest[0] as ClaimedStep, { ok: 1 })), batcher.settle(bad), batcher.settle(done(rest[2] as ClaimedStep, { ok: 2 }))];
    const outcomes = await Promise.allSettled(settled);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(batcher.stats.fallbacks).toBe(1);
    expect(await rows("SELECT status FROM steps WHERE id = ANY($1)", [[rest[0]?.id, rest[2]?.id]])).toEqual([{ status: "done" }, { status: "done" }]);
    expect(await rows("SELECT status, attempt FROM steps WHERE id = $1", [rest[1]?.id])).toEqual([{ status: "running", attempt: 1 }]);
  });
});
