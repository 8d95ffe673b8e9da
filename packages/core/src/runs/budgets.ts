import type { Db } from "@holdfast/db";
import { NotFoundError } from "../errors";

export interface RunBudgets {
  maxSteps: number | null;
  maxAgeSeconds: number | null;
}

/**
 * Run budgets for new runs: the organisation's defaults, or one automation's overrides (null clears an override).
 * Runs already started keep the budgets they started with.
 */
export async function setRunBudgets(db: Db, orgId: string, automationSlug: string | null, b: Partial<RunBudgets>): Promise<RunBudgets> {
  if (automationSlug === null) {
    const rows = await db.$queryRaw<RunBudgets[]>`
      UPDATE organisations SET run_max_steps = COALESCE(${b.maxSteps ?? null}::int, run_max_steps),
                               run_max_age_seconds = COALESCE(${b.maxAgeSeconds ?? null}::int, run_max_age_seconds)
      WHERE id = ${orgId} RETURNING run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"`;
    if (!rows[0]) throw new NotFoundError("org_not_found", `organisation ${orgId}`);
    return rows[0];
  }
  const rows = await db.$queryRaw<RunBudgets[]>`
    UPDATE automations SET
      run_max_steps = CASE WHEN ${b.maxSteps !== undefined} THEN ${b.maxSteps ?? null}::int ELSE run_max_steps END,
      run_max_age_seconds = CASE WHEN ${b.maxAgeSeconds !== undefined} THEN ${b.maxAgeSeconds ?? null}::int ELSE run_max_age_seconds END
    WHERE org_id = ${orgId} AND slug = ${automationSlug}
    RETURNING run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"`;
  if (!rows[0]) throw new NotFoundError("automation_not_found", `automation ${automationSlug}`);
  return rows[0];
}

export interface RunBudgetsView {
  org: RunBudgets;
  automations: { id: string; slug: string; name: string; maxSteps: number | null; maxAgeSeconds: number | null }[];
}

/** The organisation's run budget defaults and each automation's overrides (null: the organisation's default). */
export async function runBudgetsOf(db: Db, orgId: string): Promise<RunBudgetsView> {
  const org = await db.$queryRaw<RunBudgets[]>`
    SELECT run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds" FROM organisations WHERE id = ${orgId}`;
  if (!org[0]) throw new NotFoundError("org_not_found", `organisation ${orgId}`);
  const automations = await db.$queryRaw<RunBudgetsView["automations"]>`
    SELECT id, slug, name, run_max_steps AS "maxSteps", run_max_age_seconds AS "maxAgeSeconds"
    FROM automations WHERE org_id = ${orgId} ORDER BY name LIMIT 500`;
  return { org: org[0], automations };
}
