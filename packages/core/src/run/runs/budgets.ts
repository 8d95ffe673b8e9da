import type { Db } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { automationsRunBudgets, automationsSetRunBudgets } from "../../store/sql/automations";
import { organisationsRunBudgets, organisationsSetRunBudgets, type RunBudgets } from "../../store/sql/organisations";

export type { RunBudgets };

/**
 * Run budgets for new runs: the organisation's defaults, or one automation's overrides (null clears an override).
 * Runs already started keep the budgets they started with.
 */
export async function setRunBudgets(db: Db, orgId: string, automationSlug: string | null, b: Partial<RunBudgets>): Promise<RunBudgets> {
  if (automationSlug === null) {
    const org = await organisationsSetRunBudgets(db, orgId, b);
    if (!org) throw new NotFoundError("org_not_found", `organisation ${orgId}`);
    return org;
  }
  const automation = await automationsSetRunBudgets(db, orgId, automationSlug, b);
  if (!automation) throw new NotFoundError("automation_not_found", `automation ${automationSlug}`);
  return automation;
}

export interface RunBudgetsView {
  org: RunBudgets;
  automations: { id: string; slug: string; name: string; maxSteps: number | null; maxAgeSeconds: number | null }[];
}

/** The organisation's run budget defaults and each automation's overrides (null: the organisation's default). */
export async function runBudgetsOf(db: Db, orgId: string): Promise<RunBudgetsView> {
  const org = await organisationsRunBudgets(db, orgId);
  if (!org) throw new NotFoundError("org_not_found", `organisation ${orgId}`);
  const automations = await automationsRunBudgets(db, orgId);
  return { org, automations };
}
