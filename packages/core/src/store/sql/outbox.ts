import { type Db, Prisma, type Tx } from "@holdfast/db";
import type { Topic } from "../../base/catalog";

export interface OutboxRow {
  orgId: string;
  runId: string;
  topic: Topic;
  payload: Record<string, unknown>;
  /** Delay before the message should be delivered (retries with backoff). */
  delayMs?: number;
}

export async function outboxInsert(tx: Tx, rows: OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(
    (r) =>
      Prisma.sql`(${r.orgId}, ${r.runId}, ${r.topic}, ${JSON.stringify(r.payload)}::jsonb,
                  now() + make_interval(secs => ${(r.delayMs ?? 0) / 1000}))`,
  );
  await tx.$executeRaw`INSERT INTO outbox (org_id, run_id, topic, payload, available_at) VALUES ${Prisma.join(values)}`;
}

/**
 * A run's unsent run.wake rows written by its timers' firings, marked sent: the walk in the caller's transaction does
 * what they would ask for (the fast path's backstops, run/timers/fire.ts).
 */
export function outboxWithdrawTimerWakes(tx: Tx, orgId: string, runId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE outbox SET sent_at = now()
    WHERE run_id = ${runId} AND org_id = ${orgId} AND sent_at IS NULL AND topic = 'run.wake' AND payload->>'reason' = 'timer_fired'`;
}

export interface UnsentOutboxRow {
  id: bigint;
  /** Stable per row and unique across database resets (ids restart; Redis may still hold old job ids); a timer's
   * wake-up is named by its timer id and wake number, so a recompute's new job never collides with the old one. */
  jobId: string;
  delayMs: number;
  topic: string;
  payload: unknown;
}

/**
 * The relay's batch: the oldest due unsent rows no other relay holds. Rows not yet due (a retry's backoff, a
 * wake-up held for a worker's local dispatch) wait here, by the database clock, not in Redis; a step.ready row waits
 * `stepReadyGraceMs` more for its lane's workers to take it themselves (run/steps/ready-listener.ts).
 */
export function outboxClaimUnsent(tx: Tx, limit: number, stepReadyGraceMs = 0): Promise<UnsentOutboxRow[]> {
  return tx.$queryRaw<UnsentOutboxRow[]>`
    SELECT id, topic, payload,
           CASE WHEN topic = 'timer.due' THEN (payload->>'timerId') || '_' || (payload->>'wake')
                ELSE 'obx_' || id || '_' || (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint END AS "jobId",
           -- A timer's fast path: published now, delivered by the queue at due_at (by the database clock).
           CASE WHEN topic = 'timer.due'
                THEN GREATEST(0, EXTRACT(EPOCH FROM ((payload->>'dueAt')::timestamptz - now())) * 1000)
                ELSE 0 END::float8 AS "delayMs"
    FROM outbox
    WHERE sent_at IS NULL AND available_at <= now()
      -- A step's wake-up is first its lane workers' to take (they LISTEN); the relay publishes it after the grace.
      AND (topic <> 'step.ready' OR available_at <= now() - make_interval(secs => ${stepReadyGraceMs / 1000}))
    ORDER BY available_at, id
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

export function outboxMarkSent(tx: Tx, ids: bigint[]): Promise<number> {
  return tx.$executeRaw`UPDATE outbox SET sent_at = now() WHERE id = ANY(${ids.map(String)}::bigint[])`;
}

/**
 * Sent rows older than the retention are history nobody reads; delete them in bounded batches. The scan stops at
 * the first row created after the cutoff (a row is sent after it is written, so none past it qualifies): without
 * that bound a pass with little to delete read the whole day of younger rows (about 0.5 s per million, every pass).
 */
export function outboxDeleteSentBefore(tx: Tx, retentionSeconds: number, limit: number): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox
      WHERE sent_at IS NOT NULL AND sent_at < now() - make_interval(secs => ${retentionSeconds})
        AND id < COALESCE(
          (SELECT y.id FROM outbox y WHERE y.created_at >= now() - make_interval(secs => ${retentionSeconds}) ORDER BY y.id LIMIT 1),
          9223372036854775807)
      ORDER BY id LIMIT ${limit})`;
}

/**
 * Wake-ups without Redis (WAKEUPS=poll): a consumer takes due rows of its topic (and lane) straight from the outbox,
 * marking them sent as it takes them. SKIP LOCKED lets any number of consumers poll side by side.
 */
export function outboxTakeDue(tx: Tx, topic: Topic, lane: string | null, limit: number): Promise<{ payload: unknown }[]> {
  return tx.$queryRaw<{ payload: unknown }[]>`
    UPDATE outbox SET sent_at = now()
    WHERE id IN (
      SELECT id FROM outbox
      WHERE sent_at IS NULL AND available_at <= now() AND topic = ${topic}
        AND (topic <> 'timer.due' OR (payload->>'dueAt')::timestamptz <= now())
        AND (${lane}::text IS NULL OR payload->>'lane' = ${lane}::text)
      ORDER BY available_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING payload`;
}

/** Due unsent rows and the age of the oldest (seconds). */
export async function outboxBacklog(db: Db | Tx): Promise<{ backlog: number; oldestSeconds: number }> {
  const rows = await db.$queryRaw<{ backlog: number; oldestSeconds: number }[]>`
    SELECT count(*)::int AS backlog, COALESCE(EXTRACT(EPOCH FROM now() - min(available_at)), 0)::float8 AS "oldestSeconds"
    FROM outbox WHERE sent_at IS NULL AND available_at <= now()`;
  return rows[0] as { backlog: number; oldestSeconds: number };
}

/** The channel holdfast_notify_outbox (store/sql/functions/notify_outbox.sql) notifies when a due row is inserted. */
export const outboxChannel = "holdfast_outbox";

/** The channel it notifies for a lane when a due step.ready row of that lane is inserted (lane workers LISTEN). */
export const readyChannel = (lane: string): string => `holdfast_ready_${lane}`;

/** Subscribes a dedicated connection (plain pg, outside the pool) to one of the outbox's channels. */
export async function outboxListen(client: { query(text: string): Promise<unknown> }, channel: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  await client.query(`LISTEN ${channel}`);
}
