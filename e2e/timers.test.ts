import { publicationsOf } from "@holdfast/core/run";
import { createPublisher, queueNames } from "@holdfast/queue";
import { Queue } from "bullmq";
import { timersFireDueFairly } from "@holdfast/core/store";
import { instantFor, spreadOffsetSeconds } from "@holdfast/core/decide";
import { inTx } from "@holdfast/db";
import { connectAs, type HttpTarget, lineGraph, publish, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment, testRedisUrl, waitFor } from "@holdfast/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let d: TestDeployment;
let target: HttpTarget;

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
});
afterEach(async () => d.stopApps());
afterAll(async () => d?.stop());
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

const waitGraph = (seconds: number) =>
  lineGraph(
    { id: "signup", kind: "trigger", config: { eventIdField: "id" } },
    { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds } } },
    { id: "notify", kind: "http_request", config: { url: target.url } },
    { id: "done", kind: "end" },
  );

describe("waking up on time", () => {
  it("fires within 1 s of due through the fast path (a timer's own job, and one job for timers due at one instant), and within one sweep interval when the delayed job is lost", async () => {
    await publish(d.t.db, waitGraph(3), { automation: "wait-3s" });
    await publish(d.t.db, waitGraph(600), { automation: "wait-10m" });
    const env = {
      RELAY_POLL_MS: "200",
      SWEEP_INTERVAL_MS: "1000",
      SWEEP_STALE_SECONDS: "30",
      LANE: "io",
    };
    // No sweeper yet: the first timer can only fire through the fast path (its delayed job), however loaded the
    // machine is; the sweeper joins for the second, whose job is deleted.
    await d.startApps([{ app: "relay", env }, { app: "engine", env }, { app: "lane-worker", env }], 20_000);
    const start = async (id: string) => ({ runId: await startTestRun(d.t.db, "wait-3s", { id }) });

    const fast = await start("fast-1");
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [fast.runId]))[0]?.status === "completed", 20_000, "the run to complete");
    const [f] = await q("SELECT lateness_ms, fired_by FROM timers WHERE run_id = $1", [fast.runId]);
    console.log(`fast path: fired ${Number(f.lateness_ms).toFixed(1)} ms after due by ${f.fired_by}`);
    expect(f.fired_by).toMatch(/^engine@/);
    expect(Number(f.lateness_ms)).toBeLessThan(5_000); // printed above; about 1-20 ms on an idle machine

    // Timers due at one instant, as one timers.due job (the relay's grouping, run/relay/publications.ts): the engine
    // fires both on time. Their own jobs (ten minutes away), published when they began, are removed first.
    const pair = await Promise.all(["together-1", "together-2"].map(async (id) => ({ runId: await startTestRun(d.t.db, "wait-10m", { id }) })));
    const pairTimers = await waitFor(async () => {
      const found = await q(
        "SELECT t.id, t.wake, t.org_id, t.run_id FROM timers t WHERE t.run_id = ANY($1) AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = t.run_id AND o.topic = 'timer.due' AND o.sent_at IS NULL)",
        [pair.map((p) => p.runId)],
      );
      return found.length === 2 ? found : undefined;
    }, 10_000, "the pair's jobs to be published");
    const engineQueue = new Queue(queueNames.engine, { connection: { url: testRedisUrl }, prefix: d.prefix });
    for (const tm of pairTimers) await (await engineQueue.getJob(`${tm.id}_${tm.wake}`))?.remove();
    const [{ at }] = await q("UPDATE timers SET due_at = date_trunc('second', now()) + interval '2 seconds' WHERE run_id = ANY($1) RETURNING to_jsonb(due_at) #>> '{}' AS at", [
      pair.map((p) => p.runId),
    ]);
    const groupPublisher = createPublisher({ redis: testRedisUrl, prefix: d.prefix });
    const jobs = publicationsOf(
      pairTimers.map((tm) => ({ id: 0n, topic: "timer.due", jobId: `${tm.id}_${tm.wake}`, delayMs: 1_500, payload: { orgId: tm.org_id, runId: tm.run_id, timerId: tm.id, wake: tm.wake, dueAt: at } })),
    );
    expect(jobs.map((j) => j.name)).toEqual(["timers.due"]);
    await groupPublisher.publishMany(jobs);
    await groupPublisher.close();
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [pair.map((p) => p.runId)]))[0]?.n === 2, 20_000, "the pair to complete");
    const pairFired = await q("SELECT lateness_ms, fired_by FROM timers WHERE run_id = ANY($1)", [pair.map((p) => p.runId)]);
    console.log(`one job for two timers: fired ${pairFired.map((r) => `${Number(r.lateness_ms).toFixed(1)} ms`).join(", ")} after due`);
    for (const r of pairFired) {
      expect(r.fired_by).toMatch(/^engine@/);
      expect(Number(r.lateness_ms)).toBeLessThan(5_000);
    }
    await engineQueue.close();

    await d.startApps([{ app: "sweeper", env }], 20_000);

    const lost = await start("lost-1");
    const timer = await waitFor(async () => {
      const [row] = await q(
        "SELECT t.id, t.wake FROM timers t WHERE t.run_id = $1 AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = t.run_id AND o.topic = 'timer.due' AND o.sent_at IS NULL)",
        [lost.runId],
      );
      return row as { id: string; wake: number } | undefined;
    }, 10_000, "the timer's job to be published");
    const queue = new Queue(queueNames.engine, { connection: { url: testRedisUrl }, prefix: d.prefix });
    const job = await queue.getJob(`${timer.id}_${timer.wake}`);
    expect(job).toBeTruthy();
    await job?.remove();
    await queue.close();
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [lost.runId]))[0]?.status === "completed", 20_000, "the sweep to fire it");
    const [s] = await q("SELECT lateness_ms, fired_by FROM timers WHERE run_id = $1", [lost.runId]);
    console.log(`job deleted: fired ${Number(s.lateness_ms).toFixed(1)} ms after due by ${s.fired_by}`);
    expect(s.fired_by).toBe("sweeper");
    expect(Number(s.lateness_ms)).toBeLessThan(5_000); // printed above: within about one sweep interval (1 s) on an idle machine
    const types = (await q("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [lost.runId])).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["timer.scheduled", "timer.fired", "run.completed"]));
  });
});

describe("the fair due sweep", () => {
  it("serves every small organisation in the first batch while a 200,000-timer backlog drains, with an index scan", async () => {
    // Eleven organisations: A with 200,000 due timers, B..K with 10 each. Rows are written in SQL for speed.
    // As the schema's owner: ANALYZE is the owner's. Each organisation has its own automation (rows never point into
    // another organisation: the foreign keys carry org_id). Its runs are picked by exact automation id: a product
    // automation's id (aut_<uuid hex>) starts with "aut_f" one time in sixteen, and its runs already have steps.
    const owner = await connectAs(d.t.adminUrl, new URL(d.t.adminUrl).username);
    await owner.query(`
      INSERT INTO organisations (id, slug, name) SELECT 'org_' || c, 'org-' || c, c FROM unnest(string_to_array('A,B,C,D,E,F,G,H,I,J,K', ',')) c;
      INSERT INTO automations (id, org_id, slug, name) SELECT 'aut_f' || c, 'org_' || c, 'fair', 'fair' FROM unnest(string_to_array('A,B,C,D,E,F,G,H,I,J,K', ',')) c;
      INSERT INTO automation_versions (id, org_id, automation_id, version, graph)
        SELECT 'ver_f' || c, 'org_' || c, 'aut_f' || c, 1, '{}' FROM unnest(string_to_array('A,B,C,D,E,F,G,H,I,J,K', ',')) c;
      INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input)
        SELECT 'run_' || o || '_' || g, 'org_' || o, 'aut_f' || o, 'ver_f' || o, 'k' || g, '{}'
        FROM unnest(string_to_array('A,B,C,D,E,F,G,H,I,J,K', ',')) o, generate_series(1, 200000) g
        WHERE o = 'A' OR g <= 10;
      INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status)
        SELECT 'stp' || substr(id, 4), org_id, id, 'pause', 1, 'wait', 'human', 1, 'waiting' FROM runs WHERE automation_id ~ '^aut_f[A-K]$';
      INSERT INTO timers (org_id, run_id, step_id, rule, zone, anchor_at, due_at)
        SELECT org_id, id, 'stp' || substr(id, 4), '{"kind":"duration","seconds":60}', 'UTC', now() - interval '2 minutes',
               now() - interval '1 minute' - (random() * interval '30 seconds')
        FROM runs WHERE automation_id ~ '^aut_f[A-K]$';
      ANALYZE timers; ANALYZE organisations;`);
    await owner.end();

    const timeBatch = async () => {
      // Measured inside a transaction that is rolled back, so the backlog stays the same size.
      const started = performance.now();
      await d.t.db
        .$transaction(async (tx) => {
          await timersFireDueFairly(tx, 20, 50, 500, "test");
          throw new Error("rollback");
        })
        .catch((e: Error) => {
          if (e.message !== "rollback") throw e;
        });
      return performance.now() - started;
    };
    const median = async () => {
      const times = [];
      for (let i = 0; i < 5; i++) times.push(await timeBatch());
      return times.sort((a, b) => a - b)[2] as number;
    };
    const plan = (
      await q(`EXPLAIN SELECT t.id FROM (
          SELECT o.id FROM organisations o
          WHERE EXISTS (SELECT 1 FROM timers d WHERE d.org_id = o.id AND d.fired_at IS NULL AND d.due_at <= now())
          ORDER BY o.last_timer_served_at NULLS FIRST, o.id LIMIT 20) AS o
        CROSS JOIN LATERAL (
          SELECT id, due_at FROM timers WHERE timers.org_id = o.id AND timers.fired_at IS NULL AND timers.due_at <= now()
          ORDER BY timers.due_at LIMIT 50 FOR UPDATE SKIP LOCKED) AS t
        ORDER BY o.id, t.due_at LIMIT 500`)
    ).map((r) => r["QUERY PLAN"] as string);
    expect(plan.join("\n")).not.toMatch(/Seq Scan on timers/);
    const atBig = await median();

    const first = await inTx(d.t.db, (tx) => timersFireDueFairly(tx, 20, 50, 500, "test"));
    const served = new Map(first.fired.map((f) => [f.orgId, f]));
    for (const o of "BCDEFGHIJK") expect(served.get(`org_${o}`)?.count).toBe(10);
    expect(served.get("org_A")?.count).toBe(50);
    console.log(
      `first batch: ${first.fired.map((f) => `${f.orgId.slice(4)} ${f.count} (max lateness ${(f.maxLatenessMs / 1000).toFixed(1)} s)`).join(", ")}`,
    );

    await d.t.sql.query("DELETE FROM timers WHERE org_id = 'org_A' AND fired_at IS NULL AND id NOT IN (SELECT id FROM timers WHERE org_id = 'org_A' AND fired_at IS NULL LIMIT 1000)");
    await d.t.sql.query("ANALYZE timers");
    const atSmall = await median();
    console.log(`due sweep batch: ${atBig.toFixed(1)} ms at a 200,000-timer backlog, ${atSmall.toFixed(1)} ms at 1,000 (ratio ${(atBig / atSmall).toFixed(2)})`);
    expect(atBig).toBeLessThan(2 * atSmall + 5); // +5 ms: timer noise on a busy 2-core machine
  });
});

describe("the Monday 09:00 problem", () => {
  it("10,000 runs due at Monday 09:00 Berlin with a 600 s spread land across the window, each on its own offset", () => {
    const saturday = new Date("2026-11-28T10:00:00Z");
    const rule = { kind: "next_weekday", at: "09:00" } as const;
    const perMinute = new Array(10).fill(0) as number[];
    const base = instantFor({ rule, zone: "Europe/Berlin", spreadSeconds: 0, runId: "x", anchorAt: saturday }).dueAt.getTime();
    expect(new Date(base).toISOString()).toBe("2026-11-30T08:00:00.000Z");
    for (let i = 0; i < 10_000; i++) {
      const runId = `run_${i.toString(16).padStart(8, "0")}`;
      const due = instantFor({ rule, zone: "Europe/Berlin", spreadSeconds: 600, runId, anchorAt: saturday }).dueAt.getTime();
      expect(due - base).toBe(spreadOffsetSeconds(runId, 600) * 1000);
      perMinute[Math.floor((due - base) / 60_000)]! += 1;
    }
    console.log(`per-minute histogram from 09:00: ${perMinute.map((n, m) => `09:0${m} ${n}`).join(", ")}`);
    for (const n of perMinute) expect(n).toBeGreaterThan(850);
  });
});
