import { type Db, inTx, type Tx } from "@holdfast/db";
import { type Goal, goalWords } from "../../base/types/goals";
import { automationsGoal } from "../../store/sql/automations";
import { contactsIdByEmail } from "../../store/sql/contacts";
import { goalEventsInsertIfNew, goalEventsSetRunsEnded } from "../../store/sql/goal-events";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { runsRequestGoalEnd } from "../../store/sql/runs";

export type { Goal };

export interface GoalMet {
  orgId: string;
  automationId: string;
  /** The contact, by id or by email address (as a goal URL's payload names it). */
  contactId?: string;
  email?: string;
  goal: Goal;
  /** When the goal was met, as its source says; absent: now, by the database clock. */
  at?: Date | null;
  /** A goal URL's delivery id: a second delivery with it changes nothing. */
  webhookId?: string | null;
  /** Who met it, for the timeline ("goal", a worker id, "web"). */
  by?: string;
}

export type GoalMetOutcome =
  /** The goal is the automation's and the contact is known: its runs are ending (`runIds`). */
  | { kind: "met"; contactId: string; runIds: string[] }
  /** A delivery with this webhook-id was taken before: nothing changed. */
  | { kind: "duplicate"; contactId: string }
  /** The automation counts another goal (or none), so this one ends nothing. */
  | { kind: "not_the_goal"; goal: Goal | null }
  | { kind: "no_contact" }
  | { kind: "no_automation" };

/**
 * A goal met by a contact: when it is the automation's goal, the contact is marked converted for the automation
 * (goal_events) and each of its running runs of the automation (test runs apart) is asked to end, the cancellation's
 * way (runs.cancel_requested_at, with runs.goal_met naming the goal), with a run.goal_met timeline row and a wake-up:
 * the engine's walk ends it converted at its next safe point, at once for a run at a wait or parked, after the
 * settle for a run whose step is in flight (an email being sent ends after the send settles, sent once).
 * In the caller's transaction when given one (a reply's, a click's), so the goal commits with what met it.
 */
export async function goalMet(db: Db | Tx, met: GoalMet): Promise<GoalMetOutcome> {
  if ("$transaction" in db) return inTx(db as Db, (tx) => goalMetInTx(tx, met));
  return goalMetInTx(db as Tx, met);
}

async function goalMetInTx(tx: Tx, met: GoalMet): Promise<GoalMetOutcome> {
  const automation = await automationsGoal(tx, met.orgId, met.automationId);
  if (!automation) return { kind: "no_automation" };
  if (automation.goal !== met.goal) return { kind: "not_the_goal", goal: automation.goal };
  const contactId = met.contactId ?? (met.email ? await contactsIdByEmail(tx, met.orgId, met.email) : null);
  if (!contactId) return { kind: "no_contact" };
  const eventId = await goalEventsInsertIfNew(tx, {
    orgId: met.orgId,
    automationId: met.automationId,
    contactId,
    goal: met.goal,
    webhookId: met.webhookId ?? null,
    metAt: met.at ?? null,
  });
  if (!eventId) return { kind: "duplicate", contactId };
  const runs = await runsRequestGoalEnd(tx, { ...met, contactId, reason: `goal met: ${goalWords[met.goal]}` });
  const runIds = runs.map((r) => r.id);
  const data = { goal: met.goal, ...(met.at ? { at: met.at.toISOString() } : {}) };
  await runEventsInsert(tx, runIds.map((runId) => ({ orgId: met.orgId, runId, type: "run.goal_met", worker: met.by ?? "goal", data })));
  // The cancellation's wake-up: the engine walks the run and ends it converted (or waits for a step in flight).
  await outboxInsert(tx, runIds.map((runId) => ({ orgId: met.orgId, runId, topic: "run.wake", payload: { orgId: met.orgId, runId, reason: "cancel" } })));
  if (runIds.length > 0) await goalEventsSetRunsEnded(tx, met.orgId, eventId, runIds.length);
  return { kind: "met", contactId, runIds };
}
