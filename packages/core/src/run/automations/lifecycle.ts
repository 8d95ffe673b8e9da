import { type Db, inTx, type Tx } from "@holdfast/db";
import { HoldfastError, NotFoundError } from "../../base/errors";
import { type HistoryEntry, automationHistoryInsert, automationHistoryList } from "../../store/sql/automation-history";
import {
  type AutomationLifecycle,
  type AutomationStatus,
  automationsLifecycle,
  automationsLockLifecycle,
  automationsSetLifecycle,
  type PauseMode,
  type PauseRuns,
} from "../../store/sql/automations";
import { runsHoldForAutomation, runsReleaseForAutomation } from "../../store/sql/runs-of-automation";

/**
 * An automation's lifecycle: active, paused or archived. The decisions here are pure (tested without a database);
 * `changeLifecycle` is the shell that locks the automation row and carries one out with its history row.
 *
 * Paused says two things. New deliveries (`pauseMode`): "refuse" answers 503 with Retry-After (senders retry; nothing
 * is written but the delivery log row) and "hold" accepts them, creating each run held before its first step.
 * Running runs (`pauseRuns`): "continue" lets them go on, "hold" stops each before its next step (a step already
 * handed to a worker finishes). Resume releases every held run. Archived refuses deliveries with 410 Gone, hides the
 * automation from the default list and makes its editor read-only; runs already going keep going (held ones stay
 * held) until Stop all runs, and Restore makes it active again, releasing held runs.
 */

export type { AutomationStatus, PauseMode, PauseRuns } from "../../store/sql/automations";

/** Seconds a sender is asked to wait before retrying a delivery to a paused automation. */
export const pausedRetryAfterSeconds = 300;

export class AutomationPausedError extends HoldfastError {
  constructor(readonly automation: string) {
    super("automation_paused", `automation "${automation}" is paused: new runs are refused until it is resumed (send again later)`);
  }
}

export class AutomationArchivedError extends HoldfastError {
  constructor(readonly automation: string) {
    super("automation_archived", `automation "${automation}" is archived: restore it to start runs again`);
  }
}

export class LifecycleRefusedError extends HoldfastError {
  constructor(message: string) {
    super("lifecycle_refused", message);
  }
}

export type LifecycleChange =
  | { action: "pause"; mode: PauseMode; runs: PauseRuns }
  | { action: "resume" }
  | { action: "archive" }
  | { action: "restore" };

export interface LifecycleState {
  status: AutomationStatus;
  pauseMode: PauseMode | null;
  pauseRuns: PauseRuns | null;
}

export type LifecycleDecision =
  | { kind: "change"; to: LifecycleState; holdRuns: boolean; releaseRuns: boolean }
  | { kind: "unchanged" }
  | { kind: "refuse"; reason: string };

/**
 * What a lifecycle action does from the current state. Repeating an action is "unchanged" (a second click is
 * harmless). Changing the pause choices while paused holds at once when asked to, but releasing waits for Resume:
 * a run held because of the earlier choice was promised to wait for it.
 */
export function decideLifecycle(current: LifecycleState, change: LifecycleChange): LifecycleDecision {
  switch (change.action) {
    case "pause":
      if (current.status === "archived") return { kind: "refuse", reason: "the automation is archived: restore it before pausing it" };
      if (current.status === "paused" && current.pauseMode === change.mode && current.pauseRuns === change.runs) return { kind: "unchanged" };
      return { kind: "change", to: { status: "paused", pauseMode: change.mode, pauseRuns: change.runs }, holdRuns: change.runs === "hold", releaseRuns: false };
    case "resume":
      if (current.status === "archived") return { kind: "refuse", reason: "the automation is archived: restore it (it becomes active)" };
      if (current.status === "active") return { kind: "unchanged" };
      return { kind: "change", to: active, holdRuns: false, releaseRuns: true };
    case "archive":
      if (current.status === "archived") return { kind: "unchanged" };
      return { kind: "change", to: { status: "archived", pauseMode: null, pauseRuns: null }, holdRuns: false, releaseRuns: false };
    case "restore":
      if (current.status === "active") return { kind: "unchanged" };
      if (current.status === "paused") return { kind: "refuse", reason: "the automation is paused, not archived: resume it instead" };
      return { kind: "change", to: active, holdRuns: false, releaseRuns: true };
  }
}

const active: LifecycleState = { status: "active", pauseMode: null, pauseRuns: null };

/** What the start path reads for a delivery (one column of the automation row it already reads). */
export type DeliveryGate = "active" | "refuse" | "hold" | "archived";

export type GateDecision = { kind: "accept" } | { kind: "hold" } | { kind: "refuse"; error: HoldfastError };

/**
 * What a start meets. The editor's Test run runs even while paused (it is how a person checks a fix before
 * resuming), never while archived.
 */
export function deliveryGate(gate: DeliveryGate, automation: string, test: boolean): GateDecision {
  if (gate === "archived") return { kind: "refuse", error: new AutomationArchivedError(automation) };
  if (test || gate === "active") return { kind: "accept" };
  if (gate === "hold") return { kind: "hold" };
  return { kind: "refuse", error: new AutomationPausedError(automation) };
}

export interface LifecycleOutcome extends LifecycleState {
  changed: boolean;
  /** Runs held by this change (pause with "hold running runs"). */
  heldRuns: number;
  /** Held runs released (resume, restore): each was woken. */
  releasedRuns: number;
}

/** Carries out a lifecycle action: the automation row, its runs' holds and the history row commit together. */
export async function changeLifecycle(
  db: Db,
  r: { orgId: string; automationId: string; change: LifecycleChange; by: string; reason?: string | null },
): Promise<LifecycleOutcome> {
  return inTx(db, async (tx) => {
    const current = await automationsLockLifecycle(tx, r.orgId, r.automationId);
    if (!current) throw new NotFoundError("automation_not_found", `automation ${r.automationId}`);
    const decision = decideLifecycle(current, r.change);
    if (decision.kind === "refuse") throw new LifecycleRefusedError(decision.reason);
    if (decision.kind === "unchanged") return { ...stateOf(current), changed: false, heldRuns: 0, releasedRuns: 0 };
    await automationsSetLifecycle(tx, r.orgId, r.automationId, decision.to);
    const heldRuns = decision.holdRuns ? await runsHoldForAutomation(tx, r.orgId, r.automationId, r.by) : 0;
    const releasedRuns = decision.releaseRuns ? await runsReleaseForAutomation(tx, r.orgId, r.automationId, r.by) : 0;
    await automationHistoryInsert(tx, r.orgId, r.automationId, {
      by: r.by,
      action: r.change.action,
      fromStatus: current.status,
      toStatus: decision.to.status,
      pauseMode: decision.to.pauseMode,
      pauseRuns: decision.to.pauseRuns,
      reason: r.reason?.trim() || null,
      detail: { heldRuns, releasedRuns, ...(current.status === "paused" ? { was: { pauseMode: current.pauseMode, pauseRuns: current.pauseRuns } } : {}) },
    });
    return { ...decision.to, changed: true, heldRuns, releasedRuns };
  });
}

/** An archived automation's editor is read-only: saving a draft or publishing is refused until it is restored. */
export async function assertEditable(tx: Tx, orgId: string, automationId: string): Promise<void> {
  const a = await automationsLifecycle(tx, orgId, automationId);
  if (a?.status === "archived") throw new LifecycleRefusedError("the automation is archived: restore it to edit or publish it");
}

const stateOf = (a: AutomationLifecycle): LifecycleState => ({ status: a.status, pauseMode: a.pauseMode, pauseRuns: a.pauseRuns });

export async function lifecycleOf(db: Db, orgId: string, automationId: string): Promise<{ state: AutomationLifecycle; history: HistoryEntry[] }> {
  const state = await automationsLifecycle(db, orgId, automationId);
  if (!state) throw new NotFoundError("automation_not_found", `automation ${automationId}`);
  return { state, history: await automationHistoryList(db, orgId, automationId) };
}

/** The pause choices in words, for the UI, the CLI and the history. */
export function describeLifecycle(s: LifecycleState): string {
  if (s.status === "active") return "Active: deliveries start runs.";
  if (s.status === "archived") return "Archived: deliveries are refused (410) and the editor is read-only; restore to use it again.";
  const deliveries =
    s.pauseMode === "hold"
      ? "new deliveries are accepted and their runs wait before their first step"
      : "new deliveries are refused with 503 and Retry-After (senders retry later)";
  const runs = s.pauseRuns === "hold" ? "running runs wait before their next step" : "running runs continue";
  return `Paused: ${deliveries}; ${runs}. Resume releases everything held.`;
}
