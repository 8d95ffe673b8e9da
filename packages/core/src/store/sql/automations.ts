import { type Db, Prisma, queryNamed, type Sql, type Tx } from "@holdfast/db";

export interface StartTarget {
  orgId: string;
  automationId: string;
  triggerAuth: "signed" | "url_token";
  /** Accepted signing secrets (current and inside a rotation's overlap). */
  signingSecrets: string[];
  /** Accepted URL tokens, likewise. */
  urlTokens: string[];
  /** The newest published version, if any. */
  versionId: string | null;
  version: number | null;
  /** The database clock (epoch seconds): webhook signatures are checked against it. */
  now: number;
  /** No sample payload yet: the first accepted delivery's input becomes it. */
  needsSample: boolean;
  /** What a delivery meets (lifecycle.ts `deliveryGate`): active, paused with refuse or hold, archived. */
  gate: "active" | "refuse" | "hold" | "archived";
  /** A digest of all of the above but the clock (start_target.sql): what a start kept is checked against it. */
  fingerprint: string;
}

/**
 * What a start made with a kept answer (run/start/target-cache.ts) asks of the database in its own statement: that
 * holdfast_start_target still answers the same fingerprint, and, for a signed request, that its timestamp is within
 * the tolerance by the database clock. `signedAt` is null for a request that carries no timestamp to judge.
 */
export interface StartTargetGuard {
  orgSlug: string;
  automationSlug: string;
  fingerprint: string;
  signedAt: number | null;
  toleranceSeconds: number;
}

/**
 * The guard as the FROM and WHERE of a start statement's first CTE: no row when the kept answer is stale, so the
 * statement starts nothing and returns nothing (the caller then reads again). Empty without a guard.
 */
export function startTargetGuard(guard: StartTargetGuard | null | undefined): Prisma.Sql {
  if (!guard) return Prisma.empty;
  return Prisma.sql`
    FROM holdfast_start_target(${guard.orgSlug}, ${guard.automationSlug}) t
    WHERE t.fingerprint = ${guard.fingerprint}
      AND (${guard.signedAt}::float8 IS NULL OR abs(t.now_epoch - ${guard.signedAt}::float8) <= ${guard.toleranceSeconds}::float8)`;
}

/** Resolves a trigger URL (org slug, automation slug) to the newest published version. */
export async function automationsFindStartTarget(
  sql: Sql,
  orgSlug: string,
  automationSlug: string,
): Promise<{ org: boolean; target?: StartTarget }> {
  // holdfast_start_target (store/sql/functions/start_target.sql): one named statement; the function's plan is kept too.
  const { rows } = await queryNamed<StartTarget & { automationFound: boolean }>(
    sql,
    "holdfast_start_target",
    Prisma.sql`
    SELECT org_id AS "orgId", automation_id AS "automationId", automation_found AS "automationFound",
           trigger_auth AS "triggerAuth", signing_secrets AS "signingSecrets", url_tokens AS "urlTokens",
           version_id AS "versionId", version, now_epoch AS now, needs_sample AS "needsSample", gate, fingerprint
    FROM holdfast_start_target(${orgSlug}, ${automationSlug})`,
  );
  const row = rows[0];
  if (!row) return { org: false };
  if (!row.automationFound) return { org: true };
  const { automationFound: _, ...target } = row;
  return { org: true, target };
}

export async function versionsGraph(tx: Tx, orgId: string, versionId: string): Promise<unknown> {
  const rows = await tx.$queryRaw<{ graph: unknown }[]>`
    SELECT graph FROM automation_versions WHERE org_id = ${orgId} AND id = ${versionId}`;
  return rows[0]?.graph;
}

/** Inserts an automation (its trigger credentials are inserted with it by versions/triggers/credentials.ts); null if the slug is taken. */
export async function automationsInsert(
  tx: Tx,
  a: { orgId: string; slug: string; name: string; triggerAuth: "signed" | "url_token" },
): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO automations (org_id, slug, name, trigger_auth) VALUES (${a.orgId}, ${a.slug}, ${a.name}, ${a.triggerAuth})
    ON CONFLICT (org_id, slug) DO NOTHING RETURNING id`;
  return rows[0]?.id ?? null;
}

export async function automationsFindBySlug(
  tx: Db | Tx,
  orgId: string,
  slug: string,
): Promise<{ id: string; name: string; triggerAuth: "signed" | "url_token" } | null> {
  const rows = await tx.$queryRaw<{ id: string; name: string; triggerAuth: "signed" | "url_token" }[]>`
    SELECT id, name, trigger_auth AS "triggerAuth" FROM automations WHERE org_id = ${orgId} AND slug = ${slug}`;
  return rows[0] ?? null;
}

export async function automationsSetTriggerAuth(tx: Tx, orgId: string, automationId: string, mode: "signed" | "url_token"): Promise<boolean> {
  return (await tx.$executeRaw`UPDATE automations SET trigger_auth = ${mode} WHERE org_id = ${orgId} AND id = ${automationId}`) > 0;
}

/** The payload the editor's variable picker reads `input.*` from (null: none yet). */
export async function automationsSampleInput(tx: Tx, orgId: string, automationId: string): Promise<{ found: boolean; sample: Record<string, unknown> | null }> {
  const rows = await tx.$queryRaw<{ sample: Record<string, unknown> | null }[]>`
    SELECT sample_input AS sample FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0] ? { found: true, sample: rows[0].sample } : { found: false, sample: null };
}

/** The first accepted delivery's input becomes the sample; a sample already set (chosen or automatic) stays. */
export async function automationsSetSampleIfNone(tx: Tx, orgId: string, automationId: string, input: unknown): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE automations SET sample_input = ${JSON.stringify(input)}::jsonb
      WHERE org_id = ${orgId} AND id = ${automationId} AND sample_input IS NULL`) > 0
  );
}

/**
 * "Use as sample": the input of the run an accepted delivery started becomes its automation's sample. Null when
 * the delivery is not the organisation's, was not accepted, or its run is gone.
 */
export async function automationsSetSampleFromDelivery(
  tx: Tx,
  orgId: string,
  deliveryId: string,
): Promise<{ automationId: string; sample: Record<string, unknown> } | null> {
  const rows = await tx.$queryRaw<{ automationId: string; sample: Record<string, unknown> }[]>`
    UPDATE automations a SET sample_input = r.input
    FROM trigger_deliveries d
    JOIN runs r ON r.org_id = d.org_id AND r.id = d.run_id
    WHERE d.org_id = ${orgId} AND d.id = ${deliveryId} AND d.outcome = 'accepted'
      AND a.org_id = d.org_id AND a.id = d.automation_id AND jsonb_typeof(r.input) = 'object'
    RETURNING a.id AS "automationId", a.sample_input AS sample`;
  return rows[0] ?? null;
}

export type AutomationStatus = "active" | "paused" | "archived";
export type PauseMode = "refuse" | "hold";
export type PauseRuns = "continue" | "hold";

export interface AutomationLifecycle {
  id: string;
  slug: string;
  name: string;
  status: AutomationStatus;
  pauseMode: PauseMode | null;
  pauseRuns: PauseRuns | null;
  statusChangedAt: Date | null;
}

const lifecycleColumns = Prisma.sql`id, slug, name, status, pause_mode AS "pauseMode", pause_runs AS "pauseRuns", status_changed_at AS "statusChangedAt"`;

/** The automation's lifecycle row, locked: one change at a time, and a held start waits for a resume in progress. */
export async function automationsLockLifecycle(tx: Tx, orgId: string, automationId: string, mode: "update" | "share" = "update"): Promise<AutomationLifecycle | null> {
  const lock = mode === "update" ? Prisma.sql`FOR UPDATE` : Prisma.sql`FOR SHARE`;
  const rows = await tx.$queryRaw<AutomationLifecycle[]>`
    SELECT ${lifecycleColumns} FROM automations WHERE org_id = ${orgId} AND id = ${automationId} ${lock}`;
  return rows[0] ?? null;
}

export async function automationsLifecycle(tx: Tx, orgId: string, automationId: string): Promise<AutomationLifecycle | null> {
  const rows = await tx.$queryRaw<AutomationLifecycle[]>`
    SELECT ${lifecycleColumns} FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0] ?? null;
}

export async function automationsSetLifecycle(
  tx: Tx,
  orgId: string,
  automationId: string,
  to: { status: AutomationStatus; pauseMode: PauseMode | null; pauseRuns: PauseRuns | null },
): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE automations SET status = ${to.status}, pause_mode = ${to.pauseMode}, pause_runs = ${to.pauseRuns}, status_changed_at = now()
      WHERE org_id = ${orgId} AND id = ${automationId}`) > 0
  );
}

export async function automationsExists(db: Db | Tx, orgId: string, automationId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows.length > 0;
}

/** Locks the automation's row: versions of one automation are numbered under it. */
export async function automationsLock(tx: Tx, orgId: string, automationId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM automations WHERE org_id = ${orgId} AND id = ${automationId} FOR UPDATE`;
  return rows.length > 0;
}

/** Sets an automation's run budget overrides (undefined: kept; null: cleared); the budgets after, or undefined if no such slug. */
export async function automationsSetRunBudgets(
  db: Db | Tx,
  orgId: string,
  slug: string,
  b: { maxSteps?: number | null; maxAgeSeconds?: number | null },
): Promise<{ maxSteps: number | null; maxAgeSeconds: number | null } | undefined> {
  const rows = await db.$queryRaw<{ maxSteps: number | null; maxAgeSeconds: number | null }[]>`
    UPDATE automations SET
      run_max_steps = CASE WHEN ${b.maxSteps !== undefined} THEN ${b.maxSteps ?? null}::int ELSE run_max_steps END,
      run_max_age_seconds = CASE WHEN ${b.maxAgeSeconds !== undefined} THEN ${b.maxAgeSeconds ?? null}::int ELSE run_max_age_seconds END
    WHERE org_id = ${orgId} AND slug = ${slug}
    RETURNING run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"`;
  return rows[0];
}

/** Each automation's run budget overrides, by name (at most 500). */
export function automationsRunBudgets(
  db: Db | Tx,
  orgId: string,
): Promise<{ id: string; slug: string; name: string; maxSteps: number | null; maxAgeSeconds: number | null }[]> {
  return db.$queryRaw<{ id: string; slug: string; name: string; maxSteps: number | null; maxAgeSeconds: number | null }[]>`
    SELECT id, slug, name, run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"
    FROM automations WHERE org_id = ${orgId} ORDER BY name LIMIT 500`;
}

/**
 * The list page: each automation with its newest version, when that was published, its running runs, and how many
 * of those its pause holds (`held`, counted in `running` too).
 */
export function automationsListWithLatest(
  db: Db | Tx,
  orgId: string,
): Promise<{ id: string; slug: string; name: string; latest: number | null; publishedAt: Date | null; running: number; held: number }[]> {
  return db.$queryRaw<{ id: string; slug: string; name: string; latest: number | null; publishedAt: Date | null; running: number; held: number }[]>`
    SELECT a.id, a.slug, a.name, v.version AS latest, v.published_at AS "publishedAt", n.running, n.held
    FROM automations a
    CROSS JOIN LATERAL (SELECT count(*)::int AS running, (count(*) FILTER (WHERE r.held_at IS NOT NULL))::int AS held
                        FROM runs r WHERE r.org_id = a.org_id AND r.automation_id = a.id AND r.status = 'running') n
    LEFT JOIN LATERAL (SELECT version, published_at FROM automation_versions WHERE automation_id = a.id AND org_id = a.org_id
                       ORDER BY version DESC LIMIT 1) v ON true
    WHERE a.org_id = ${orgId} ORDER BY a.name`;
}

/** Every automation's lifecycle status, for the list. */
export function automationsStatuses(
  db: Db | Tx,
  orgId: string,
): Promise<{ id: string; status: AutomationStatus; pauseMode: PauseMode | null; pauseRuns: PauseRuns | null; published: boolean }[]> {
  // published: a version was ever published (else the automation is a Draft: deliveries are refused with 409).
  return db.$queryRaw<{ id: string; status: AutomationStatus; pauseMode: PauseMode | null; pauseRuns: PauseRuns | null; published: boolean }[]>`
    SELECT a.id, a.status, a.pause_mode AS "pauseMode", a.pause_runs AS "pauseRuns",
           EXISTS (SELECT 1 FROM automation_versions v WHERE v.org_id = a.org_id AND v.automation_id = a.id AND v.published_at IS NOT NULL) AS published
    FROM automations a WHERE a.org_id = ${orgId}`;
}

/** The automation's slug and trigger authentication mode. */
export async function automationsTriggerOf(db: Db | Tx, orgId: string, automationId: string): Promise<{ slug: string; mode: "signed" | "url_token" } | undefined> {
  const rows = await db.$queryRaw<{ slug: string; mode: "signed" | "url_token" }[]>`
    SELECT slug, trigger_auth AS mode FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0];
}

/** An automation of any of the organisations (a page's header), with its status. */
export async function automationsHeaderInOrgs(
  db: Db | Tx,
  orgIds: string[],
  automationId: string,
): Promise<{ name: string; slug: string; orgId: string; status: AutomationStatus } | undefined> {
  const rows = await db.$queryRaw<{ name: string; slug: string; orgId: string; status: AutomationStatus }[]>`
    SELECT name, slug, org_id AS "orgId", status FROM automations WHERE id = ${automationId} AND org_id = ANY(${orgIds}::text[])`;
  return rows[0];
}

/** The organisations' automations with each one's published version numbers (the runs list's filters). */
export function automationsWithPublishedVersions(db: Db | Tx, orgIds: string[]): Promise<{ slug: string; name: string; versions: number[] }[]> {
  return db.$queryRaw<{ slug: string; name: string; versions: number[] }[]>`
    SELECT a.slug, a.name, array_agg(v.version ORDER BY v.version) AS versions
    FROM automations a JOIN automation_versions v ON v.automation_id = a.id
    WHERE a.org_id = ANY(${orgIds}::text[]) AND v.published_at IS NOT NULL
    GROUP BY a.slug, a.name ORDER BY a.name`;
}

/**
 * The automation a first request is best shown for (the runs page's empty state): of the organisations', one not
 * archived, published before a draft, a form tool's URL (its request needs no signature) before a signed one.
 */
export async function automationsForFirstRequest(
  db: Db | Tx,
  orgIds: string[],
): Promise<{ id: string; orgId: string; slug: string; name: string; triggerAuth: "signed" | "url_token"; published: boolean } | undefined> {
  const rows = await db.$queryRaw<{ id: string; orgId: string; slug: string; name: string; triggerAuth: "signed" | "url_token"; published: boolean }[]>`
    SELECT a.id, a.org_id AS "orgId", a.slug, a.name, a.trigger_auth AS "triggerAuth",
           EXISTS (SELECT 1 FROM automation_versions v WHERE v.org_id = a.org_id AND v.automation_id = a.id AND v.published_at IS NOT NULL) AS published
    FROM automations a
    WHERE a.org_id = ANY(${orgIds}::text[]) AND a.status <> 'archived'
    ORDER BY published DESC, (a.trigger_auth = 'url_token') DESC, a.created_at DESC, a.id
    LIMIT 1`;
  return rows[0];
}

/** Open tracking (issue 43): whether the run's automation adds a tracking pixel to its HTML emails. */
export async function automationsTrackOpensOfRun(db: Db | Tx, orgId: string, runId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ on: boolean }[]>`
    SELECT a.track_opens AS on FROM runs r JOIN automations a ON a.org_id = r.org_id AND a.id = r.automation_id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}`;
  return rows[0]?.on ?? false;
}

export async function automationsTrackOpens(db: Db | Tx, orgId: string, automationId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ on: boolean }[]>`SELECT track_opens AS on FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0]?.on ?? false;
}

/** Turns open tracking on or off; false when there is no such automation. */
export async function automationsSetTrackOpens(db: Db | Tx, orgId: string, automationId: string, on: boolean): Promise<boolean> {
  return (await db.$executeRaw`UPDATE automations SET track_opens = ${on} WHERE org_id = ${orgId} AND id = ${automationId}`) > 0;
}

/** What an automation counts as its goal (automations.goal): the contact replied, clicked, or a goal event came. */
export type AutomationGoal = "replied" | "clicked" | "event";

export async function automationsGoal(db: Db | Tx, orgId: string, automationId: string): Promise<{ goal: AutomationGoal | null } | undefined> {
  const rows = await db.$queryRaw<{ goal: AutomationGoal | null }[]>`SELECT goal FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0];
}

/** Sets (or, with null, clears) the automation's goal; false when there is no such automation. */
export async function automationsSetGoal(db: Db | Tx, orgId: string, automationId: string, goal: AutomationGoal | null): Promise<boolean> {
  return (await db.$executeRaw`UPDATE automations SET goal = ${goal} WHERE org_id = ${orgId} AND id = ${automationId}`) === 1;
}

/** What a goal URL's delivery needs: the automation, its goal and trigger mode, the goal credentials, the clock. */
export interface GoalTarget {
  automationId: string;
  goal: AutomationGoal | null;
  triggerAuth: "signed" | "url_token";
  signingSecrets: string[];
  urlTokens: string[];
  /** The newest published version: its trigger says where the payload's email is. */
  versionId: string | null;
  /** The database clock (epoch seconds): signatures are checked against it. */
  now: number;
}

export async function automationsGoalTarget(tx: Tx, orgId: string, slug: string): Promise<GoalTarget | undefined> {
  const rows = await tx.$queryRaw<GoalTarget[]>`
    SELECT a.id AS "automationId", a.goal, a.trigger_auth AS "triggerAuth",
           COALESCE(array_agg(tc.secret ORDER BY tc.secret) FILTER (WHERE tc.kind = 'goal_signing_secret'), '{}') AS "signingSecrets",
           COALESCE(array_agg(tc.secret ORDER BY tc.secret) FILTER (WHERE tc.kind = 'goal_url_token'), '{}') AS "urlTokens",
           (SELECT av.id FROM automation_versions av WHERE av.org_id = a.org_id AND av.automation_id = a.id AND av.published_at IS NOT NULL
             ORDER BY av.version DESC LIMIT 1) AS "versionId",
           EXTRACT(EPOCH FROM now())::float8 AS now
    FROM automations a
    LEFT JOIN trigger_credentials tc ON tc.org_id = a.org_id AND tc.automation_id = a.id
      AND tc.kind IN ('goal_signing_secret', 'goal_url_token') AND (tc.expires_at IS NULL OR tc.expires_at > now())
    WHERE a.org_id = ${orgId} AND a.slug = ${slug}
    GROUP BY a.id`;
  return rows[0];
}
