import type { RunDisplayStatus } from "../../store/sql/runs-view";

/** What a held run reads wherever its status is shown (runs list, run page, counts). */
export const heldWords = "Held: the automation is paused (runs held)";

/**
 * A run's display status in words, the one place for them: `held` says why nothing moves; the others are their
 * names ("needs review").
 */
export function runStatusWords(status: RunDisplayStatus | string): string {
  return status === "held" ? heldWords : status.replace(/_/g, " ");
}

/** The goals an automation may count, in words (the goal form, a converted run's page). */
export { type Goal, goals, goalWords } from "../../base/types/goals";
