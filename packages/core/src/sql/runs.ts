import { type Db, Prisma, queryNamed, type Sql, type Tx } from "@holdfast/db";
import { type StartTargetGuard, startTargetGuard } from "./automations";
import { effectUncertainSql } from "./effects";
import type { PlanRows } from "./plan-rows";

export interface RunRow {
  id: string;
  orgId: string;
  automationId: string;
  versionId: string;
  status: "running" | "completed" | "failed" | "cancelled";
  input: unknown;
  cancelRequested: boolean;
  /** Budgets (set at start): steps it may execute (null: none set), and whether its age limit has passed. */
  maxSteps?: number | null;
  expired?: boolean;
  /** Held by its paused automation: the walk schedules no next step (lifecycle.ts). */
  held?: boolean;
  /** A test run: its waits count on its virtual clock (test_runs), its approvals are decided on its page. */
  test?: boolean;
}

/** One logical run per (org_id, start_key): the unique key refuses the second start, whoever races. */
export async function runsInsertIfNew(
  tx: Tx,
  run: { orgId: string; automationId: string; versionId: string; startKey: string; input: unknown; contactId?: string | null },
): Promise<{ id: string; inserted: boolean }> {
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO runs (org_id, automation_id, version_id, start_key, input, contact_id)
    VALUES (${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey}, ${JSON.stringify(run.input)}::jsonb, ${run.contactId ?? null})
    ON CONFLICT (org_id, start_key) DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { id: inserted[0].id, inserted: true };
  // The conflicting row is committed (ON CONFLICT waited for it), so a fresh statement sees it.
  const existing = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM runs WHERE org_id = ${run.orgId} AND start_key = ${run.startKey}`;
  if (!existing[0]) throw new Error(`start key ${run.startKey} conflicted but no run holds it`);
  return { id: existing[0].id, inserted: false };
}

/**
 * An identical-submission start (start-key.ts planStartKey with a window): the newest generation of `baseKey`
 * (`baseKey`, `baseKey:2`, ...) is the same run while it started less than `windowHours` ago by the database clock;
 * otherwise the next generation is inserted. Each generation is a start key like any other, so two identical
 * deliveries at once still start one run (the second waits on the first's row, then finds it fresh).
 */
export async function runsInsertWithinWindow(
  tx: Tx,
  run: { orgId: string; automationId: string; versionId: string; input: unknown; contactId?: string | null },
  baseKey: string,
  windowHours: number,
): Promise<{ id: string; inserted: boolean; startKey: string }> {
  for (let generation = 1; ; generation++) {
    const startKey = generation === 1 ? baseKey : `${baseKey}:${generation}`;
    const found = await runsInsertIfNew(tx, { ...run, startKey });
    if (found.inserted) return { ...found, startKey };
    const fresh = await tx.$queryRaw<{ fresh: boolean }[]>`
      SELECT created_at > now() - make_interval(secs => ${windowHours * 3600}::float8) AS fresh
      FROM runs WHERE org_id = ${run.orgId} AND id = ${found.id}`;
    if (fresh[0]?.fresh) return { ...found, startKey };
  }
}

/**
 * A repeat of a run's start key (holdfast_run_duplicate): counted on the run (duplicate_deliveries,
 * last_duplicate_at); only the first few repeats get a run.duplicate_start row, so a provider retrying or someone
 * replaying a request cannot grow the timeline without bound. Returns the run's count of repeats so far.
 */
export async function runsRecordDuplicate(tx: Tx, orgId: string, runId: string, eventData: Record<string, unknown>): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`SELECT holdfast_run_duplicate(${orgId}, ${runId}, ${JSON.stringify(eventData)}::jsonb) AS n`;
  return rows[0]?.n ?? 0;
}

/**
 * `notify`: the outbox trigger NOTIFYs the lanes of the statement's due step.ready rows (notify_outbox.sql). `bus`: it
 * does not, and the starter publishes them on Redis after its commit (queue/wake.ts).
 */
export type ReadyWake = "notify" | "bus";

/** The CTE a start's statement begins with: the transaction's `holdfast.ready_wake`, read by the outbox trigger. */
export const readyWakeSetting = (wake: ReadyWake) => Prisma.sql`SELECT set_config('holdfast.ready_wake', ${wake}::text, true)`;

/**
 * One statement starts a run with its first walk (holdfast_run_start): the run row and the rows the applier prepared
 * (run.started, the walk's events, first steps and their step.ready outbox rows). A repeat of the start key is
 * counted instead (runsRecordDuplicate).
 */
export async function runsStartWithPlan(
  sql: Sql,
  run: {
    orgId: string;
    automationId: string;
    versionId: string;
    startKey: string;
    input: unknown;
    /** The run's id, made by the starter: the prepared rows name it. */
    id: string;
    eventData: Record<string, unknown>;
    rows: PlanRows;
    contact: { email: string; timeZone: string | null; attributes?: Record<string, unknown> } | null;
    /** How its first steps' lane workers hear of them: `bus`, the starter publishes after the commit (no NOTIFY). */
    readyWake: ReadyWake;
  },
  guard?: StartTargetGuard,
): Promise<{ runId: string; inserted: boolean } | null> {
  const { rows } = await queryNamed<{ r: { runId: string; inserted: boolean } }>(
    sql,
    guard ? "holdfast_run_start_g" : "holdfast_run_start",
    Prisma.sql`
    WITH w AS MATERIALIZED (${readyWakeSetting(run.readyWake)}${startTargetGuard(guard)})
    SELECT holdfast_run_start(${run.id}, ${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey},
      ${JSON.stringify(run.input)}::jsonb, ${JSON.stringify(run.eventData)}::jsonb, ${JSON.stringify(run.rows)}::jsonb,
      holdfast_contact_resolve(${run.orgId}, ${run.contact?.email ?? null}::text, ${run.contact?.timeZone ?? null}::text,
        ${JSON.stringify(run.contact?.attributes ?? {})}::jsonb)) AS r
    FROM w`,
  );
  const r = rows[0]?.r;
  if (r) return r;
  if (guard) return null; // the kept start target is stale: nothing was written
  throw new Error(`start of ${run.startKey} returned nothing`);
}

/** A run started from the editor's Test run: marked in the same transaction as its start. */
/** Marks a run a test run, linked (read only) to the stored contact its sample names, if there is one. */
export async function runsMarkTest(tx: Tx, orgId: string, runId: string, contactId: string | null = null): Promise<void> {
  const n = await tx.$executeRaw`UPDATE runs SET test = true, contact_id = COALESCE(${contactId}, contact_id) WHERE org_id = ${orgId} AND id = ${runId}`;
  if (n !== 1) throw new Error(`test run ${runId} not found to mark`);
}

/** The engine's lock: one walk of a run at a time, across every engine process. */
export async function runsLockForWalk(tx: Tx, orgId: string, runId: string): Promise<RunRow | undefined> {
  const rows = await tx.$queryRaw<RunRow[]>`
    SELECT id, org_id AS "orgId", automation_id AS "automationId", version_id AS "versionId", status, input,
           cancel_requested_at IS NOT NULL AS "cancelRequested", max_steps AS "maxSteps",
           COALESCE(expires_at <= now(), false) AS expired, held_at IS NOT NULL AS held, test
    FROM runs WHERE org_id = ${orgId} AND id = ${runId}
    FOR UPDATE`;
  return rows[0];
}

/**
 * Many runs locked for their walks, in id order (one lock order for every batch), as `runsLockForWalk` reads one;
 * a run another transaction holds is skipped, not waited for (the caller hands it to the engine).
 */
export function runsLockForWalkMany(tx: Tx, targets: { orgId: string; runId: string }[]): Promise<RunRow[]> {
  return tx.$queryRaw<RunRow[]>`
    SELECT id, org_id AS "orgId", automation_id AS "automationId", version_id AS "versionId", status, input,
           cancel_requested_at IS NOT NULL AS "cancelRequested", max_steps AS "maxSteps",
           COALESCE(expires_at <= now(), false) AS expired, held_at IS NOT NULL AS held, test
    FROM runs
    WHERE (org_id, id) IN (SELECT * FROM unnest(${targets.map((t) => t.orgId)}::text[], ${targets.map((t) => t.runId)}::text[]))
    ORDER BY id
    FOR UPDATE SKIP LOCKED`;
}

/**
 * Marks progress on running runs (a walk that changed something and did not finish them): seq only, which no index
 * holds, so the update is HOT; the progress itself is in the steps' rows.
 */
export async function runsTouch(tx: Tx, runIds: string | string[]): Promise<number> {
  const ids = typeof runIds === "string" ? [runIds] : runIds;
  if (ids.length === 0) return 0;
  return tx.$executeRaw`UPDATE runs SET seq = seq + 1 WHERE id = ANY(${ids}::text[])`;
}

/** How a walk ends a run. */
export interface RunFinish {
  runId: string;
  status: "completed" | "failed" | "cancelled";
  error: Record<string, unknown> | null;
}

/** Ends running runs, each with its status and error, in one statement. */
export async function runsFinish(tx: Tx, finishes: RunFinish[]): Promise<number> {
  if (finishes.length === 0) return 0;
  return tx.$executeRaw(runsFinishSql(finishes));
}

/**
 * The ids are given twice: as an array for the primary key, and in the records. Joined only to jsonb_to_recordset
 * (which the planner takes for 100 rows), the update read every row of `runs` (a hash join over a sequential scan)
 * whenever the table was small enough for that to look cheaper: 2.6 ms a run ended at 5,000 runs, against 0.2
 * through the index (docs/performance.md).
 */
export function runsFinishSql(finishes: RunFinish[]): Prisma.Sql {
  return Prisma.sql`
    UPDATE runs r SET status = f.status, error = f.error, finished_at = now(), updated_at = now(), seq = r.seq + 1, held_at = NULL
    FROM jsonb_to_recordset(${JSON.stringify(finishes)}::jsonb) AS f("runId" text, status text, error jsonb)
    WHERE r.id = ANY(${finishes.map((f) => f.runId)}::text[]) AND r.id = f."runId" AND r.status = 'running'`;
}

export function runsRequestCancel(tx: Tx, orgId: string, runId: string, reason: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE runs SET cancel_requested_at = now(), cancel_reason = ${reason}, updated_at = now(), seq = seq + 1
    WHERE org_id = ${orgId} AND id = ${runId} AND status = 'running' AND cancel_requested_at IS NULL`;
}

export interface StalledRun {
  orgId: string;
  runId: string;
}

/**
 * Sweeper: running runs with no way forward right now: no open step (ready, running, waiting or parked; or a cancel
 * waiting on no step in flight), no unsent outbox row, and no progress for `staleSeconds`. Typically a settled step
 * whose run.wake was lost, or a start whose wake-up was dropped. They get a fresh run.wake (at most once per
 * `staleSeconds`, by swept_at). A parked run is not stalled: it waits for a person, and it gains no rows. Progress is
 * read from the steps (each settle writes its step's updated_at); the run's own updated_at moves only when its state
 * does, so it only narrows the candidates.
 */
export function runsFindStalled(tx: Tx, staleSeconds: number, limit: number): Promise<StalledRun[]> {
  return tx.$queryRaw<StalledRun[]>`
    WITH stalled AS (
      SELECT r.id FROM runs r
      WHERE r.status = 'running'
        -- A held run is quiet on purpose: its resume wakes it.
        AND r.held_at IS NULL
        AND r.updated_at < now() - make_interval(secs => ${staleSeconds})
        AND (r.swept_at IS NULL OR r.swept_at < now() - make_interval(secs => ${staleSeconds}))
        AND (
          NOT EXISTS (
            SELECT 1 FROM steps s WHERE s.run_id = r.id
              -- A parked step waits for a person (reconnect, review, resume), whose action wakes the run: it is
              -- not lost, and re-waking it every interval only grew its timeline.
              AND (s.status IN ('ready', 'running', 'waiting', 'parked') OR s.updated_at >= now() - make_interval(secs => ${staleSeconds})))
          -- A cancel waits only for a step in flight; once none holds a live lease the engine must finish it.
          OR (r.cancel_requested_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'running' AND s.lease_until >= now())))
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL)
      ORDER BY r.updated_at
      LIMIT ${limit}
      FOR UPDATE OF r SKIP LOCKED
    ), moved AS (
      UPDATE runs r SET swept_at = now() FROM stalled WHERE r.id = stalled.id RETURNING r.id, r.org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'sweep') FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker) SELECT org_id, id, 'run.rewoken', 'sweeper' FROM moved
    )
    SELECT org_id AS "orgId", id AS "runId" FROM moved`;
}

/**
 * Sweeper: running runs past their age budget (`expires_at`), however quiet (a long wait): each gets a run.wake so
 * the engine's walk stops it with the reason (at most once per `staleSeconds`, by swept_at).
 */
export function runsWakeExpired(tx: Tx, staleSeconds: number, limit: number): Promise<StalledRun[]> {
  return tx.$queryRaw<StalledRun[]>`
    WITH expired AS (
      SELECT r.id FROM runs r
      WHERE r.status = 'running' AND r.expires_at <= now()
        AND (r.swept_at IS NULL OR r.swept_at < now() - make_interval(secs => ${staleSeconds}))
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL AND o.topic = 'run.wake')
      ORDER BY r.expires_at
      LIMIT ${limit}
      FOR UPDATE OF r SKIP LOCKED
    ), moved AS (
      UPDATE runs r SET swept_at = now() FROM expired WHERE r.id = expired.id RETURNING r.id, r.org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'sweep') FROM moved
    )
    SELECT org_id AS "orgId", id AS "runId" FROM moved`;
}

/**
 * The run's contact: one row per (org, lower-cased email), created on first sight, its attributes updated from the
 * payload's (holdfast_contact_resolve).
 */
export async function contactsResolve(tx: Tx, orgId: string, email: string, timeZone: string | null, attributes: Record<string, unknown> = {}): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string | null }[]>`SELECT holdfast_contact_resolve(${orgId}, ${email}, ${timeZone}::text, ${JSON.stringify(attributes)}::jsonb) AS id`;
  return rows[0]?.id ?? null;
}

/**
 * Pause with "hold running runs": the automation's running runs take no next step until resume. Each gets a
 * run.held timeline row. Runs being cancelled are left to finish their cancellation.
 */
export async function runsHoldForAutomation(tx: Tx, orgId: string, automationId: string, by: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH held AS (
      UPDATE runs SET held_at = now(), updated_at = now()
      WHERE org_id = ${orgId} AND automation_id = ${automationId} AND status = 'running'
        AND held_at IS NULL AND cancel_requested_at IS NULL
      RETURNING id, org_id
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker, data)
      SELECT org_id, id, 'run.held', ${by}, '{"reason":"the automation was paused with its running runs held"}'::jsonb FROM held
    )
    SELECT count(*)::int AS n FROM held`;
  return rows[0]?.n ?? 0;
}

/** Resume: the automation's held runs go on; each gets a run.wake (the engine walks it) and a run.released row. */
export async function runsReleaseForAutomation(tx: Tx, orgId: string, automationId: string, by: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH released AS (
      UPDATE runs SET held_at = NULL, updated_at = now(), seq = seq + 1
      WHERE org_id = ${orgId} AND automation_id = ${automationId} AND held_at IS NOT NULL
      RETURNING id, org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'resumed') FROM released
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker) SELECT org_id, id, 'run.released', ${by} FROM released
    )
    SELECT count(*)::int AS n FROM released`;
  return rows[0]?.n ?? 0;
}

/** A run started while its automation holds deliveries: held before its first step. */
export async function runsMarkHeld(tx: Tx, orgId: string, runId: string): Promise<void> {
  const n = await tx.$executeRaw`UPDATE runs SET held_at = now() WHERE org_id = ${orgId} AND id = ${runId} AND status = 'running'`;
  if (n !== 1) throw new Error(`run ${runId} not found to hold`);
}

/** "Run again with the same input": the new run names the one it repeats. */
export async function runsMarkRerunOf(tx: Tx, orgId: string, runId: string, rerunOf: string): Promise<void> {
  const n = await tx.$executeRaw`UPDATE runs SET rerun_of = ${rerunOf} WHERE org_id = ${orgId} AND id = ${runId}`;
  if (n !== 1) throw new Error(`run ${runId} not found to link`);
}

/** Running runs of an automation (of one version when given) that Stop all runs would cancel. */
export async function runsCountRunning(tx: Tx, orgId: string, automationId: string, version: number | null): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM runs r
    WHERE r.org_id = ${orgId} AND r.automation_id = ${automationId} AND r.status = 'running'
      AND (${version}::int IS NULL OR r.version_id = (
        SELECT id FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND version = ${version}::int))`;
  return rows[0]?.n ?? 0;
}

/**
 * The next batch of running runs after `afterId` (id order), for Stop all runs: only runs started by `startedBy` (the
 * database clock when the stop began). Ids are time-ordered, so without it every run started while the stop works
 * would sort after the cursor and be stopped too, and a busy automation could keep the loop going.
 */
export function runsRunningBatch(
  tx: Tx,
  orgId: string,
  automationId: string,
  version: number | null,
  afterId: string,
  limit: number,
  startedBy: Date,
): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`
    SELECT r.id FROM runs r
    WHERE r.org_id = ${orgId} AND r.automation_id = ${automationId} AND r.status = 'running' AND r.id > ${afterId}
      AND r.created_at <= ${startedBy}
      AND (${version}::int IS NULL OR r.version_id = (
        SELECT id FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND version = ${version}::int))
    ORDER BY r.id LIMIT ${limit}`;
}

export interface RunForRetry {
  id: string;
  automationId: string;
  versionId: string;
  status: RunRow["status"];
  input: unknown;
  error: { reason?: string; nodeId?: string | null; budget?: string } | null;
  test: boolean;
  rerunOf: string | null;
}

/** A run with what retry and rerun need to decide, locked like the engine's walk. */
export async function runsLockForRetry(tx: Tx, orgId: string, runId: string): Promise<RunForRetry | null> {
  const rows = await tx.$queryRaw<RunForRetry[]>`
    SELECT id, automation_id AS "automationId", version_id AS "versionId", status, input, error, test, rerun_of AS "rerunOf"
    FROM runs WHERE org_id = ${orgId} AND id = ${runId} FOR UPDATE`;
  return rows[0] ?? null;
}

/** What Run again repeats: the run's automation, input and status (no lock: the new run is a new row). */
export async function runsForRerun(tx: Tx, orgId: string, runId: string): Promise<{ automationId: string; input: unknown; status: RunRow["status"] } | null> {
  const rows = await tx.$queryRaw<{ automationId: string; input: unknown; status: RunRow["status"] }[]>`
    SELECT automation_id AS "automationId", input, status FROM runs WHERE org_id = ${orgId} AND id = ${runId}`;
  return rows[0] ?? null;
}

/** Retry from the failed step: the failed run is running again. */
export async function runsReopenFailed(tx: Tx, orgId: string, runId: string): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now(), seq = seq + 1
      WHERE org_id = ${orgId} AND id = ${runId} AND status = 'failed'`) === 1
  );
}

/** Runs that repeat `runId` ("Run again"), newest first. */
export function runsReruns(tx: Tx, orgId: string, runId: string): Promise<{ id: string; status: string; createdAt: Date }[]> {
  return tx.$queryRaw`
    SELECT id, status, created_at AS "createdAt" FROM runs WHERE org_id = ${orgId} AND rerun_of = ${runId}
    ORDER BY created_at DESC LIMIT 20`;
}

/** The run this one repeats (Run again), if any. */
export async function runsRerunOf(tx: Tx, orgId: string, runId: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ rerunOf: string | null }[]>`SELECT rerun_of AS "rerunOf" FROM runs WHERE org_id = ${orgId} AND id = ${runId}`;
  return rows[0]?.rerunOf ?? null;
}

/** Work of the run that may still act: a step running under a live lease, or an effect in flight. */
/** The newest runs, of one organisation or of all (the operator's `runs list`). */
export function runsNewest(db: Db | Tx, orgId: string | null, limit: number): Promise<{ id: string; status: string; createdAt: Date; startKey: string }[]> {
  return orgId === null
    ? db.$queryRaw`SELECT id, status, created_at AS "createdAt", start_key AS "startKey" FROM runs ORDER BY created_at DESC LIMIT ${limit}`
    : db.$queryRaw`SELECT id, status, created_at AS "createdAt", start_key AS "startKey" FROM runs WHERE org_id = ${orgId} ORDER BY created_at DESC LIMIT ${limit}`;
}

/** A run of any organisation by its id, with its organisation (the operator's CLI, which is given run ids alone). */
export async function runsFindById(db: Db | Tx, runId: string): Promise<{ id: string; orgId: string; status: string; createdAt: Date; error: unknown } | undefined> {
  const rows = await db.$queryRaw<{ id: string; orgId: string; status: string; createdAt: Date; error: unknown }[]>`
    SELECT id, org_id AS "orgId", status, created_at AS "createdAt", error FROM runs WHERE id = ${runId}`;
  return rows[0];
}

export async function runsHasWorkInFlight(db: Db | Tx, runId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT (SELECT count(*) FROM steps WHERE run_id = ${runId} AND status = 'running' AND lease_until >= now())
         + (SELECT count(*) FROM effects WHERE run_id = ${runId} AND status = 'in_flight') AS n`;
  return Number(rows[0]?.n ?? 0) > 0;
}

/** Running runs of a version, oldest first. */
export function runsRunningOnVersion(db: Db | Tx, orgId: string, versionId: string): Promise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    SELECT id FROM runs WHERE org_id = ${orgId} AND version_id = ${versionId} AND status = 'running' ORDER BY created_at, id`;
}

/** A batch of a version's running runs by id, after `after` (keyset paging). */
export function runsRunningOnVersionAfter(db: Db | Tx, orgId: string, versionId: string, after: string, limit: number): Promise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    SELECT id FROM runs WHERE org_id = ${orgId} AND version_id = ${versionId} AND status = 'running' AND id > ${after}
    ORDER BY id LIMIT ${limit}`;
}

export async function runsCountRunningOnVersion(db: Db | Tx, orgId: string, versionId: string): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM runs WHERE org_id = ${orgId} AND version_id = ${versionId} AND status = 'running'`;
  return rows[0]?.n ?? 0;
}

/** Moves the run onto another version of its automation (a version migration; the caller holds the run's lock). */
export function runsSetVersion(tx: Tx, runId: string, versionId: string): Promise<number> {
  return tx.$executeRaw`UPDATE runs SET version_id = ${versionId} WHERE id = ${runId}`;
}

export async function runsStatus(db: Db | Tx, runId: string): Promise<RunRow["status"] | undefined> {
  const rows = await db.$queryRaw<{ status: RunRow["status"] }[]>`SELECT status FROM runs WHERE id = ${runId}`;
  return rows[0]?.status;
}

/** Runs by status, test runs apart (they are not real traffic: health and metrics count them separately). */
export function runsCountByStatus(db: Db | Tx): Promise<{ status: string; test: boolean; n: number }[]> {
  return db.$queryRaw<{ status: string; test: boolean; n: number }[]>`SELECT status, test, count(*)::int AS n FROM runs GROUP BY status, test`;
}

/**
 * Locks the run of an approval, as the engine and cancel take it (FOR NO KEY UPDATE: a timer firing's timeline
 * insert, which only key-shares the run, is not blocked).
 */
export function runsLockForApproval(tx: Tx, orgId: string, approvalId: string): Promise<unknown> {
  return tx.$queryRaw`
    SELECT r.id FROM runs r JOIN approvals a ON a.run_id = r.id AND a.org_id = r.org_id
    WHERE a.org_id = ${orgId} AND a.id = ${approvalId} FOR NO KEY UPDATE OF r`;
}

/**
 * A run's status as a person needs it: a running run that waits for a person says so, and one its paused automation
 * holds is `held` (runs/status-words.ts has the words).
 */
export const runDisplayStatuses = ["running", "held", "waiting", "parked", "needs_review", "completed", "failed", "cancelled"] as const;
export type RunDisplayStatus = (typeof runDisplayStatuses)[number];

/**
 * A cancelled run whose call's outcome nobody knows (effectUncertainSql) still needs a person: it is listed as
 * needs review until someone says what they found (reviewStoppedRunEffect).
 */
const displayStatusSql = Prisma.sql`CASE
  WHEN r.status = 'cancelled' AND EXISTS (SELECT 1 FROM effects e WHERE e.org_id = r.org_id AND e.run_id = r.id AND ${Prisma.raw(effectUncertainSql)}) THEN 'needs_review'
  WHEN r.status <> 'running' THEN r.status
  WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked' AND s.error->>'code' = 'needs_review') THEN 'needs_review'
  WHEN r.held_at IS NOT NULL THEN 'held'
  WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked') THEN 'parked'
  WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'waiting')
   AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status IN ('ready', 'running')) THEN 'waiting'
  ELSE 'running' END`;

export interface RunListItem {
  id: string;
  orgSlug: string;
  automationSlug: string;
  automationName: string;
  version: number | null;
  status: RunDisplayStatus;
  contact: string | null;
  startKey: string;
  /** Started from the editor's Test run. */
  test: boolean;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface RunListFilters {
  automation?: string;
  version?: number;
  status?: RunDisplayStatus;
  contact?: string;
}

/** The runs list: the organisations' newest runs matching the filters (contact: part of the email, taken literally). */
export async function runsListForOrgs(db: Db | Tx, orgIds: string[], f: RunListFilters, limit: number): Promise<RunListItem[]> {
  const where: Prisma.Sql[] = [Prisma.sql`r.org_id = ANY(${orgIds}::text[])`];
  if (f.automation) where.push(Prisma.sql`a.slug = ${f.automation}`);
  if (f.version !== undefined) where.push(Prisma.sql`v.version = ${f.version}`);
  if (f.contact) where.push(Prisma.sql`c.email ILIKE ${`%${f.contact.replace(/[\\%_]/g, (m) => `\\${m}`)}%`}`);
  return db.$queryRaw<RunListItem[]>`
    SELECT * FROM (
      SELECT r.id, o.slug AS "orgSlug", a.slug AS "automationSlug", a.name AS "automationName", v.version,
             ${displayStatusSql} AS status, c.email AS contact, r.start_key AS "startKey", r.test, r.created_at AS "createdAt",
             r.finished_at AS "finishedAt"
      FROM runs r
      JOIN organisations o ON o.id = r.org_id
      JOIN automations a ON a.id = r.automation_id AND a.org_id = r.org_id
      JOIN automation_versions v ON v.id = r.version_id
      LEFT JOIN contacts c ON c.id = r.contact_id AND c.org_id = r.org_id
      WHERE ${Prisma.join(where, " AND ")}
        AND ${f.status ? Prisma.sql`${displayStatusSql} = ${f.status}` : Prisma.sql`true`}
      ORDER BY r.created_at DESC, r.id DESC
      LIMIT ${limit}
    ) x`;
}

/** The run page's head: the run, its automation, version (with its graph) and contact. */
export interface RunDetailHead {
  id: string;
  orgId: string;
  status: string;
  displayStatus: RunDisplayStatus;
  /** Its automation is paused with its runs held: it takes no next step until the automation is resumed. */
  held: boolean;
  startKey: string;
  /** Started from the editor's Test run. */
  test: boolean;
  input: unknown;
  error: unknown;
  cancelRequestedAt: Date | null;
  cancelReason: string | null;
  maxSteps: number | null;
  expiresAt: Date | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** Repeated deliveries of its start key (counted; only the first 3 are on the timeline), and the latest's time. */
  duplicateDeliveries: number;
  lastDuplicateAt: Date | null;
  orgSlug: string;
  automationSlug: string;
  automationName: string;
  version: number;
  graph: unknown;
  contact: string | null;
  contactZone: string | null;
  contactConsent: string | null;
  contactId: string | null;
}

/** The run, if it belongs to one of the organisations. */
export async function runsDetailHead(db: Db | Tx, orgIds: string[], id: string): Promise<RunDetailHead | undefined> {
  const rows = await db.$queryRaw<RunDetailHead[]>`
    SELECT r.id, r.org_id AS "orgId", r.status, ${displayStatusSql} AS "displayStatus", r.held_at IS NOT NULL AS held, r.start_key AS "startKey", r.test, r.input,
           r.error, r.cancel_requested_at AS "cancelRequestedAt", r.cancel_reason AS "cancelReason", r.max_steps AS "maxSteps",
           r.expires_at AS "expiresAt", r.created_at AS "createdAt", r.finished_at AS "finishedAt",
           r.duplicate_deliveries AS "duplicateDeliveries", r.last_duplicate_at AS "lastDuplicateAt",
           o.slug AS "orgSlug", a.slug AS "automationSlug", a.name AS "automationName", v.version, v.graph, c.email AS contact,
           c.time_zone AS "contactZone", c.consent AS "contactConsent", c.id AS "contactId"
    FROM runs r
    JOIN organisations o ON o.id = r.org_id
    JOIN automations a ON a.id = r.automation_id AND a.org_id = r.org_id
    JOIN automation_versions v ON v.id = r.version_id
    LEFT JOIN contacts c ON c.id = r.contact_id AND c.org_id = r.org_id
    WHERE r.id = ${id} AND r.org_id = ANY(${orgIds}::text[])`;
  return rows[0];
}

/**
 * Finished runs whose timeline is older than the retention and still there, oldest first (the partial index
 * runs_timeline_retention_idx holds only these). Locked so a retry reopening one waits for the batch; SKIP LOCKED:
 * a run someone is acting on is left for the next pass. A running run never matches.
 */
export function runsTakeTimelineExpired(tx: Tx, retentionDays: number, limit: number): Promise<{ id: string; orgId: string }[]> {
  return tx.$queryRaw<{ id: string; orgId: string }[]>`
    SELECT id, org_id AS "orgId" FROM runs
    WHERE status IN ('completed', 'failed', 'cancelled') AND (timeline_removed_at IS NULL OR timeline_removed_at < finished_at)
      AND finished_at < now() - make_interval(days => ${retentionDays}::int)
    ORDER BY finished_at LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

/** Of these runs (locked by the caller), those with no timeline row left are marked removed, now. */
export function runsMarkTimelineRemovedIfEmpty(tx: Tx, runIds: string[]): Promise<{ id: string; orgId: string }[]> {
  return tx.$queryRaw<{ id: string; orgId: string }[]>`
    UPDATE runs r SET timeline_removed_at = now()
    WHERE r.id = ANY(${runIds}::text[]) AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id)
    RETURNING r.id, r.org_id AS "orgId"`;
}
