import { Prisma, queryNamed, type Sql, type Tx } from "@holdfast/db";
import { type StartTargetGuard, startTargetGuard } from "./automations";
import type { PlanRows } from "./plan-rows";
import { type ReadyWake, readyWakeSetting } from "./runs";

/**
 * trigger_deliveries: what each request to a trigger URL came to. Never a body (a refused request may be anyone's;
 * an accepted one links to the run whose input holds its payload). The inserts keep the table bounded without a
 * sweeper: an insert asked to `prune` also deletes its automation's rows beyond the newest `deliveriesKept` (and
 * refusals beyond the newest `refusedKept`), in the
 * same statement (run/start/deliveries.ts asks on every 8th delivery of an automation in a process).
 */
export const deliveriesKept = 50;
/** Refusals are kept apart, at most this many: a flood of bad requests (anyone can send them) never pushes out real deliveries. */
export const refusedKept = 10;

export type DeliveryOutcome = "accepted" | "duplicate" | "refused";

export interface DeliveryRow {
  outcome: DeliveryOutcome;
  status: number;
  reason: string | null;
  startKey: string | null;
  webhookId: string | null;
  runId: string | null;
  contentType: string | null;
  bodyBytes: number | null;
}

/**
 * Rows of the automation named by the insert CTE `d` beyond the newest `deliveriesKept` accepted or repeated ones,
 * and beyond the newest `refusedKept` refusals. The statement's snapshot
 * does not see its own insert, so it keeps one fewer of the older rows. SKIP LOCKED: a row another insert is
 * deleting is left to it rather than waited for. Old rows only: nothing the hot path writes or reads is locked.
 * Only in the statements that prune: even a branch that never runs is planned, and planning it cost ~0.6 ms.
 */
const pruneBeyondKept = (prune: boolean) =>
  prune
    ? Prisma.sql`, p AS (
        DELETE FROM trigger_deliveries WHERE id IN (
          SELECT t.id FROM trigger_deliveries t, d
          WHERE t.org_id = d.org_id AND t.automation_id = d.automation_id AND t.outcome <> 'refused'
          ORDER BY t.seq DESC
          OFFSET ${deliveriesKept - 1}
          FOR UPDATE OF t SKIP LOCKED)
        OR id IN (
          SELECT t.id FROM trigger_deliveries t, d
          WHERE t.org_id = d.org_id AND t.automation_id = d.automation_id AND t.outcome = 'refused'
          ORDER BY t.seq DESC
          OFFSET ${refusedKept - 1}
          FOR UPDATE OF t SKIP LOCKED))`
    : Prisma.empty;

const values = (r: DeliveryRow) =>
  Prisma.sql`${r.outcome}, ${r.status}::int, ${r.reason}, ${r.startKey}, ${r.webhookId}, ${r.runId}, ${r.contentType}, ${r.bodyBytes}::int`;

/** Records a delivery of an automation known by id (inside the run start's transaction on the engine's path). */
export async function triggerDeliveriesInsert(tx: Tx, orgId: string, automationId: string, row: DeliveryRow, prune: boolean): Promise<string> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH d AS (
      INSERT INTO trigger_deliveries (org_id, automation_id, outcome, status, reason, start_key, webhook_id, run_id, content_type, body_bytes)
      VALUES (${orgId}, ${automationId}, ${values(row)})
      RETURNING id, org_id, automation_id
    )${pruneBeyondKept(prune)}
    SELECT id FROM d`;
  return rows[0]?.id as string;
}

/**
 * Records a refused delivery of the automation with this slug in the organisation; writes nothing (false) when
 * there is no such automation. The refusal happened before or instead of a start, so this is its own statement.
 */
export async function triggerDeliveriesInsertBySlug(
  tx: Tx,
  orgId: string,
  automationSlug: string,
  row: DeliveryRow,
  prune: boolean,
): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH d AS (
      INSERT INTO trigger_deliveries (org_id, automation_id, outcome, status, reason, start_key, webhook_id, run_id, content_type, body_bytes)
      SELECT a.org_id, a.id, ${values(row)} FROM automations a WHERE a.org_id = ${orgId} AND a.slug = ${automationSlug}
      RETURNING id, org_id, automation_id
    )${pruneBeyondKept(prune)}
    SELECT id FROM d`;
  return rows.length > 0;
}

/**
 * The accepted path in one statement: holdfast_run_start (the run, its timeline, its first walk), the delivery row
 * naming that run (accepted, or duplicate when the start key was already taken) and the prune. One statement is
 * one transaction, so a crash leaves both or neither. `sampleIfNone`: the automation has no sample yet (as read by
 * the start's lookup), so a new run's input becomes it; otherwise the automations row is not touched at all.
 */
export async function triggerDeliveriesStartRun(
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
    readyWake: ReadyWake;
  },
  delivery: {
    status: { accepted: number; duplicate: number };
    webhookId: string | null;
    contentType: string | null;
    bodyBytes: number;
    sampleIfNone: boolean;
    prune: boolean;
  },
  guard?: StartTargetGuard,
): Promise<{ runId: string; inserted: boolean } | null> {
  const input = JSON.stringify(run.input);
  const sample = delivery.sampleIfNone
    ? Prisma.sql`, u AS (
        UPDATE automations SET sample_input = ${input}::jsonb
        WHERE org_id = ${run.orgId} AND id = ${run.automationId} AND sample_input IS NULL AND (SELECT (r->>'inserted')::boolean FROM s))`
    : Prisma.empty;
  // Eight texts (with or without the sample's update, the prune and the guard), each its own named statement.
  const name = `holdfast_delivery_start_${delivery.sampleIfNone ? "s" : ""}${delivery.prune ? "p" : ""}${guard ? "g" : ""}`;
  const { rows } = await queryNamed<{ r: { runId: string; inserted: boolean } }>(sql, name, Prisma.sql`
    WITH w AS MATERIALIZED (${readyWakeSetting(run.readyWake)}${startTargetGuard(guard)}), s AS (
      SELECT holdfast_run_start(${run.id}, ${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey},
        ${input}::jsonb, ${JSON.stringify(run.eventData)}::jsonb, ${JSON.stringify(run.rows)}::jsonb,
        holdfast_contact_resolve(${run.orgId}, ${run.contact?.email ?? null}::text, ${run.contact?.timeZone ?? null}::text,
        ${JSON.stringify(run.contact?.attributes ?? {})}::jsonb)) AS r
      FROM w
    ), d AS (
      INSERT INTO trigger_deliveries (org_id, automation_id, outcome, status, start_key, webhook_id, run_id, content_type, body_bytes)
      SELECT ${run.orgId}, ${run.automationId},
             CASE WHEN (r->>'inserted')::boolean THEN 'accepted' ELSE 'duplicate' END,
             CASE WHEN (r->>'inserted')::boolean THEN ${delivery.status.accepted}::int ELSE ${delivery.status.duplicate}::int END,
             ${run.startKey}, ${delivery.webhookId}, r->>'runId', ${delivery.contentType}, ${delivery.bodyBytes}::int
      FROM s
      RETURNING org_id, automation_id
    )${pruneBeyondKept(delivery.prune)}${sample}
    SELECT r FROM s`);
  const r = rows[0]?.r;
  if (r) return r;
  if (guard) return null; // the kept start target is stale: nothing was written
  throw new Error(`start of ${run.startKey} returned nothing`);
}

export interface DeliveryView {
  id: string;
  receivedAt: Date;
  outcome: DeliveryOutcome;
  status: number;
  reason: string | null;
  startKey: string | null;
  webhookId: string | null;
  runId: string | null;
  contentType: string | null;
  bodyBytes: number | null;
  /** When the delivery's run started (a repeated delivery names the first one's time). */
  runStartedAt: Date | null;
}

/** The automation's newest deliveries, newest first. */
export function triggerDeliveriesList(tx: Tx, orgId: string, automationId: string, limit: number): Promise<DeliveryView[]> {
  return tx.$queryRaw<DeliveryView[]>`
    SELECT d.id, d.received_at AS "receivedAt", d.outcome, d.status, d.reason, d.start_key AS "startKey", d.webhook_id AS "webhookId",
           d.run_id AS "runId", d.content_type AS "contentType", d.body_bytes AS "bodyBytes", r.created_at AS "runStartedAt"
    FROM trigger_deliveries d
    LEFT JOIN runs r ON r.org_id = d.org_id AND r.id = d.run_id
    WHERE d.org_id = ${orgId} AND d.automation_id = ${automationId}
    ORDER BY d.seq DESC
    LIMIT ${limit}`;
}

export function triggerDeliveriesCount(tx: Tx, orgId: string, automationId: string): Promise<number> {
  return tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM trigger_deliveries WHERE org_id = ${orgId} AND automation_id = ${automationId}`.then((r) => r[0]?.n ?? 0);
}
