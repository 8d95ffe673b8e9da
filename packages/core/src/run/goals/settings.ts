import { type Db, inTx, type Tx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import type { Goal } from "../../base/types/goals";
import { automationsGoal, automationsSetGoal, automationsTriggerOf } from "../../store/sql/automations";
import { triggerCredentialsAccepted, triggerCredentialsInsert } from "../../store/sql/trigger-credentials";
import { newSigningSecret, newUrlToken } from "../../versions/triggers/credentials";

export interface GoalSettings {
  goal: Goal | null;
  /** The goal URL authenticates as the start trigger does (signed, or a token in the URL). */
  mode: "signed" | "url_token";
  /** The goal URL's own credentials; null until the goal is a goal event. */
  signingSecret: string | null;
  urlToken: string | null;
  /** Rotated-away goal credentials still accepted, with when they stop being accepted. */
  previous: { kind: GoalCredentialKind; expiresAt: Date }[];
}

export type GoalCredentialKind = "goal_signing_secret" | "goal_url_token";

/** The path a goal URL is called at: like the start trigger's, under /api/goals, the token in it in url_token mode. */
export function goalPath(orgSlug: string, automationSlug: string, mode: "signed" | "url_token", urlToken: string | null): string {
  const base = `/api/goals/${orgSlug}/${automationSlug}`;
  return mode === "url_token" && urlToken ? `${base}/${urlToken}` : base;
}

/** The goal URL's signing secret and URL token, made the first time an automation's goal is a goal event. */
export async function ensureGoalCredentials(tx: Tx, orgId: string, automationId: string): Promise<void> {
  const rows = await triggerCredentialsAccepted(tx, orgId, automationId);
  const has = (kind: string) => rows.some((r) => r.kind === kind && r.expiresAt === null);
  if (!has("goal_signing_secret")) await triggerCredentialsInsert(tx, orgId, automationId, "goal_signing_secret", newSigningSecret());
  if (!has("goal_url_token")) await triggerCredentialsInsert(tx, orgId, automationId, "goal_url_token", newUrlToken());
}

/**
 * Sets the automation's goal (null: none). The goal belongs to the automation, not to a version: it says what the
 * journey is for, so it applies at once to the runs in flight, needs no publish, and every version is measured by it.
 */
export async function setGoal(db: Db, orgId: string, automationId: string, goal: Goal | null): Promise<void> {
  await inTx(db, async (tx) => {
    if (!(await automationsSetGoal(tx, orgId, automationId, goal))) throw new HoldfastError("automation_not_found", "automation not found");
    if (goal === "event") await ensureGoalCredentials(tx, orgId, automationId);
  });
}

/** The goal and the goal URL's credentials (owners and editors only: the callers check the role). */
export async function goalSettings(db: Db | Tx, orgId: string, automationId: string): Promise<GoalSettings> {
  const [a, trigger, rows] = await Promise.all([
    automationsGoal(db, orgId, automationId),
    automationsTriggerOf(db, orgId, automationId),
    triggerCredentialsAccepted(db as Tx, orgId, automationId),
  ]);
  if (!a || !trigger) throw new HoldfastError("automation_not_found", "automation not found");
  const current = (kind: string) => rows.find((r) => r.kind === kind && r.expiresAt === null)?.secret ?? null;
  const previous = rows.flatMap((r) => (r.expiresAt && (r.kind === "goal_signing_secret" || r.kind === "goal_url_token") ? [{ kind: r.kind, expiresAt: r.expiresAt }] : []));
  return { goal: a.goal, mode: trigger.mode, signingSecret: current("goal_signing_secret"), urlToken: current("goal_url_token"), previous };
}
