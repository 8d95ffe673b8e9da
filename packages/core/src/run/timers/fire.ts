import { type Db, inTx } from "@holdfast/db";
import type { TimerDue } from "../../base/catalog";
import { HoldfastError } from "../../base/errors";
import { canonicalJson } from "../../base/json";
import { timersDueInMs, timersFireIfDue } from "../../store/sql/timers";
import { type PendingTimer, timersPending, timersReschedule } from "../../store/sql/timers-pending";
import { isValidZone, type WaitRule, waitRuleSchema } from "../../decide/timers/schedule";
import { instantFor } from "../../decide/timers/plan";

export type FireResult = { kind: "fired"; runId: string } | { kind: "not_due"; inMs: number } | { kind: "stale" };

/**
 * A fast-path firing's run.wake is a backstop, due this long after the firing: the engine walks the run itself right
 * after (advanceRun withdraws the backstop in that walk's commit), so the relay publishes it only when the engine died
 * between the two, and no second walk follows every firing.
 */
export const timerWalkBackstopMs = 10_000;

/**
 * The fast path: a timer's delayed job arrived. Fires it if it is due and its wake number is current; its run.wake
 * is due at once, or `wakeDelayMs` later when the caller walks the run next (timerWalkBackstopMs).
 */
export async function fireTimer(db: Db, due: TimerDue, by: string, wakeDelayMs = 0): Promise<FireResult> {
  return inTx(db, async (tx) => {
    const fired = await timersFireIfDue(tx, due.timerId, due.wake, by, wakeDelayMs);
    if (fired[0]) return { kind: "fired", runId: fired[0].runId };
    // Early (the queue's clock and the database's differ) or already fired / recomputed since.
    const inMs = await timersDueInMs(tx, due.timerId, due.wake);
    return inMs !== undefined && inMs > 0 ? { kind: "not_due", inMs } : { kind: "stale" };
  });
}

export interface RecomputeReport {
  checked: number;
  moved: number;
}

/**
 * Recomputes pending timers from their stored intent (rule, zone, spread, anchor): after a tz database update
 * (`zone` omitted), or when a contact's zone changed (`zone` given, for one run's timers). Every moved timer gets a
 * new wake number and fast-path job, and its old and new instants go on the run's timeline.
 */
export async function recomputeTimers(
  db: Db,
  filter: { orgId?: string; runId?: string },
  zone?: string,
  /** A changed rule for these pending timers (a run migrated to an edited wait, or an operator's fix). */
  rule?: WaitRule,
): Promise<RecomputeReport> {
  if (zone !== undefined && !isValidZone(zone)) throw new HoldfastError("invalid_zone", `"${zone}" is not an IANA time zone`);
  if (rule !== undefined && !waitRuleSchema.safeParse(rule).success) throw new HoldfastError("invalid_rule", "not a wait rule");
  let checked = 0;
  let moved = 0;
  let after = "";
  for (;;) {
    const page: PendingTimer[] = await timersPending(db, filter, 500, after);
    if (page.length === 0) return { checked, moved };
    for (const t of page) {
      checked++;
      const next = instantFor({
        rule: rule ?? (t.rule as WaitRule),
        zone: zone ?? t.zone,
        spreadSeconds: t.spreadSeconds,
        runId: t.runId,
        anchorAt: t.anchorAt,
      });
      const ruleChanged = rule !== undefined && canonicalJson(rule) !== canonicalJson(t.rule);
      if (next.dueAt.getTime() === t.dueAt.getTime() && next.zone === t.zone && !ruleChanged) continue;
      const reason = ruleChanged ? "rule changed" : zone !== undefined ? "zone changed" : "recomputed with the current tz rules";
      if (await inTx(db, (tx) => timersReschedule(tx, t, next.zone, next.dueAt, reason, next.rule))) moved++;
    }
    after = page.at(-1)?.id ?? after;
  }
}
