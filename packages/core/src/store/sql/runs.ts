import { type Db, Prisma, queryNamed, type Sql, type Tx } from "@holdfast/db";
import { type StartTargetGuard, startTargetGuard } from "./automations";
import type { PlanRows } from "./plan-rows";

/**
 * A run's row as starts, the walk's lock, the applier and version migrations use it. The other statements on runs have
 * a file each by job: runs-sweep.ts (the sweeper's), runs-of-automation.ts (pause, resume, stop all), runs-retry.ts
 * (retry and run again) and runs-view.ts (lists, pages and counts).
 */

export interface RunRow {
  id: string;
  orgId: string;
  automationId: string;
  versionId: string;
  status: "running" | "completed" | "failed" | "cancelled" | "converted";
  input: unknown;
  cancelRequested: boolean;
  /** The goal that is ending it (runs.goal_met, set with cancel_requested_at): the walk ends it converted. */
  goalMet?: "replied" | "clicked" | "event" | null;
  /** Budgets (set at start): steps it may execute (null: none set), and whether its age limit has passed. */
  maxSteps?: number | null;
  expired?: boolean;
  /** Held by its paused automation: the walk schedules no next step (lifecycle.ts). */
  held?: boolean;
  /** A test run: its waits count on its virtual clock (test_runs), its approvals are decided on its page. */
  test?: boolean;
}

/**
 * One logical run per (org_id, start_key): the unique key refuses the second start, whoever races. A test run is
 * inserted as one (`test`), so the journey counts' trigger never counts its start (count_run.sql).
 */
export async function runsInsertIfNew(
  tx: Tx,
  run: { orgId: string; automationId: string; versionId: string; startKey: string; input: unknown; contactId?: string | null; test?: boolean },
): Promise<{ id: string; inserted: boolean }> {
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO runs (org_id, automation_id, version_id, start_key, input, contact_id, test)
    VALUES (${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey}, ${JSON.stringify(run.input)}::jsonb, ${run.contactId ?? null},
            ${run.test === true})
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
  run: { orgId: string; automationId: string; versionId: string; input: unknown; contactId?: string | null; test?: boolean },
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
           cancel_requested_at IS NOT NULL AS "cancelRequested", goal_met AS "goalMet", max_steps AS "maxSteps",
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
           cancel_requested_at IS NOT NULL AS "cancelRequested", goal_met AS "goalMet", max_steps AS "maxSteps",
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
  status: "completed" | "failed" | "cancelled" | "converted";
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

/**
 * A goal met: the contact's running runs of the automation (not test runs, not those already being cancelled) are
 * asked to end, as a cancel is, with the goal that ends them (the walk then ends them converted). The ids, in order.
 */
export function runsRequestGoalEnd(
  tx: Tx,
  r: { orgId: string; automationId: string; contactId: string; goal: "replied" | "clicked" | "event"; reason: string },
): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`
    UPDATE runs SET cancel_requested_at = now(), cancel_reason = ${r.reason}, goal_met = ${r.goal}, updated_at = now(), seq = seq + 1
    WHERE contact_id = ${r.contactId} AND org_id = ${r.orgId} AND automation_id = ${r.automationId}
      AND status = 'running' AND NOT test AND cancel_requested_at IS NULL
    RETURNING id`;
}

/** A run's automation and contact, with the automation's goal (a reply to its email may meet it). */
export async function runsGoalOf(
  tx: Tx,
  orgId: string,
  runId: string,
): Promise<{ automationId: string; contactId: string | null; test: boolean; goal: "replied" | "clicked" | "event" | null } | undefined> {
  const rows = await tx.$queryRaw<{ automationId: string; contactId: string | null; test: boolean; goal: "replied" | "clicked" | "event" | null }[]>`
    SELECT r.automation_id AS "automationId", r.contact_id AS "contactId", r.test, a.goal
    FROM runs r JOIN automations a ON a.org_id = r.org_id AND a.id = r.automation_id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}`;
  return rows[0];
}

/**
 * The run's contact: one row per (org, lower-cased email), created on first sight, its attributes updated from the
 * payload's (holdfast_contact_resolve).
 */
export async function contactsResolve(tx: Tx, orgId: string, email: string, timeZone: string | null, attributes: Record<string, unknown> = {}): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string | null }[]>`SELECT holdfast_contact_resolve(${orgId}, ${email}, ${timeZone}::text, ${JSON.stringify(attributes)}::jsonb) AS id`;
  return rows[0]?.id ?? null;
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

/** Work of the run that may still act: a step running under a live lease, or an effect in flight. */
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
 * The versions that have running runs, with their organisations, `limit` at most: a loose scan of
 * runs_running_version_idx (one probe a version, not a read of every running run). The set path's plans are learnt
 * from these (run/engine/timer-plans.ts) before a spike's batches need them.
 */
export function runsRunningVersions(tx: Tx, limit: number): Promise<{ orgId: string; versionId: string }[]> {
  return tx.$queryRaw<{ orgId: string; versionId: string }[]>`
    WITH RECURSIVE v(version_id, n) AS (
      (SELECT version_id, 1 FROM runs WHERE status = 'running' ORDER BY version_id LIMIT 1)
      UNION ALL
      SELECT (SELECT r.version_id FROM runs r WHERE r.status = 'running' AND r.version_id > v.version_id ORDER BY r.version_id LIMIT 1), v.n + 1
      FROM v WHERE v.version_id IS NOT NULL AND v.n < ${limit}
    )
    SELECT a.org_id AS "orgId", a.id AS "versionId" FROM v JOIN automation_versions a ON a.id = v.version_id`;
}
