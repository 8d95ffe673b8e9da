import { renderEmail } from "../../people/approvals/email";
import { approversWords } from "../../versions/kinds/approval";
import { ruleWords } from "../../versions/kinds/wait";
import { durationWords } from "../../versions/kinds/words";
import { zoneFor, zoneSourceWords } from "../../decide/timers/plan";
import { type PreviewInstant, previewWait } from "../../decide/timers/preview";
import type { GraphNode } from "../../versions/graph";
import { fill, instantAfter, type JourneyWalk, nodeName, type Previewed, rendering, type StepDraft, withMarkers } from "./journey-context";

/**
 * The preview of a step that waits (for a time, a reply, a decision): its instants from the timers' own schedule,
 * counted on the walk's clock, which a wait moves on; what it cannot know (a reply, a decision) is assumed.
 */

type NodeOf<K extends GraphNode["kind"]> = Extract<GraphNode, { kind: K }>;

export function waitPreview(w: JourneyWalk, node: NodeOf<"wait">, step: StepDraft): Previewed {
  const c = node.config;
  const choice = zoneFor(c, w.sample.input, w.contact?.time_zone ?? null);
  const instants = previewWait(c.rule, choice.zone, w.clock, 3);
  const first = instants[0] as PreviewInstant;
  const from = w.clock;
  w.clock = new Date(first.at);
  const zoneWords =
    c.rule.kind === "duration"
      ? ""
      : `in ${choice.zone}, from ${zoneSourceWords(choice.source)}${choice.unknown ? ` ("${choice.unknown}" in the sample is not a time zone)` : ""}`;
  const assumption = turnAssumption(from, w.now);
  return {
    step: {
      ...step,
      words: `Waits ${ruleWords(c.rule)}${zoneWords ? `, ${zoneWords}` : ""}.${c.spreadSeconds > 0 ? ` Each run is then spread by up to ${durationWords(c.spreadSeconds)}.` : ""}`,
      ...(assumption ? { assumption } : {}),
      detail: { kind: "wait", zone: choice.zone, zoneWords, instants },
    },
    output: { dueAt: first.at, firedAt: first.at },
  };
}

export function waitForReplyPreview(w: JourneyWalk, node: NodeOf<"wait_for_reply">, step: StepDraft): Previewed {
  const c = node.config;
  const deadline = instantAfter(w, c.timeoutSeconds);
  const replied = w.assume.reply;
  if (!replied) w.clock = new Date(deadline.at);
  return {
    step: {
      ...step,
      words: `Waits up to ${durationWords(c.timeoutSeconds)} (until ${deadline.local}) for a reply to the email of ${nodeName(w, c.replyTo)}.`,
      assumption: replied ? "Assumes the contact replies in time (choose “No reply” to see the other way)." : "Assumes no reply comes before the deadline.",
      detail: { kind: "wait_for_reply", replyTo: c.replyTo, deadline },
    },
    output: replied ? { outcome: "reply", reply: { text: "[their reply]", subject: "[their reply's subject]", from: w.contact?.email ?? "" } } : { outcome: "timeout" },
  };
}

export function approvalPreview(w: JourneyWalk, node: NodeOf<"approval">, step: StepDraft): Previewed {
  const c = node.config;
  const title = fill(w, step, c.title, "title");
  const content = fill(w, step, c.content, "content");
  const send = c.email ? w.graph.nodes.find((n) => n.id === c.email) : undefined;
  const email =
    send?.kind === "send_email"
      ? rendering(() => renderEmail(send.config, withMarkers(w, step, ["to", send.config.to], ["subject", send.config.subject], ["text", send.config.text], ["html", send.config.html])))
      : null;
  const deadline = instantAfter(w, c.deadlineSeconds);
  return {
    step: {
      ...step,
      words: `Asks ${approversWords(c.approvers)} to decide by ${deadline.local}${c.slack ? " (in Slack and the approvals inbox)" : " (in the approvals inbox)"}.`,
      assumption: `Assumes it is ${w.assume.approval} (choose the other decision to see that way).`,
      detail: { kind: "approval", approvers: approversWords(c.approvers), title, content, email, deadline },
    },
    output: { outcome: "reply", reply: { decision: w.assume.approval, byName: "[the approver]" } },
  };
}

function turnAssumption(from: Date, now: Date): string | undefined {
  return from.getTime() === now.getTime() ? undefined : "Counted from when the step before it would end.";
}
