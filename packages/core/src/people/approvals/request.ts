import type { Tx } from "@holdfast/db";
import { approvalsInsert } from "../../store/sql/approvals";
import { membershipsSlackUsersOf } from "../../store/sql/memberships";
import { contactsOfRun } from "../../store/sql/contacts";
import { templateContact } from "../../base/templates/contact";
import type { OutboxRow } from "../../store/sql/outbox";
import type { RunEventRow } from "../../store/sql/run-events";
import { type StepRow, stepsFail, stepsSetOutput } from "../../store/sql/steps";
import { timersInsert } from "../../store/sql/timers";
import { runNow } from "../../store/sql/test-runs";
import { renderTemplate, type TemplateContext } from "../../base/templates/render";
import { timerFor } from "../../decide/timers/plan";
import type { GraphNode } from "../../versions/graph";
import { contentDigest } from "./digest";
import { draftOf, type EmailDigest, type EmailDraft, emailDigestOf, emailReviewText, renderEmail } from "./email";

type ApprovalNode = Extract<GraphNode, { kind: "approval" }>;
type SendEmailNode = Extract<GraphNode, { kind: "send_email" }>;

export interface ApprovalRequested {
  events: RunEventRow[];
  outbox: OutboxRow[];
}

/**
 * A run reached an approval step (inserted `waiting` in this transaction): render the exact content under review,
 * take its digest, write the approval (stage 1, or 2 for an escalation: other approvers, their own deadline), the
 * deadline's timer on the step, the step's signal key, the Slack post owed, and the timeline rows. All in the
 * engine's transaction: a crash before its commit leaves no half-made request. An approval of an email (`email`, the
 * send step's node) shows that email rendered as it would be sent, after the content, and keeps its digests.
 */
export async function requestApproval(
  tx: Tx,
  run: { id: string; orgId: string; input: unknown; test?: boolean },
  step: { id: string },
  node: ApprovalNode,
  stage: number,
  steps: StepRow[],
  actor: string,
  email: SendEmailNode | null = null,
): Promise<ApprovalRequested> {
  const base = { orgId: run.orgId, runId: run.id, worker: actor, stepId: step.id, nodeId: node.id };
  const escalation = stage > 1 && node.config.onDeadline.action === "escalate" ? node.config.onDeadline : null;
  const approvers = escalation ? escalation.to : node.config.approvers;
  const deadlineSeconds = escalation ? escalation.deadlineSeconds : node.config.deadlineSeconds;

  const context = await templateContextInTx(tx, run, steps);
  let review: ReviewContent;
  try {
    review = contentForReview(node, email, context);
  } catch (error) {
    // The content cannot be known: the step fails (visible), and the next walk stops the run on it.
    await stepsFail(tx, step.id, { code: "template", message: (error as Error).message });
    return {
      events: [{ ...base, type: "approval.content_failed", data: { message: (error as Error).message } }],
      outbox: [{ orgId: run.orgId, runId: run.id, topic: "run.wake", payload: { orgId: run.orgId, runId: run.id, reason: "step_settled" } }],
    };
  }
  const { title, content, emailDigest, emailDraft } = review;
  const digest = contentDigest(title, content);
  const { slackConfig, slackUsers, slack } = await slackTarget(tx, run, node, approvers);
  await stepsSetOutput(tx, step.id, { stage });
  const approval = await approvalsInsert(tx, {
    orgId: run.orgId,
    runId: run.id,
    stepId: step.id,
    nodeId: node.id,
    stage,
    approvers,
    title,
    content,
    digest,
    deadlineSeconds,
    onDeadline: node.config.onDeadline,
    // A test run's approval is posted nowhere (its page decides it): no Slack message to post or update later.
    slack,
    emailDigest,
    emailDraft,
  });
  const now = await runNow(tx, run);
  const timer = timerFor({ rule: { kind: "duration", seconds: deadlineSeconds }, spreadSeconds: 0 }, run.id, run.input, now);
  const written = await timersInsert(tx, { ...timer, orgId: run.orgId, runId: run.id, stepId: step.id });
  // A test run's approval is decided on its own page (run/test-runs/): nobody is asked in Slack or the inbox.
  const outbox: OutboxRow[] = slack
    ? [{ orgId: run.orgId, runId: run.id, topic: "approval.notify", payload: { orgId: run.orgId, approvalId: approval.id } }]
    : [];
  return {
    events: [
      {
        ...base,
        type: "approval.requested",
        data: {
          approvalId: approval.id,
          stage,
          approvers,
          digest: digest.slice(0, 12),
          ...(emailDigest ? { email: emailDigest.node } : {}),
          deadlineAt: approval.deadlineAt.toISOString(),
          onDeadline: node.config.onDeadline.action,
          slack: slack?.channel ?? null,
          ...(slackConfig?.to === "approvers" && slackUsers.length === 0 ? { slackSkipped: "no approver has a linked Slack user (Settings -> Slack links): asked in the inbox only" } : {}),
        },
      },
      { ...base, type: "timer.scheduled", data: { timerId: written.id, rule: timer.rule, zone: timer.zone, dueAt: timer.dueAt.toISOString(), purpose: "approval deadline" } },
    ],
    outbox,
  };
}

interface ReviewContent {
  title: string;
  content: string;
  emailDigest: EmailDigest | null;
  emailDraft: EmailDraft | null;
}

/** The exact content under review, rendered: its title and text, then the email it approves as it would be sent. */
function contentForReview(node: ApprovalNode, email: SendEmailNode | null, context: TemplateContext): ReviewContent {
  const title = renderTemplate(node.config.title, context, "text");
  let content = renderTemplate(node.config.content, context, "text");
  if (!email) return { title, content, emailDigest: null, emailDraft: null };
  let parts: ReturnType<typeof renderEmail>;
  try {
    parts = renderEmail(email.config, context);
  } catch (error) {
    throw new Error(`the email of "${email.id}" cannot be shown for approval: ${(error as Error).message}`);
  }
  content = [content.trim() === "" ? null : content, emailReviewText(parts)].filter((c) => c !== null).join("\n\n");
  return { title, content, emailDigest: emailDigestOf(email.id, parts), emailDraft: draftOf(parts) };
}

/** Where Slack posts it: a channel as configured, or the approvers' linked Slack users (one group message). */
async function slackTarget(tx: Tx, run: { orgId: string; test?: boolean }, node: ApprovalNode, approvers: ApprovalNode["config"]["approvers"]) {
  const slackConfig = run.test ? null : (node.config.slack ?? null);
  const slackUsers = slackConfig?.to === "approvers" ? await membershipsSlackUsersOf(tx, run.orgId, approvers.users, approvers.role ?? null) : [];
  const slack =
    slackConfig === null
      ? null
      : slackConfig.to === "approvers"
        ? slackUsers.length > 0
          ? { connection: slackConfig.connection, channel: slackUsers.join(",") }
          : null
        : { connection: slackConfig.connection, channel: slackConfig.channel as string };
  return { slackConfig, slackUsers, slack };
}

async function templateContextInTx(tx: Tx, run: { id: string; orgId: string; input: unknown }, steps: StepRow[]): Promise<TemplateContext> {
  const contact = await contactsOfRun(tx, run.orgId, run.id);
  const done: TemplateContext["steps"] = {};
  for (const s of [...steps].sort((a, b) => a.iteration - b.iteration)) if (s.status === "done") done[s.nodeId] = { output: s.output };
  return {
    input: run.input,
    contact: contact ? templateContact(contact) : null,
    steps: done,
    run: { id: run.id },
  };
}
