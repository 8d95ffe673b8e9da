import {
  type HttpTarget,
  publish,
  startHttpTarget,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  waitFor,
} from "@holdfast/testkit";
import { inTx, Prisma, type Tx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goalMet } from "../src/people/goals/goal-met";
import { journeyCounts, type JourneyCounts } from "../src/run/counts/journey-counts";
import { runsAtCount } from "../src/run/counts/runs-at-count";
import { applyMigration } from "../src/run/run-migrations/migrate";
import { requestCancel } from "../src/run/runs/cancel";
import { startRun } from "../src/run/start/start-run";
import { countFold } from "../src/run/sweeper/services/count-fold";
import type { SweepContext } from "../src/run/sweeper/service";
import { automationsSetGoal } from "../src/store/sql/automations";
import { countChangesFold } from "../src/store/sql/count-changes";
import { type Graph, parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";
import { type EdgeTrace, type Query, scanCounts, scanEdges } from "./journey-counts-scan";

/**
 * Journey counts against the database's own counts, with the real relay, engine, sweeper (folding as it goes) and a
 * lane worker: runs through a branch and a split, retries (every call fails once), a step that fails for good, a
 * wait, a parked step, cancelled runs and test runs (never counted); read while the workers settle, in the same
 * snapshot as a scan; after folds, two at once and one that dies; and across a version migration.
 */

let d: TestDeployment;
let ok: HttpTarget;
let down: HttpTarget;
let ids: Awaited<ReturnType<typeof publish>>;
let ctx: SweepContext;
const graphs = new GraphCache();

const graphOf = (okUrl: string, downUrl: string, hold = "hold"): Graph =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "route", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
      { id: "call_a", kind: "http_request", config: { url: okUrl, method: "POST", maxAttempts: 3 } },
      { id: "pick", kind: "split", config: { paths: { A: 50, B: 50 } } },
      { id: hold, kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } },
      { id: "end_a", kind: "end" },
      { id: "call_b", kind: "http_request", config: { url: downUrl, method: "POST", maxAttempts: 2 } },
      { id: "end_b", kind: "end" },
    ],
    edges: [
      { from: "t", to: "route" },
      { from: "route", to: "call_a", label: "true" },
      { from: "route", to: "call_b", label: "false" },
      { from: "call_a", to: "pick" },
      { from: "pick", to: "end_a", label: "A" },
      { from: "pick", to: hold, label: "B" },
      { from: hold, to: "end_a" },
      { from: "call_b", to: "end_b" },
    ],
  });

/** Where each edge leaves a trace of its own in steps or the timeline (the scan's side, independent of the walk). */
const traces = (hold = "hold"): EdgeTrace[] => {
  const event = (type: string, node: string, where = "true") =>
    `SELECT run_id FROM run_events WHERE type = '${type}' AND node_id = '${node}' AND ${where}`;
  return [
    { from: "t", label: null, to: "route", sql: event("branch.evaluated", "route") },
    { from: "route", label: "true", to: "call_a", sql: event("branch.evaluated", "route", "(data->>'result')::boolean") },
    { from: "route", label: "false", to: "call_b", sql: event("branch.evaluated", "route", "NOT (data->>'result')::boolean") },
    { from: "call_a", label: null, to: "pick", sql: event("split.chosen", "pick") },
    { from: "pick", label: "A", to: "end_a", sql: event("split.chosen", "pick", "data->>'path' = 'A'") },
    { from: "pick", label: "B", to: hold, sql: event("split.chosen", "pick", "data->>'path' = 'B'") },
    { from: "call_b", label: null, to: "end_b", sql: event("run.completed", "end_b") },
  ];
};

beforeAll(async () => {
  d = await startTestDeployment();
  ok = d.closeAtStop(await startHttpTarget());
  down = d.closeAtStop(await startHttpTarget());
  ok.behave({ failFirst: 1, failStatus: 503 }); // every call is retried once
  down.behave({ failFirst: 1_000_000, failStatus: 503 }); // fails for good after its attempts
  ids = await publish(d.t.db, graphOf(ok.url, down.url), { automation: "journey" });
  ctx = { db: d.t.db, actor: "test", graphs, systemMail: null };
});
afterAll(async () => d?.stop());

/** journeyCounts and the scan in one REPEATABLE READ snapshot. */
async function inSnapshot<T>(fn: (tx: Tx, q: Query) => Promise<T>): Promise<T> {
  return d.t.db.$transaction((tx) => fn(tx, (sql, params) => tx.$queryRawUnsafe(sql, ...params)), {
    isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
  });
}

/** The counts as the canvas shows them, in the scan's shape. */
function shapeOf(c: JourneyCounts) {
  const nodes: Record<string, { now: number; held: number; passed: number; failed: number; cancelled: number; converted: number }> = {};
  for (const [id, { email: _email, ...n }] of Object.entries(c.nodes)) {
    if (Object.values(n).some((x) => x !== 0)) nodes[id] = n;
  }
  const edges = Object.fromEntries(c.edges.filter((e) => e.n !== 0).map((e) => [`${e.from}|${e.label ?? ""}|${e.to}`, e.n]));
  return { nodes, edges, runs: c.runs };
}

/** Counts and scan of `versionIds` read in one snapshot: they must be equal, whatever is settling or folding. */
async function compare(versionId: string | null, versionIds: string[], hold = "hold") {
  return inSnapshot(async (tx, q) => {
    const c = await journeyCounts(tx, { orgId: ids.orgId, automationId: ids.automationId, versionId, window: "all" });
    const scan = await scanCounts(q, versionIds);
    const edges = await scanEdges(q, versionIds, traces(hold));
    return { counts: shapeOf(c), expected: { nodes: scan.nodes, edges, runs: scan.runs }, raw: c };
  });
}

/** Rows the fold has not taken yet: one change each, and the settle batches' sums of their steps' changes. */
const unfolded = "SELECT (SELECT count(*)::int FROM count_changes) AS changes, (SELECT count(*)::int FROM count_tallies) AS tallies";
const start = (i: number, plan: string) => startTestRun(d.t.db, "journey", { id: `evt_${i}`, plan, email: `lead${i}@example.com` });

async function settled(): Promise<boolean> {
  const [row] = await d.q(
    `SELECT count(*)::int AS n FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.automation_id = $1 AND s.status IN ('ready', 'running')`,
    [ids.automationId],
  );
  const [open] = await d.q(`SELECT count(*)::int AS n FROM runs r WHERE r.automation_id = $1 AND r.status = 'running'
      AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status IN ('waiting', 'parked'))`, [ids.automationId]);
  return row.n === 0 && open.n === 0;
}

async function foldAll(batch = 1000): Promise<void> {
  const service = countFold.make({ batch });
  for (let i = 0; i < 1000 && (await service.runOnce(ctx)).folded > 0; i++);
}

describe("journey counts", () => {
  it("equal the database's own counts while the workers settle and the sweeper folds, read in one snapshot", async () => {
    const env = d.quickEnv({ HOLDFAST_LANES: JSON.stringify({ io: { retry: { baseMs: 50, capMs: 200 } } }), SWEEP_COUNT_FOLD_BATCH: "7", SWEEP_COUNT_FOLD_INTERVAL_MS: "50" });
    await d.startApps(["relay", "engine", "sweeper", "lane-worker"].map((app) => ({ app: app as "relay", env })));
    const started: Promise<string>[] = [];
    for (let i = 0; i < 40; i++) started.push(start(i, i % 4 === 3 ? "free" : "pro"));
    // Test runs (the editor's), simulated by the workers like any run: never counted.
    for (let i = 0; i < 3; i++) {
      const headers = { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null };
      const body = { id: `test_${i}`, plan: "pro", email: `tester${i}@example.com` };
      started.push(startRun(d.t.db, { orgSlug: "acme", automationSlug: "journey", rawBody: "{}", body, headers, via: "test", auth: { kind: "operator" }, test: { by: "user:sam@acme.test" } }).then((r) => r.runId));
    }
    await Promise.all(started);
    let reads = 0;
    let sawWork = false;
    while (!(await settled())) {
      const { counts, expected, raw } = await compare(ids.versionId, [ids.versionId]);
      expect(counts).toEqual(expected);
      sawWork ||= raw.pendingChanges > 0 && Object.values(raw.nodes).some((n) => n.now > 0);
      reads++;
      if (reads > 2000) throw new Error("the runs did not settle");
    }
    expect(sawWork).toBe(true);
    const { counts, expected, raw } = await compare(ids.versionId, [ids.versionId]);
    expect(counts).toEqual(expected);
    // 30 pro runs through call_a (each retried once), 10 free ones failing at call_b after two attempts.
    expect(raw.nodes.call_a).toMatchObject({ passed: 30, failed: 0, now: 0 });
    expect(raw.nodes.call_b).toMatchObject({ failed: 10, passed: 0, now: 0 });
    expect(raw.runs).toMatchObject({ started: 40, failed: 10 });
    const took = (label: string) => raw.edges.find((e) => e.from === "pick" && e.label === label)?.n ?? 0;
    expect(took("A") + took("B")).toBe(30);
    expect(raw.splits.pick?.paths.map((p) => [p.path, p.n])).toEqual([
      ["A", took("A")],
      ["B", took("B")],
    ]);
    // Every call was retried once (the call_b ones fail on their second attempt).
    const [{ n: retries }] = await d.q(`SELECT count(*)::int AS n FROM run_events e JOIN runs r ON r.id = e.run_id WHERE NOT r.test AND e.type = 'step.retry_scheduled'`);
    expect(retries).toBe(40);
  });

  it("stay equal with cancelled runs, a converted run and a parked step, and after everything is folded", async () => {
    const waiting = await d.q(
      `SELECT s.run_id, s.id, r.contact_id FROM steps s JOIN runs r ON r.id = s.run_id WHERE NOT r.test AND s.status = 'waiting' ORDER BY s.id`,
    );
    expect(waiting.length).toBeGreaterThanOrEqual(4);
    for (const w of waiting.slice(0, 2)) await requestCancel(d.t.db, graphs, ids.orgId, w.run_id, "a test cancels it", "user:sam@acme.test");
    // A person's hold: no way to park a wait through the product, so it is set here, as a settle that parks would.
    await d.q(`UPDATE steps SET status = 'parked', error = '{"code":"held_for_test"}' WHERE id = $1`, [waiting[2].id]);
    // A contact meets the automation's goal while its run waits: the engine ends the run converted, the wait with it.
    await automationsSetGoal(d.t.db, ids.orgId, ids.automationId, "event");
    const met = await goalMet(d.t.db, { orgId: ids.orgId, automationId: ids.automationId, contactId: waiting[3].contact_id, goal: "event" });
    expect(met).toMatchObject({ kind: "met", runIds: [waiting[3].run_id] });
    await waitFor(async () => (await d.q(`SELECT status FROM runs WHERE id = $1`, [waiting[3].run_id]))[0].status === "converted", 20_000, "the run to convert");
    let { counts, expected, raw } = await compare(ids.versionId, [ids.versionId]);
    expect(counts).toEqual(expected);
    expect(raw.runs).toMatchObject({ cancelled: 2, converted: 1 });
    // The converted run's wait counts as converted, not stopped.
    expect(raw.nodes.hold).toMatchObject({ cancelled: 2, converted: 1, held: 1 });
    const listed = async (bucket: "cancelled" | "converted") =>
      (await runsAtCount(d.t.db, { orgId: ids.orgId, automationId: ids.automationId, versionId: ids.versionId, nodeId: "hold", bucket, window: "all", limit: 50 })).runs
        .map((r) => r.runId)
        .sort();
    expect(await listed("converted")).toEqual([waiting[3].run_id]);
    expect(await listed("cancelled")).toEqual([waiting[0].run_id, waiting[1].run_id].sort());
    await d.app("sweeper").stop();
    await foldAll();
    ({ counts, expected, raw } = await compare(ids.versionId, [ids.versionId]));
    expect(counts).toEqual(expected);
    expect(raw.pendingChanges).toBe(0);
    expect(await d.q(unfolded)).toEqual([{ changes: 0, tallies: 0 }]);
  });

  it("count each change once with two folds at once and a fold that dies midway", async () => {
    await d.stopApps();
    // New changes to fold: more runs, walked by a worker, the sweeper not running.
    const env = d.quickEnv({ HOLDFAST_LANES: JSON.stringify({ io: { retry: { baseMs: 50, capMs: 200 } } }) });
    await d.startApps(["relay", "engine", "lane-worker"].map((app) => ({ app: app as "relay", env })));
    await Promise.all(Array.from({ length: 20 }, (_, i) => start(100 + i, i % 2 ? "pro" : "free")));
    await waitFor(settled, 60_000, "the new runs to settle");
    await d.stopApps();
    // The worker's settle batches summed their steps' changes (count_tallies); runs' own changes and edges are rows.
    const [rows] = await d.q(unfolded);
    expect(rows.changes).toBeGreaterThan(20);
    expect(rows.tallies).toBeGreaterThan(0);
    const before = rows.changes + rows.tallies;
    // A fold that dies after its statement, before its commit: nothing it did stays. A fold takes at most its batch,
    // up to half of it summed rows (a backlog of count_changes never holds them up).
    await expect(inTx(d.t.db, async (tx) => {
      expect(await countChangesFold(tx, 30)).toMatchObject({ folded: 30, full: true });
      const [left] = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM count_tallies`;
      expect(left?.n).toBe(rows.tallies - Math.min(15, rows.tallies));
      throw new Error("the sweeper died");
    })).rejects.toThrow("the sweeper died");
    expect(await d.q(unfolded)).toEqual([rows]);
    // Two folds at once, small batches, until nothing is left: they take turns (a fold that finds the other folding
    // folds nothing that pass), and every change is counted once between them.
    const fold = countFold.make({ batch: 5 });
    const drain = async () => {
      let total = 0;
      for (let r = await fold.runOnce(ctx); ; r = await fold.runOnce(ctx)) {
        total += r.folded;
        if (r.pending === 0) return total;
      }
    };
    const [a, b] = await Promise.all([drain(), drain()]);
    expect(a + b).toBe(before);
    const { counts, expected, raw } = await compare(ids.versionId, [ids.versionId]);
    expect(counts).toEqual(expected);
    expect(raw.pendingChanges).toBe(0);
  });

  it("count a reply, a click or a conversion on the split path its run took, after its timeline is gone", async () => {
    const [ranA] = await d.q(`SELECT e.run_id, e.data->>'path' AS path FROM run_events e JOIN runs r ON r.id = e.run_id
      WHERE NOT r.test AND e.type = 'split.chosen' ORDER BY e.run_id LIMIT 1`);
    // Timeline retention's work (put back after, for the scans of the next test).
    const timeline = await d.q(`DELETE FROM run_events WHERE run_id = $1 RETURNING *`, [ranA.run_id]);
    const [run] = await d.q("SELECT org_id, version_id FROM runs WHERE id = $1", [ranA.run_id]);
    // The email helper's rows: once per run at node ''.
    for (const outcome of ["outcome:replied", "outcome:clicked"]) {
      await d.q(`INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket) VALUES ($1, $2, $3, '', $4)`, [run.org_id, run.version_id, ranA.run_id, outcome]);
    }
    const before = await journeyCounts(d.t.db, { orgId: ids.orgId, automationId: ids.automationId, versionId: ids.versionId, window: "all" });
    await foldAll();
    const after = await journeyCounts(d.t.db, { orgId: ids.orgId, automationId: ids.automationId, versionId: ids.versionId, window: "7d" });
    const path = (c: JourneyCounts) => c.splits.pick?.paths.find((p) => p.path === ranA.path);
    expect(path(after)).toMatchObject({ replied: (path(before)?.replied ?? 0) + 1, clicked: (path(before)?.clicked ?? 0) + 1, converted: 0 });
    const other = after.splits.pick?.paths.find((p) => p.path !== ranA.path);
    expect(other).toMatchObject({ replied: 0, clicked: 0 });
    await d.q(`INSERT INTO run_events SELECT * FROM jsonb_populate_recordset(NULL::run_events, $1::jsonb)`, [JSON.stringify(timeline)]);
  });

  it("move the waiting runs' counts to the new version when a migration moves them, and keep their history on the old", async () => {
    const v2 = await publish(d.t.db, graphOf(ok.url, down.url, "hold2"), { automation: "journey" });
    const open1 = await compare(ids.versionId, [ids.versionId]);
    const waitingBefore = open1.raw.nodes.hold?.now ?? 0;
    const heldBefore = open1.raw.nodes.hold?.held ?? 0;
    expect(waitingBefore + heldBefore).toBeGreaterThan(0);
    await applyMigration(d.t.db, graphs, ids.orgId, ids.automationId, { fromVersion: 1, toVersion: 2, mapping: { hold: "hold2" } }, "user:sam@acme.test");
    const [{ n: left }] = await d.q(`SELECT count(*)::int AS n FROM runs WHERE version_id = $1 AND status = 'running' AND NOT test`, [ids.versionId]);
    expect(left).toBe(0);
    for (const fold of [false, true]) {
      if (fold) await foldAll();
      const one = await compare(ids.versionId, [ids.versionId]);
      const two = await compare(v2.versionId, [v2.versionId], "hold2");
      expect(two.counts.nodes.hold2).toEqual(two.expected.nodes.hold2);
      // The scan of all versions knows no version: every edge the runs took was on version 1's graph.
      const all = await compare(null, [ids.versionId, v2.versionId]);
      // Where runs are now follows them to version 2; what they did stays on version 1 (all versions: both).
      expect(one.raw.nodes.hold).toMatchObject({ now: 0, held: 0 });
      expect(two.raw.nodes.hold2).toMatchObject({ now: waitingBefore, held: heldBefore });
      expect(one.raw.runs.now).toBe(0);
      expect(two.raw.runs.now).toBe(waitingBefore + heldBefore);
      expect(all.counts.nodes).toEqual(all.expected.nodes);
      expect(all.counts.edges).toEqual(all.expected.edges);
      expect(all.raw.versions.map((v) => [v.version, v.now])).toEqual([
        [2, waitingBefore + heldBefore],
        [1, 0],
      ]);
    }

    // Version 3 drops the wait: its runs are moved onto the new one; the closing of the old stays on version 2.
    const v3 = await publish(d.t.db, graphOf(ok.url, down.url, "hold3"), { automation: "journey" });
    const moving = waitingBefore + heldBefore;
    const before2 = await compare(v2.versionId, [v2.versionId], "hold2");
    await applyMigration(d.t.db, graphs, ids.orgId, ids.automationId, { fromVersion: 2, toVersion: 3, removed: { kind: "move", to: "hold3" } }, "user:sam@acme.test");
    for (const fold of [false, true]) {
      if (fold) await foldAll();
      const two = await compare(v2.versionId, [v2.versionId], "hold2");
      const three = await compare(v3.versionId, [v3.versionId], "hold3");
      expect(two.raw.nodes.hold2).toMatchObject({ now: 0, held: 0, cancelled: (before2.raw.nodes.hold2?.cancelled ?? 0) + moving });
      expect(three.raw.nodes.hold3).toEqual({ ...three.expected.nodes.hold3, email: null });
      expect(three.raw.nodes.hold3).toMatchObject({ now: moving });
      expect([two.raw.runs.now, three.raw.runs.now]).toEqual([0, moving]);
      expect(Object.keys(three.raw.nodes)).not.toContain("hold2");
    }
  });
});
