import { type ApprovalRow, approvalsForRun, effectUncertainSql, effectsUncertainOfRun, type Graph, graphSchema, runEventsForRun, type TimelineEntry, type UncertainEffect } from "@holdfast/core";
import { Prisma } from "@holdfast/db";
import type { Db } from "@holdfast/db";

/**
 * What the runs list and the run page read. Every query is scoped by the organisations the signed-in user belongs
 * to (`orgIds`): a run of another organisation is "not found", never shown.
 */

/** A run's status as a person needs it: a running run that waits for a person says so. */
export const displayStatuses = ["running", "waiting", "parked", "needs_review", "completed", "failed", "cancelled"] as const;
export type DisplayStatus = (typeof displayStatuses)[number];

/**
 * A cancelled run whose call's outcome nobody knows (effectUncertainSql) still needs a person: it is listed as
 * needs review until someone says what they found (reviewStoppedRunEffect).
 */
const displayStatusSql = Prisma.sql`CASE
  WHEN r.status = 'cancelled' AND EXISTS (SELECT 1 FROM effects e WHERE e.org_id = r.org_id AND e.run_id = r.id AND ${Prisma.raw(effectUncertainSql)}) THEN 'needs_review'
  WHEN r.status <> 'running' THEN r.status
  WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked' AND s.error->>'code' = 'needs_review') THEN 'needs_review'
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
  status: DisplayStatus;
  contact: string | null;
  startKey: string;
  /** Started from the editor's Test run. */
  test: boolean;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface RunFilters {
  automation?: string;
  version?: number;
  status?: DisplayStatus;
  contact?: string;
}

export async function listRuns(db: Db, orgIds: string[], f: RunFilters, limit = 100): Promise<RunListItem[]> {
  if (orgIds.length === 0) return [];
  const where: Prisma.Sql[] = [Prisma.sql`r.org_id = ANY(${orgIds}::text[])`];
  if (f.automation) where.push(Prisma.sql`a.slug = ${f.automation}`);
  if (f.version !== undefined) where.push(Prisma.sql`v.version = ${f.version}`);
  if (f.contact) where.push(Prisma.sql`c.email ILIKE ${`%${f.contact.replace(/[\\%_]/g, (m) => `\\${m}`)}%`}`);
  const rows = await db.$queryRaw<RunListItem[]>`
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
  return rows;
}

/** The automations (and their published versions) of the user's organisations, for the filters. */
export async function automationsFor(db: Db, orgIds: string[]): Promise<{ slug: string; name: string; versions: number[] }[]> {
  if (orgIds.length === 0) return [];
  return db.$queryRaw<{ slug: string; name: string; versions: number[] }[]>`
    SELECT a.slug, a.name, array_agg(v.version ORDER BY v.version) AS versions
    FROM automations a JOIN automation_versions v ON v.automation_id = a.id
    WHERE a.org_id = ANY(${orgIds}::text[]) AND v.published_at IS NOT NULL
    GROUP BY a.slug, a.name ORDER BY a.name`;
}

export interface StepView {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: string;
  status: string;
  attempt: number;
  maxAttempts: number;
  /** Times given back unstarted for want of a connection slot: `attempt` counts them, real attempts do not. */
  deferrals: number;
  owner: string | null;
  leaseUntil: Date | null;
  availableAt: Date;
  output: unknown;
  error: { code?: string; message?: string; reason?: string; key?: string } | null;
  createdAt: Date;
  settledAt: Date | null;
}

export interface EffectView {
  key: string;
  kind: string;
  status: string;
  attempts: number;
  providerIdempotent: boolean | null;
  result: unknown;
  error: unknown;
  stepId: string;
  firstAttemptAt: Date;
  settledAt: Date | null;
}

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

export interface SignalView {
  id: string;
  kind: string;
  identity: string;
  receivedAt: Date;
  consumedAt: Date | null;
  stepId: string | null;
  payload: unknown;
  /** Why this signal can never move the run (e.g. a reply from someone other than the recipient). */
  unmatchedReason: string | null;
}

export interface RunDetail {
  run: {
    id: string;
    orgId: string;
    status: string;
    displayStatus: DisplayStatus;
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
  };
  orgSlug: string;
  automationSlug: string;
  automationName: string;
  version: number;
  contact: string | null;
  /** The contact's stored zone, consent and id (the run page shows their time beside the viewer's). */
  contactZone: string | null;
  contactConsent: string | null;
  contactId: string | null;
  graph: Graph | null;
  steps: StepView[];
  effects: EffectView[];
  /** Calls whose outcome nobody knows: a cancelled run with any is listed as needs review. */
  uncertain: UncertainEffect[];
  timers: TimerView[];
  signals: SignalView[];
  approvals: ApprovalRow[];
  timeline: TimelineEntry[];
}

export async function runDetail(db: Db, orgIds: string[], id: string): Promise<RunDetail | null> {
  if (orgIds.length === 0 || !/^run_[0-9a-f]{32}$/.test(id)) return null;
  const [head] = await db.$queryRaw<(RunDetail["run"] & Pick<RunDetail, "orgSlug" | "automationSlug" | "automationName" | "version" | "contact" | "contactZone" | "contactConsent" | "contactId"> & { graph: unknown })[]>`
    SELECT r.id, r.org_id AS "orgId", r.status, ${displayStatusSql} AS "displayStatus", r.start_key AS "startKey", r.test, r.input,
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
  if (!head) return null;
  const orgId = head.orgId;
  const [steps, effects, timers, signals, approvals, timeline, uncertain] = await Promise.all([
    db.$queryRaw<StepView[]>`
      SELECT id, node_id AS "nodeId", iteration, kind, lane, status, attempt, max_attempts AS "maxAttempts", deferrals, owner,
             lease_until AS "leaseUntil", available_at AS "availableAt", output, error, created_at AS "createdAt", settled_at AS "settledAt"
      FROM steps WHERE org_id = ${orgId} AND run_id = ${id} ORDER BY created_at, id`,
    db.$queryRaw<EffectView[]>`
      SELECT key, kind, status, attempts, provider_idempotent AS "providerIdempotent", result, error, step_id AS "stepId",
             first_attempt_at AS "firstAttemptAt", settled_at AS "settledAt"
      FROM effects WHERE org_id = ${orgId} AND run_id = ${id} ORDER BY created_at`,
    db.$queryRaw<TimerView[]>`
      SELECT id, step_id AS "stepId", rule, zone, due_at AS "dueAt", fired_at AS "firedAt", fired_by AS "firedBy",
             lateness_ms::float8 AS "latenessMs"
      FROM timers WHERE org_id = ${orgId} AND run_id = ${id} ORDER BY created_at`,
    db.$queryRaw<SignalView[]>`
      SELECT id, kind, identity, received_at AS "receivedAt", consumed_at AS "consumedAt", step_id AS "stepId", payload,
             unmatched_reason AS "unmatchedReason"
      FROM signals WHERE org_id = ${orgId} AND run_id = ${id} ORDER BY received_at`,
    approvalsForRun(db, orgId, id),
    runEventsForRun(db, orgId, id) as Promise<TimelineEntry[]>,
    effectsUncertainOfRun(db, orgId, id),
  ]);
  const graph = graphSchema.safeParse(head.graph);
  const { orgSlug, automationSlug, automationName, version, contact, contactZone, contactConsent, contactId, graph: _g, ...run } = head;
  return { run, orgSlug, automationSlug, automationName, version, contact, contactZone, contactConsent, contactId, graph: graph.success ? graph.data : null, steps, effects, uncertain, timers, signals, approvals, timeline };
}

/** The role the user holds in the run's organisation (owners and editors may act on runs). */
export function mayActOnRuns(role: string | undefined): boolean {
  return role === "owner" || role === "editor";
}
