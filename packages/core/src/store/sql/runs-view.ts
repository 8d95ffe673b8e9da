import { type Db, Prisma, type Tx } from "@holdfast/db";
import { effectUncertainSql } from "./effects";
import type { RunRow } from "./runs";

/** Runs as people see them: the runs list, the run page's head, a status, and counts. */

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

export async function runsStatus(db: Db | Tx, runId: string): Promise<RunRow["status"] | undefined> {
  const rows = await db.$queryRaw<{ status: RunRow["status"] }[]>`SELECT status FROM runs WHERE id = ${runId}`;
  return rows[0]?.status;
}

/** Runs by status, test runs apart (they are not real traffic: health and metrics count them separately). */
export function runsCountByStatus(db: Db | Tx): Promise<{ status: string; test: boolean; n: number }[]> {
  return db.$queryRaw<{ status: string; test: boolean; n: number }[]>`SELECT status, test, count(*)::int AS n FROM runs GROUP BY status, test`;
}

/**
 * A run's status as a person needs it: a running run that waits for a person says so, and one its paused automation
 * holds is `held` (run/runs/status-words.ts has the words).
 */
export const runDisplayStatuses = ["running", "held", "waiting", "parked", "needs_review", "completed", "failed", "cancelled", "converted"] as const;
export type RunDisplayStatus = (typeof runDisplayStatuses)[number];

/**
 * A cancelled run whose call's outcome nobody knows (effectUncertainSql) still needs a person: it is listed as
 * needs review until someone says what they found (reviewStoppedRunEffect).
 */
const displayStatusSql = Prisma.sql`CASE
  WHEN r.status IN ('cancelled', 'converted') AND EXISTS (SELECT 1 FROM effects e WHERE e.org_id = r.org_id AND e.run_id = r.id AND ${Prisma.raw(effectUncertainSql)}) THEN 'needs_review'
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
  /** These runs only (the runs behind a count on the canvas, a page of run/counts' runsAtCount). */
  ids?: string[];
}

/** The runs list: the organisations' newest runs matching the filters (contact: part of the email, taken literally). */
export async function runsListForOrgs(db: Db | Tx, orgIds: string[], f: RunListFilters, limit: number): Promise<RunListItem[]> {
  const where: Prisma.Sql[] = [Prisma.sql`r.org_id = ANY(${orgIds}::text[])`];
  if (f.automation) where.push(Prisma.sql`a.slug = ${f.automation}`);
  if (f.version !== undefined) where.push(Prisma.sql`v.version = ${f.version}`);
  if (f.ids) where.push(Prisma.sql`r.id = ANY(${f.ids}::text[])`);
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
  automationId: string;
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
    SELECT r.id, r.org_id AS "orgId", r.automation_id AS "automationId", r.status, ${displayStatusSql} AS "displayStatus", r.held_at IS NOT NULL AS held,
           r.start_key AS "startKey", r.test, r.input, r.error, r.cancel_requested_at AS "cancelRequestedAt", r.cancel_reason AS "cancelReason", r.max_steps AS "maxSteps",
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
