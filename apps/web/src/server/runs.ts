import { type ApprovalEditRow, approvalEditsOfRun, type ApprovalRow, approvalsForRun, automationsWithPublishedVersions, effectsUncertainOfRun, effectsViewOfRun, type EmailMessageView, emailMessagesOfRun, type EffectView, runDisplayStatuses, type RunDetailHead, type RunDisplayStatus, runEventsForRun, type RunListFilters, type RunListItem, runsDetailHead, runsListForOrgs, type SignalView, signalsViewOfRun, type StepView, stepsViewOfRun, type TimelineEntry, type TimerView, timersViewOfRun, type UncertainEffect } from "@holdfast/core/store";
import { type Graph, graphSchema } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";
import { type StepEmailCounts, stepEmailCounts } from "./step-email-counts";

/**
 * What the runs list and the run page read (the queries are core's table modules). Every query is scoped by the
 * organisations the signed-in user belongs to (`orgIds`): a run of another organisation is "not found", never shown.
 */

/** A run's status as a person needs it: a running run that waits for a person says so. */
export const displayStatuses = runDisplayStatuses;
export type DisplayStatus = RunDisplayStatus;
export type { EffectView, RunListItem, SignalView, StepView, TimerView };
export type RunFilters = RunListFilters;

export async function listRuns(db: Db, orgIds: string[], f: RunFilters, limit = 100): Promise<RunListItem[]> {
  if (orgIds.length === 0) return [];
  return runsListForOrgs(db, orgIds, f, limit);
}

/** The automations (and their published versions) of the user's organisations, for the filters. */
export async function automationsFor(db: Db, orgIds: string[]): Promise<{ slug: string; name: string; versions: number[] }[]> {
  if (orgIds.length === 0) return [];
  return automationsWithPublishedVersions(db, orgIds);
}

/** The head's fields that describe where the run belongs (the page shows them beside the run). */
type RunPlace = "orgSlug" | "automationSlug" | "automationName" | "version" | "graph" | "contact" | "contactZone" | "contactConsent" | "contactId";

export interface RunDetail {
  run: Omit<RunDetailHead, RunPlace>;
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
  /**
   * The emails the run sent and what became of them (issue 43: the message's own row), and its automation's send
   * steps' figures (all versions, all time: the journey counts, as the canvas reads them).
   */
  emails: EmailMessageView[];
  emailRates: StepEmailCounts[];
  /** Approvers' edits of the run's approvals' emails (original and edited draft, who, when, via), oldest first. */
  approvalEdits: ApprovalEditRow[];
}

export async function runDetail(db: Db, orgIds: string[], id: string): Promise<RunDetail | null> {
  if (orgIds.length === 0 || !/^run_[0-9a-f]{32}$/.test(id)) return null;
  const head = await runsDetailHead(db, orgIds, id);
  if (!head) return null;
  const orgId = head.orgId;
  const [steps, effects, timers, signals, approvals, timeline, uncertain, emails, emailRates, approvalEdits] = await Promise.all([
    stepsViewOfRun(db, orgId, id),
    effectsViewOfRun(db, orgId, id),
    timersViewOfRun(db, orgId, id),
    signalsViewOfRun(db, orgId, id),
    approvalsForRun(db, orgId, id),
    runEventsForRun(db, orgId, id) as Promise<TimelineEntry[]>,
    effectsUncertainOfRun(db, orgId, id),
    emailMessagesOfRun(db, orgId, id),
    head.test ? Promise.resolve([]) : stepEmailCounts(db, orgId, head.automationId),
    approvalEditsOfRun(db, orgId, id),
  ]);
  const graph = graphSchema.safeParse(head.graph);
  const { orgSlug, automationSlug, automationName, version, contact, contactZone, contactConsent, contactId, graph: _g, ...run } = head;
  return { run, orgSlug, automationSlug, automationName, version, contact, contactZone, contactConsent, contactId, graph: graph.success ? graph.data : null, steps, effects, uncertain, timers, signals, approvals, approvalEdits, timeline, emails, emailRates };
}

/** The role the user holds in the run's organisation (owners and editors may act on runs). */
export function mayActOnRuns(role: string | undefined): boolean {
  return role === "owner" || role === "editor";
}
