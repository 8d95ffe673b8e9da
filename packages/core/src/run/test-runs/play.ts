import { type Db, inTx } from "@holdfast/db";
import { mayDecide } from "../../people/approvals/judge";
import { approvalsForRun } from "../../store/sql/approvals";
import { membershipsList } from "../../store/sql/memberships";
import { runsStatus } from "../../store/sql/runs-view";
import { stepsHeldOfRun } from "../../store/sql/steps-held";
import { stepsViewOfRun } from "../../store/sql/steps-view";
import { testRunsGet } from "../../store/sql/test-runs";
import { timersPendingOfRun } from "../../store/sql/timers-pending";
import type { GraphCache } from "../../versions/graph-cache";
import { decideTestApproval, simulateTestReply, skipTestWait, TestRunError } from "./actions";
import { testScript } from "./script";

/**
 * A test run as its page shows it (issue 40): its virtual clock, and each step that waits for the tester with what
 * can be done to it: a wait's instant (in its zone and UTC) to skip to, an approval's approvers to decide as, a reply
 * wait to answer or let pass. "Play to the end" does each in turn, as the script says, until the run finishes.
 */
export interface TestRunState {
  runId: string;
  status: string;
  virtualNow: Date;
  startedBy: string;
  sendTo: string | null;
  script: ReturnType<typeof testScript.parse>;
  waiting: (WaitingStep | HeldWaitingStep)[];
}

export type WaitingStep =
  | { kind: "wait"; stepId: string; nodeId: string; dueAt: Date; zone: string }
  | { kind: "reply"; stepId: string; nodeId: string; dueAt: Date | null; zone: string | null }
  | { kind: "approval"; stepId: string; nodeId: string; approvalId: string; title: string; approvers: { userId: string; name: string; email: string }[] };
/** A send held by a sending rule until `until` (issue 44): "Held by quiet hours until …; Skip to then". */
export type HeldWaitingStep = { kind: "held"; stepId: string; nodeId: string; rule: "quiet_hours" | "frequency_cap"; until: Date; zone: string; words: string };

export async function testRunState(db: Db, orgId: string, runId: string): Promise<TestRunState> {
  const row = await testRunsGet(db, orgId, runId);
  if (!row) throw new TestRunError("not_a_test_run", "this is not a test run");
  const [status, steps, timers, approvals, members, held] = await inTx(db, async (tx) => [
    await runsStatus(tx, runId),
    await stepsViewOfRun(tx, orgId, runId),
    await timersPendingOfRun(tx, orgId, runId),
    await approvalsForRun(tx, orgId, runId),
    await membershipsList(tx, orgId),
    await stepsHeldOfRun(tx, orgId, runId),
  ] as const);
  const waiting: TestRunState["waiting"] = [];
  for (const s of steps.filter((x) => x.status === "waiting")) {
    const timer = timers.find((t) => t.stepId === s.id);
    if (s.kind === "approval") {
      const a = approvals.find((x) => x.stepId === s.id && x.status === "pending");
      if (!a) continue;
      const eligible = members.filter((m) => mayDecide(a.approvers, { email: m.email, role: m.role as never }));
      waiting.push({ kind: "approval", stepId: s.id, nodeId: s.nodeId, approvalId: a.id, title: a.title, approvers: eligible.map((m) => ({ userId: m.userId, name: m.name, email: m.email })) });
    } else if (s.kind === "wait_for_reply") {
      waiting.push({ kind: "reply", stepId: s.id, nodeId: s.nodeId, dueAt: timer?.dueAt ?? null, zone: timer?.zone ?? null });
    } else if (timer) {
      waiting.push({ kind: "wait", stepId: s.id, nodeId: s.nodeId, dueAt: timer.dueAt, zone: timer.zone });
    }
  }
  for (const h of held) {
    waiting.push({ kind: "held", stepId: h.stepId, nodeId: h.nodeId, rule: h.hold.rule, until: new Date(h.hold.until), zone: h.hold.zone ?? "UTC", words: h.hold.words });
  }
  return {
    runId,
    status: status ?? "unknown",
    virtualNow: row.virtualNow,
    startedBy: row.startedBy,
    sendTo: row.sendTo,
    script: testScript.parse(row.script ?? {}),
    waiting,
  };
}

export interface PlayOutcome {
  status: string;
  /** What was done, in order, in words ("Skipped the wait at wait_until to Mon 7 Dec 08:00 UTC"). */
  done: string[];
  /** The run still runs when the time given ran out (effects in flight): play again to go on. */
  finished: boolean;
}

/**
 * Plays the test run to its end: each wait skipped to its instant, each approval decided as the script says (by the
 * first approver allowed to), each reply wait answered or let pass. Effect steps run on the workers as usual (their
 * answers come from the script); this waits for them. Returns when the run finishes or `budgetMs` runs out; a second
 * call goes on from where the run is, so a repeated click does nothing twice.
 */
export async function playTestRun(
  db: Db,
  graphs: GraphCache,
  t: { orgId: string; orgSlug: string; runId: string; by: string; budgetMs?: number },
): Promise<PlayOutcome> {
  const until = Date.now() + (t.budgetMs ?? 60_000);
  const done: string[] = [];
  for (;;) {
    const state = await testRunState(db, t.orgId, t.runId);
    if (state.status !== "running") return { status: state.status, done, finished: true };
    if (Date.now() > until) return { status: state.status, done, finished: false };
    const next = state.waiting[0];
    if (!next) {
      // Steps in flight on the workers (simulated effects): look again shortly.
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (next.kind === "wait" || next.kind === "held") {
      const r = await skipTestWait(db, graphs, { orgId: t.orgId, runId: t.runId, stepId: next.stepId, by: t.by });
      const what = next.kind === "held" ? `the send held by ${next.rule === "quiet_hours" ? "quiet hours" : "the frequency cap"}` : "the wait";
      if (r.kind === "skipped") done.push(`Skipped ${what} at "${next.nodeId}" to ${r.virtualAt.toISOString()} (${r.zone})`);
    } else if (next.kind === "approval") {
      const decision = state.script.approvals[next.nodeId] === "reject" ? "rejected" : "approved";
      const as = next.approvers[0];
      if (!as) throw new TestRunError("no_approver", `nobody in the organisation may decide "${next.title}": add an approver, then play again`);
      const r = await decideTestApproval(db, { orgId: t.orgId, runId: t.runId, approvalId: next.approvalId, decision, asUserId: as.userId, by: t.by });
      if (r.ok) done.push(`${decision === "approved" ? "Approved" : "Rejected"} "${next.title}" as ${as.name}`);
      else throw new TestRunError("decision_refused", `"${next.title}" could not be decided as ${as.name}: ${r.refusal.message}`);
    } else {
      const reply = state.script.replies[next.nodeId];
      const text = reply === "none" ? null : (reply?.text ?? "Yes, I'm interested: tell me more.");
      await simulateTestReply(db, graphs, { orgId: t.orgId, orgSlug: t.orgSlug, runId: t.runId, stepId: next.stepId, text, by: t.by });
      done.push(text === null ? `Let the reply wait at "${next.nodeId}" pass with no reply` : `Replied at "${next.nodeId}": "${text}"`);
    }
    // Let the workers and the engine pick up what the action released.
    await new Promise((r) => setTimeout(r, 100));
  }
}
