import type { Tx } from "@holdfast/db";
import { runsGoalOf } from "../../store/sql/runs";
import { goalMet, type GoalMetOutcome } from "./goal-met";

/**
 * Something a run's contact did with an email the run sent (replied to it, clicked a link in it): when the run's
 * automation counts that as its goal, the contact's runs of it end converted (goalMet), in the caller's transaction
 * (the reply's, the click's). Test runs meet no goal. The reply path calls it (people/signals/email.ts); the click
 * path calls it with "clicked" where it records a click.
 */
export async function runMeetsGoal(tx: Tx, orgId: string, runId: string, goal: "replied" | "clicked", at?: Date | null): Promise<GoalMetOutcome | null> {
  const run = await runsGoalOf(tx, orgId, runId);
  if (!run || run.test || run.goal !== goal || !run.contactId) return null;
  return goalMet(tx, { orgId, automationId: run.automationId, contactId: run.contactId, goal, at: at ?? null, by: goal === "replied" ? "reply" : "click" });
}
