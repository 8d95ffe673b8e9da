import { type Graph, parseGraph } from "@holdfast/core/versions";
import { createRng, deriveSeed } from "./rng";

/**
 * One automation that uses every kind that performs or waits, with a loop and branches:
 *
 *   trigger -> ping (http_request) -> again? (branch: second iteration done?) --no--> ping (the loop)
 *           -> draft (model_draft) -> plan? (branch: input.plan is pro) --yes--> crm (crm_upsert) --+
 *                                                                   \--no----------------------+--> review (approval: Slack or inbox)
 *   review --approved--> send (send_email, plain SMTP) -> await (wait_for_reply) --reply/timeout--> pause (wait) -> done
 *          --rejected--> dropped
 */
export function mixGraph(o: { httpUrl: string; replyTimeoutSeconds: number; pauseSeconds: number; approvalDeadlineSeconds: number }): Graph {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "ping", kind: "http_request", config: { url: o.httpUrl, method: "POST", body: { soak: true }, timeoutMs: 5_000 } },
      { id: "again", kind: "branch", config: { condition: { path: "steps.ping.output.body.key", op: "contains", value: "/ping/2" } } },
      { id: "draft", kind: "model_draft", config: { connection: "model", prompt: "Write a short note to {{contact.email}} about {{input.topic}}.", maxTokens: 60 } },
      { id: "plan", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
      { id: "crm", kind: "crm_upsert", config: { connection: "crm", object: "contact", fields: { email: "{{contact.email}}", plan: "{{input.plan}}" } } },
      {
        id: "review",
        kind: "approval",
        config: {
          approvers: { users: [approver.email] },
          title: "Send the note to {{contact.email}}?",
          content: "{{steps.draft.output.text}}",
          deadlineSeconds: o.approvalDeadlineSeconds,
          onDeadline: { action: "stop" },
          slack: { connection: "slack", channel: "C0APPROVALS" },
        },
      },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: "A note about {{input.topic}}", text: "{{steps.draft.output.text}}" } },
      { id: "await", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: o.replyTimeoutSeconds } },
      { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: o.pauseSeconds } } },
      { id: "done", kind: "end" },
      { id: "dropped", kind: "end" },
    ],
    edges: [
      { from: "t", to: "ping" },
      { from: "ping", to: "again" },
      { from: "again", to: "ping", label: "false" },
      { from: "again", to: "draft", label: "true" },
      { from: "draft", to: "plan" },
      { from: "plan", to: "crm", label: "true" },
      { from: "plan", to: "review", label: "false" },
      { from: "crm", to: "review" },
      { from: "review", to: "send", label: "approved" },
      { from: "review", to: "dropped", label: "rejected" },
      { from: "send", to: "await" },
      { from: "await", to: "pause", label: "reply" },
      { from: "await", to: "pause", label: "timeout" },
      { from: "pause", to: "done" },
    ],
  });
}

export const approver = { email: "sam@soak.test", name: "Sam", slackUserId: "U0SAM", password: "soak approver password 1" };

/** What the outside world does for delivery i: a pure function of the seed, so every script agrees without talking. */
export interface Plan {
  i: number;
  email: string;
  plan: "pro" | "basic";
  approveVia: "slack" | "inbox";
  decision: "approved" | "rejected";
  replyVia: "smtp" | "api" | "none";
  /** The sender delivers this one twice more after its first success (a provider's duplicate retries). */
  redeliver: boolean;
  replyDelayMs: number;
}

export function planFor(seed: number, i: number): Plan {
  const rng = createRng(deriveSeed(seed, `delivery:${i}`));
  const r = rng.next();
  return {
    i,
    email: emailOf(i),
    plan: rng.chance(0.5) ? "pro" : "basic",
    approveVia: rng.chance(0.5) ? "slack" : "inbox",
    decision: rng.chance(0.85) ? "approved" : "rejected",
    replyVia: r < 0.4 ? "smtp" : r < 0.8 ? "api" : "none",
    redeliver: rng.chance(0.05),
    replyDelayMs: rng.int(100, 2_000),
  };
}

export const emailOf = (i: number) => `p${i}@soak.test`;
/** The delivery a contact address belongs to (p<i>@soak.test), or null. */
export function indexOf(text: string): number | null {
  const m = /\bp(\d+)@soak\.test\b/.exec(text);
  return m ? Number(m[1]) : null;
}
