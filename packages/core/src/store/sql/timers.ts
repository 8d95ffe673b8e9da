import { type Db, Prisma, type Tx } from "@holdfast/db";

export interface NewTimer {
  orgId: string;
  runId: string;
  stepId: string;
  rule: unknown;
  zone: string;
  /** run | contact | node | default (decide/timers/plan.ts); a contact's zone change recomputes all but node. */
  zoneSource?: string;
  spreadSeconds: number;
  spreadOffsetSeconds: number;
  anchorAt: Date;
  dueAt: Date;
}

/** Writes the timer and its fast-path wake-up (published at once, delivered at due_at) in the caller's transaction. */
export async function timersInsert(tx: Tx, t: NewTimer): Promise<{ id: string; wake: number }> {
  const rows = await tx.$queryRaw<{ id: string; wake: number }[]>`
    WITH timer AS (
      INSERT INTO timers (org_id, run_id, step_id, rule, zone, zone_source, spread_seconds, spread_offset_seconds, anchor_at, due_at)
      VALUES (${t.orgId}, ${t.runId}, ${t.stepId}, ${JSON.stringify(t.rule)}::jsonb, ${t.zone}, ${t.zoneSource ?? null}::text, ${t.spreadSeconds}::int,
              ${t.spreadOffsetSeconds}::int, ${t.anchorAt}::timestamptz, ${t.dueAt}::timestamptz)
      RETURNING id, org_id, run_id, wake, due_at
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'timer.due',
             jsonb_build_object('orgId', org_id, 'runId', run_id, 'timerId', id, 'wake', wake, 'dueAt', due_at)
      FROM timer
    )
    SELECT id, wake FROM timer`;
  return rows[0] as { id: string; wake: number };
}

export interface FiredTimer {
  timerId: string;
  /** The wake number it fired at. */
  wake: number;
  orgId: string;
  runId: string;
  stepId: string;
  /** fired_at - due_at by the database clock. */
  latenessMs: number;
}

/**
 * Fires one timer if it is due by the database clock, unfired, and `wake` is still its current wake number: the
 * wait step settles, the run gets its run.wake, and the timeline records the lateness, in one statement. Whichever
 * path comes first (the fast-path job or the due sweep) fires it; the other finds nothing.
 */
export function timersFireIfDue(tx: Tx, timerId: string, wake: number | null, by: string, wakeDelayMs = 0): Promise<FiredTimer[]> {
  return fire(tx, Prisma.sql`id = ${timerId} AND (${wake}::int IS NULL OR wake = ${wake}::int)`, by, true, wakeDelayMs);
}

/**
 * Fires each of these timers that is due by the database clock, unfired, and still at that wake number (the fast
 * path's batch, run/engine/fire-timers.ts), in one statement, without run.wake rows: the caller walks the fired runs in the
 * same transaction. Rows are found by primary key and locked in id order, as the due sweep's are.
 */
export function timersFireIfDueMany(tx: Tx, dues: { timerId: string; wake: number }[], by: string): Promise<FiredTimer[]> {
  const ids = dues.map((d) => d.timerId);
  const wakes = dues.map((d) => d.wake);
  return fire(tx, Prisma.sql`id = ANY(${ids}::text[]) AND (id, wake) IN (SELECT * FROM unnest(${ids}::text[], ${wakes}::int[]))`, by, false);
}

/**
 * `timersDueInMs` for many: each timer still unfired at that wake number, with how long until it is due (0: due),
 * keyed `<timer id>:<wake>`.
 */
export async function timersDueInMsMany(tx: Db | Tx, dues: { timerId: string; wake: number }[]): Promise<Map<string, number>> {
  const ids = dues.map((d) => d.timerId);
  const wakes = dues.map((d) => d.wake);
  const rows = await tx.$queryRaw<{ key: string; ms: number }[]>`
    SELECT id || ':' || wake AS key, GREATEST(0, EXTRACT(EPOCH FROM due_at - now()) * 1000)::float8 AS ms FROM timers
    WHERE id = ANY(${ids}::text[]) AND fired_at IS NULL AND (id, wake) IN (SELECT * FROM unnest(${ids}::text[], ${wakes}::int[]))`;
  return new Map(rows.map((r) => [r.key, r.ms]));
}

/**
 * `wakeRuns`: each fired timer's run gets its run.wake row (false when the caller walks the runs in the same
 * transaction), due `wakeDelayMs` from now (a backstop the caller's own walk withdraws).
 */
function fire(tx: Tx, which: Prisma.Sql, by: string, wakeRuns: boolean, wakeDelayMs = 0, early?: EarlyFiring): Promise<FiredTimer[]> {
  return tx.$queryRaw<FiredTimer[]>(fireSql(which, by, wakeRuns, wakeDelayMs, early));
}

/** A person fired the wait before its time: why, on the timer.fired event beside who (its worker) and dueAt. */
interface EarlyFiring {
  reason: string;
}

function fireSql(which: Prisma.Sql, by: string, wakeRuns = true, wakeDelayMs = 0, early?: EarlyFiring): Prisma.Sql {
  return Prisma.sql`
    WITH fired AS (
      UPDATE timers SET fired_at = now(), fired_by = ${by}, updated_at = now(),
                        lateness_ms = GREATEST(0, EXTRACT(EPOCH FROM now() - due_at) * 1000)
      WHERE ${which} AND fired_at IS NULL${early ? Prisma.empty : Prisma.sql` AND due_at <= now()`}
      RETURNING id, wake, org_id, run_id, step_id, due_at, lateness_ms
    ), settled AS (
      UPDATE steps s SET status = 'done', settled_at = now(), updated_at = now(),
                         output = COALESCE(s.output, '{}'::jsonb)
                                  || jsonb_build_object('dueAt', f.due_at, 'firedAt', now(), 'latenessMs', f.lateness_ms)
                                  -- A reply wait whose deadline came first says so: {{steps.<id>.output.outcome}} is "timeout".
                                  || CASE WHEN s.kind = 'wait_for_reply' THEN '{"outcome": "timeout"}'::jsonb ELSE '{}'::jsonb END
      FROM fired f WHERE s.id = f.step_id AND s.status = 'waiting'
      RETURNING s.id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
      SELECT org_id, run_id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', run_id, 'reason', 'timer_fired'),
             now() + make_interval(secs => ${wakeDelayMs}::float8 / 1000)
      FROM fired WHERE ${wakeRuns}::boolean
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, type, worker, data)
      SELECT org_id, run_id, step_id, 'timer.fired', ${by},
             jsonb_build_object('timerId', id, 'dueAt', due_at, 'latenessMs', round(lateness_ms::numeric, 1))${
               early ? Prisma.sql` || jsonb_build_object('early', true, 'reason', ${early.reason}::text)` : Prisma.empty
             }
      FROM fired
    )
    SELECT id AS "timerId", wake, org_id AS "orgId", run_id AS "runId", step_id AS "stepId", lateness_ms::float8 AS "latenessMs" FROM fired`;
}

/**
 * "Fire this wait now" (run/runs/fire-wait.ts): the step's unfired timer fired by the same statement as the sweeper's,
 * whatever its due time, with who (`by`) and why on the timeline; no run.wake, the caller walks the run in this
 * transaction. Zero rows: it had fired already.
 */
export function timersFireNow(tx: Tx, orgId: string, stepId: string, by: string, reason: string): Promise<FiredTimer[]> {
  return fire(tx, Prisma.sql`org_id = ${orgId} AND step_id = ${stepId}`, by, false, 0, { reason });
}

/** A step of a run with its timer, if it has one: what "Fire this wait now" picks from and reads back. */
export interface StepTimer {
  stepId: string;
  nodeId: string;
  iteration: number;
  kind: string;
  status: string;
  timerId: string | null;
  dueAt: Date | null;
  firedAt: Date | null;
  firedBy: string | null;
  /** Why a person fired it before its time (its timer.fired event), if one did. */
  firedReason: string | null;
}

/** The run's steps (those of one node, or one step, when given) with their timers, newest first. */
export function timersOfRunSteps(tx: Tx, orgId: string, runId: string, only: { stepId?: string; nodeId?: string } = {}): Promise<StepTimer[]> {
  return tx.$queryRaw<StepTimer[]>`
    SELECT s.id AS "stepId", s.node_id AS "nodeId", s.iteration, s.kind, s.status, t.id AS "timerId", t.due_at AS "dueAt",
           t.fired_at AS "firedAt", t.fired_by AS "firedBy",
           (SELECT e.data->>'reason' FROM run_events e
            WHERE e.run_id = s.run_id AND e.type = 'timer.fired' AND e.data->>'timerId' = t.id AND e.data ? 'early' LIMIT 1) AS "firedReason"
    FROM steps s LEFT JOIN timers t ON t.org_id = s.org_id AND t.step_id = s.id
    WHERE s.org_id = ${orgId} AND s.run_id = ${runId}
      AND (${only.stepId ?? null}::text IS NULL OR s.id = ${only.stepId ?? null}::text)
      AND (${only.nodeId ?? null}::text IS NULL OR s.node_id = ${only.nodeId ?? null}::text)
    ORDER BY s.created_at DESC, s.id DESC`;
}

export interface SweepBatch {
  fired: { orgId: string; count: number; maxLatenessMs: number }[];
  /** The runs whose timers fired, in the order fired. */
  runs: { orgId: string; runId: string }[];
}

/**
 * The fair due sweep: a bounded, rotated set of organisations with due work (least recently served first), at most
 * `perOrg` due timers from each (a short index scan on (org_id, due_at) per organisation, SKIP LOCKED so concurrent
 * sweeps never take the same timer), fired in this transaction, and each served organisation stamped.
 */
export async function timersFireDueFairly(
  tx: Tx,
  orgLimit: number,
  perOrg: number,
  total: number,
  by: string,
  /** The caller walks the fired runs in this transaction: no run.wake rows. */
  walking = false,
): Promise<SweepBatch> {
  return timersServed(tx, await fire(tx, dueFairly(orgLimit, perOrg, total), by, !walking));
}

/** A due sweep's batch from the timers it fired: each organisation served stamped (skipping one another batch stamps). */
export async function timersServed(tx: Tx, fired: Pick<FiredTimer, "orgId" | "runId" | "latenessMs">[]): Promise<SweepBatch> {
  const byOrg = new Map<string, { count: number; maxLatenessMs: number }>();
  for (const f of fired) {
    const o = byOrg.get(f.orgId) ?? { count: 0, maxLatenessMs: 0 };
    byOrg.set(f.orgId, { count: o.count + 1, maxLatenessMs: Math.max(o.maxLatenessMs, f.latenessMs) });
  }
  if (byOrg.size) {
    // An organisation another batch is stamping (its transaction still open) is skipped, not waited for: that stamp
    // says the same. Waiting held the second of two parallel batches behind the first's whole walk (the 09:00 spike).
    await tx.$executeRaw`
      UPDATE organisations SET last_timer_served_at = now()
      WHERE id IN (SELECT id FROM organisations WHERE id = ANY(${[...byOrg.keys()]}::text[]) FOR NO KEY UPDATE SKIP LOCKED)`;
  }
  return {
    fired: [...byOrg].map(([orgId, o]) => ({ orgId, ...o })),
    runs: fired.map((f) => ({ orgId: f.orgId, runId: f.runId })),
  };
}

/** The plan PostgreSQL picks for the fair due sweep's statement as it runs (EXPLAIN, nothing executed): for tests. */
export async function timersExplainDueFairly(tx: Tx, orgLimit: number, perOrg: number, total: number): Promise<string> {
  const rows = await tx.$queryRaw<{ "QUERY PLAN": string }[]>`EXPLAIN ${fireSql(dueFairly(orgLimit, perOrg, total), "explain")}`;
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

// The ids are picked into an array first (an InitPlan), so the UPDATE finds its rows by primary key: as `id IN
// (subquery)` the planner hash-joined the pick against a sequential scan of every pending timer (seen at 1,000
// organisations and a 50,000-timer backlog: packages/core/test/timers-fair.test.ts).
// Work-conserving: each organisation picked may take `perOrg`, or its equal part of `total` when fewer organisations
// have due timers (one organisation left alone with a backlog gets the whole batch, not `perOrg` of it). When the
// picked ones hold more than `total`, the batch is dealt round by round: 20 organisations with backlogs get 25 each,
// where the first 10 by id got 50 each and the other 10 waited (the 09:00 spike at spread 0, docs/performance.md).
function dueFairly(orgLimit: number, perOrg: number, total: number): Prisma.Sql {
  return Prisma.sql`id = ANY(${dueFairlyPick(orgLimit, perOrg, total)})`;
}

/** The fair due sweep's pick (its timers locked, SKIP LOCKED) as an array of timer ids: `dueFairly`'s, and the set path's. */
export function dueFairlyPick(orgLimit: number, perOrg: number, total: number): Prisma.Sql {
  return Prisma.sql`ARRAY(
      WITH o AS MATERIALIZED (
        SELECT o.id FROM organisations o
        WHERE EXISTS (SELECT 1 FROM timers d WHERE d.org_id = o.id AND d.fired_at IS NULL AND d.due_at <= now())
        ORDER BY o.last_timer_served_at NULLS FIRST, o.id
        LIMIT ${orgLimit}
      )
      SELECT p.id FROM (
        SELECT t.id, o.id AS org, row_number() OVER (PARTITION BY o.id ORDER BY t.due_at) AS rank
        FROM o
        CROSS JOIN LATERAL (
          SELECT id, due_at FROM timers
          WHERE timers.org_id = o.id AND timers.fired_at IS NULL AND timers.due_at <= now()
          ORDER BY timers.due_at
          LIMIT (SELECT GREATEST(${perOrg}::int, ceil(${total}::numeric / GREATEST(count(*), 1))::int) FROM o)
          FOR UPDATE SKIP LOCKED
        ) AS t
      ) p
      -- Dealt round by round (each organisation's first, then each one's second...), so when the picked organisations
      -- hold more than the batch, every one of them gets its even part, not the first ones by id all of theirs.
      ORDER BY p.rank, p.org
      LIMIT ${total})`;
}

/** The fair due sweep's batch: organisations at most, timers from each, timers in all (`dueFairlyPick`). */
export interface DuePick {
  orgs: number;
  perOrg: number;
  total: number;
}

/** The batch the due sweep takes unless set otherwise (TIMER_SWEEP_ORGS, _PER_ORG, _BATCH), and the engines' drains. */
export const duePickDefaults: DuePick = { orgs: 20, perOrg: 50, total: 500 };

/** The two-key advisory lock space of the due sweep's batches in flight (44: the frequency cap's, 45: email templates', 46: the fold's). */
const firingLockSpace = 47;

/**
 * Takes a slot of the due sweep's batches until the transaction ends, or says none is free (a transaction-scoped
 * advisory lock each): the sweeper's batches take either of two, the engines' drains (run/engine/due-drain.ts) only
 * the second, so at most two batches fire at once and the sweeper always has one. Measured in the 09:00 spike on two
 * cores: an engine's batch beside the sweeper's two cost more CPU a timer and fired no sooner
 * (bench/results/2026-12-07-2330-spike-timers-due-jobs.json). The sweeper's fallback firing (a walk that threw) takes none.
 */
export async function timersTakeFiringSlot(tx: Tx, who: "sweeper" | "engine"): Promise<boolean> {
  const first = who === "sweeper" ? 0 : 1;
  // EXISTS stops at the first slot taken: one lock at most.
  const rows = await tx.$queryRaw<{ mine: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM generate_series(${first}::int, 1) s WHERE pg_try_advisory_xact_lock(${firingLockSpace}::int, s)) AS mine`;
  return rows[0]?.mine === true;
}

/**
 * Whether any timer is due and unfired, whoever holds it: an organisation's due timers are found as the fair pick
 * finds them (`timers_due_idx`, one probe an organisation), never by reading every pending timer.
 */
export async function timersAnyDue(db: Db | Tx): Promise<boolean> {
  const rows = await db.$queryRaw<{ due: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM organisations o
      WHERE EXISTS (SELECT 1 FROM timers d WHERE d.org_id = o.id AND d.fired_at IS NULL AND d.due_at <= now())) AS due`;
  return rows[0]?.due === true;
}

/** The seed's dashboard query: how far behind the sweep is. */
export async function timersOverdue(tx: Tx, graceSeconds: number): Promise<{ overdue: number; oldestDueAt: Date | null }> {
  const rows = await tx.$queryRaw<{ overdue: number; oldestDueAt: Date | null }[]>`
    SELECT count(*)::int AS overdue, min(due_at) AS "oldestDueAt" FROM timers
    WHERE fired_at IS NULL AND due_at < now() - make_interval(secs => ${graceSeconds})`;
  return rows[0] ?? { overdue: 0, oldestDueAt: null };
}

export interface TimerFigures {
  firedRecently: number;
  latenessP50Ms: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  overdue: number;
  oldestOverdueSeconds: number;
}

/** Timers fired in the last 5 minutes (not closed by a signal or a cancel, nor fired early by a person) and how late; unfired ones past due. */
export async function timersFigures(db: Db | Tx): Promise<TimerFigures> {
  const rows = await db.$queryRaw<TimerFigures[]>`
    SELECT
      (SELECT count(*)::int FROM timers WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled') AND fired_at >= due_at) AS "firedRecently",
      COALESCE((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled') AND fired_at >= due_at), 0)::float8 AS "latenessP50Ms",
      COALESCE((SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled') AND fired_at >= due_at), 0)::float8 AS "latenessP99Ms",
      COALESCE((SELECT max(lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled') AND fired_at >= due_at), 0)::float8 AS "latenessMaxMs",
      (SELECT count(*)::int FROM timers WHERE fired_at IS NULL AND due_at < now()) AS overdue,
      COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(due_at)) FROM timers WHERE fired_at IS NULL AND due_at < now()), 0)::float8 AS "oldestOverdueSeconds"`;
  return rows[0] as TimerFigures;
}

/** Under the step's lock: whether the step has an unfired timer. */
export async function timersUnfiredCountForStep(tx: Tx, stepId: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM timers WHERE step_id = ${stepId} AND fired_at IS NULL`;
  return rows[0]?.n ?? 0;
}

/** How long until the timer is due (0 when due), if it is still this wake-up's and unfired; undefined otherwise. */
export async function timersDueInMs(tx: Tx, timerId: string, wake: number): Promise<number | undefined> {
  return (await timersDueInMsMany(tx, [{ timerId, wake }])).get(`${timerId}:${wake}`);
}

/** A timer as the run page shows it. */
export interface TimerView {
  id: string;
  stepId: string;
  rule: unknown;
  zone: string;
  dueAt: Date;
  firedAt: Date | null;
  firedBy: string | null;
  latenessMs: number | null;
}

export function timersViewOfRun(db: Db | Tx, orgId: string, runId: string): Promise<TimerView[]> {
  return db.$queryRaw<TimerView[]>`
    SELECT id, step_id AS "stepId", rule, zone, due_at AS "dueAt", fired_at AS "firedAt", fired_by AS "firedBy",
           lateness_ms::float8 AS "latenessMs"
    FROM timers WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY created_at`;
}
