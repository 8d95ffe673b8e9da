import { kindOf } from "../../versions/kinds/registry";
import { durationWords, listWords } from "../../versions/kinds/words";
import type { StoryApproval, StoryClock, StoryEmail, StoryEvent, StoryInput, StorySentence, StoryStep, StoryTimer, StoryTone } from "./story-types";
import { latestHold } from "./story-holds";
import { actorWords, attemptWords, latenessWords, quote, stepNames, usd } from "./story-words";
import { date, num, rec, str } from "./values";
import { answeredWords, errorPhrase, failureWhy, parkedWhy, type StepErrorLike } from "./why";

/** One step's sentence, before it is tied to its step: when, what, and its tone. */
interface Said {
  at: Date;
  text: string;
  tone: StoryTone;
}

/** What a step's sentence is told from, read once: its rows, its timer, its events, and a person's early firing. */
interface StepFacts {
  s: StoryStep;
  /** When it settled, else when it was made. */
  at: Date;
  out: Record<string, unknown>;
  timer: StoryTimer | undefined;
  due: Date | null;
  /** A person fired the wait before its time ("Fire this wait now"): its timer.fired event. */
  early: StoryEvent | undefined;
  /** Who fired it early, when and why; "" when nobody did. */
  earlyWords: string;
  events(type: string): StoryEvent[];
}

type Name = ReturnType<typeof stepNames>;

/** One sentence per step, in the order given. */
export function stepSentences(input: StoryInput, steps: StoryStep[], clock: StoryClock, email: StoryEmail | null): StorySentence[] {
  const name = stepNames(input.graph);
  return steps.map((s) => {
    const f = factsOf(input, s, clock);
    const said = openSentence(f, name, clock) ?? kindSentence(f, input, name, clock, email);
    return { stepId: s.id, nodeId: s.nodeId, at: said.at, text: said.text, tone: said.tone };
  });
}

function factsOf(input: StoryInput, s: StoryStep, clock: StoryClock): StepFacts {
  const events = (type: string) => input.timeline.filter((e) => e.stepId === s.id && e.type === type);
  const out = rec(s.output);
  const timer = input.timers.find((t) => t.stepId === s.id);
  const early = events("timer.fired").find((e) => e.data?.early === true);
  const earlyWords = early
    ? `${actorWords(early.worker)} fired it early at ${clock.when(early.at)}${str(early.data?.reason) ? `: ${quote(str(early.data?.reason) as string)}` : ""}`
    : "";
  return { s, at: s.settledAt ?? s.createdAt, out, timer, due: timer?.dueAt ?? date(out.dueAt), early, earlyWords, events };
}

/** A step that failed, is on hold, or has not settled yet, whatever its kind; undefined for the others. */
function openSentence({ s, at, events }: StepFacts, name: Name, clock: StoryClock): Said | undefined {
  if (s.status === "failed") return { at, text: `${name(s)} failed on ${attemptWords(s)}: ${failureWhy(s.error).what}`, tone: "failed" };
  if (s.status === "parked") return { at, text: `${name(s)} is on hold: ${parkedWhy(s.error, usd, clock.when).what}`, tone: "warning" };
  if (s.status !== "ready" && s.status !== "running") return undefined;
  // A send held by a sending rule (quiet hours, the frequency cap) waits for its instant: say until when and why.
  const held = s.status === "ready" && !s.error ? latestHold(events("step.deferred"), clock) : null;
  if (held) return { at: s.createdAt, text: `${s.kind === "send_email" ? "Email" : name(s)} held ${held.text}`, tone: "waiting" };
  const retries = events("step.retry_scheduled").length;
  const text =
    s.status === "running"
      ? `${name(s)} is running (${attemptWords(s)})`
      : s.error
        ? `${name(s)}: attempt ${retries} ${errorPhrase(s.error)}; trying again at ${clock.when(s.availableAt)} (attempt ${retries + 1} of ${s.maxAttempts})`
        : `${name(s)} is queued`;
  return { at: s.createdAt, text, tone: s.error ? "warning" : "working" };
}

/** A settled or waiting step, as its kind tells it. */
function kindSentence(f: StepFacts, input: StoryInput, name: Name, clock: StoryClock, email: StoryEmail | null): Said {
  const { s, at, out, events } = f;
  switch (s.kind) {
    case "wait":
      return waitSentence(f, clock);
    case "wait_for_reply":
      return replySentence(f, input, clock, email);
    case "approval": {
      const [text, tone] = approvalSentence(s, input.approvals.find((a) => a.stepId === s.id), clock);
      return { at: s.status === "waiting" ? s.createdAt : at, text, tone };
    }
    default: {
      if (s.status === "cancelled") return { at, text: `${name(s)} was stopped with the run`, tone: "stopped" };
      const retries = events("step.retry_scheduled");
      const tries = retries.length
        ? ` on ${attemptWords(s)} (${retries.map((e, i) => `attempt ${i + 1} ${errorPhrase(e.data as StepErrorLike)}`).join("; ")})`
        : "";
      const [text, tone] = doneSentence(s, out, rec(input.graph?.nodes.find((n) => n.id === s.nodeId)?.config), email, clock);
      const held = latestHold(events("step.deferred"), clock);
      return { at, text: `${text}${tries}${held ? `; it was held ${held.text}` : ""}`, tone };
    }
  }
}

function waitSentence({ s, at, out, timer, due, early, earlyWords, events }: StepFacts, clock: StoryClock): Said {
  const zone = timer?.zone ?? "UTC";
  const rule = rec(timer?.rule);
  const lead = rule.kind === "duration" && num(rule.seconds) !== null ? `${durationWords(num(rule.seconds) as number)}, until` : "until";
  // A time of day is in the zone it was computed in, the viewer's beside; a duration is nobody's local time.
  const until = due ? (rule.kind === "duration" ? clock.when(due) : clock.whenIn(due, zone)) : "its time";
  const scheduled = events("timer.scheduled")[0];
  const fallback = rule.kind !== "duration" && scheduled?.data?.zoneSource === "default" ? " (no time zone known for the contact: UTC was used)" : "";
  const moved = events("timer.recomputed").map((e) => {
    const old = date(e.data?.oldDueAt);
    return old ? `; moved from ${clock.whenIn(old, zone)} (${str(e.data?.reason) ?? "recomputed"})` : "";
  });
  if (s.status === "waiting") return { at: s.createdAt, text: `Waiting ${lead} ${until}${fallback}${moved.join("")}`, tone: "waiting" };
  if (s.status === "done" && early) return { at, text: `Was to wait ${lead} ${until}; ${earlyWords}`, tone: "done" };
  if (s.status === "done") {
    return { at, text: `Waited ${lead} ${until}, ${latenessWords(timer?.latenessMs ?? num(out.latenessMs))}${fallback}${moved.join("")}`, tone: "done" };
  }
  return { at, text: `Was waiting ${lead} ${until} when the run stopped`, tone: "stopped" };
}

function replySentence({ s, at, out, due, early, earlyWords, events }: StepFacts, input: StoryInput, clock: StoryClock, email: StoryEmail | null): Said {
  const signal = input.signals.find((g) => g.stepId === s.id && g.consumedAt !== null);
  const reply = rec(out.reply);
  const by = due ? clock.when(due) : "the deadline";
  if (s.status === "waiting") return { at: s.createdAt, text: `Waiting for a reply${email ? ` from ${email.to}` : ""} until ${by}`, tone: "waiting" };
  if (s.status === "done" && out.outcome === "reply") {
    const subject = str(reply.subject);
    return { at, text: `Reply received from ${str(reply.from) ?? "the contact"} at ${clock.when(signal?.receivedAt ?? at)}${subject ? `: ${quote(subject)}` : ""}`, tone: "done" };
  }
  if (s.status === "done" && events("reply.not_expected").length) {
    const why = str(events("reply.not_expected")[0]?.data?.reason);
    return { at, text: `Took the timeout path at once: no email was sent${why ? ` (${why})` : ""}, so no reply can come`, tone: "done" };
  }
  if (s.status === "done" && early) return { at, text: `Stopped waiting for a reply (due by ${by}) and took the timeout path: ${earlyWords}`, tone: "done" };
  if (s.status === "done") return { at, text: `Took the timeout path because no reply came by ${by}`, tone: "done" };
  return { at, text: "Was waiting for a reply when the run stopped", tone: "stopped" };
}

const approvers = (a: StoryApproval["approvers"]) => listWords([...(a.users ?? []), ...(a.role ? [`any ${a.role}`] : [])]) || "the approvers";

function approvalSentence(s: StoryStep, a: StoryApproval | undefined, clock: StoryClock): [string, StoryTone] {
  if (!a) return s.status === "waiting" ? ["Waiting for a decision", "waiting"] : ["The approval closed", "done"];
  const verb = a.status === "approved" ? "Approved" : "Rejected";
  const deadline = clock.when(a.deadlineAt);
  switch (a.status) {
    case "pending":
      return [`Waiting for ${approvers(a.approvers)} to approve ${quote(a.title)} by ${deadline}`, "waiting"];
    case "approved":
    case "rejected": {
      if (a.decidedVia === "deadline") return [`${verb} by default: nobody decided by ${deadline}`, a.status === "approved" ? "done" : "warning"];
      const where = a.decidedVia === "slack" ? "in Slack" : a.decidedVia === "test" ? "on the test run's page" : "in the inbox";
      return [`${verb} by ${a.decidedByName ?? "someone"} ${where} at ${clock.when(a.decidedAt ?? s.settledAt ?? s.createdAt)}`, a.status === "approved" ? "done" : "warning"];
    }
    case "escalated": {
      const to = rec(a.onDeadline).to as StoryApproval["approvers"] | undefined;
      return [`Nobody decided by ${deadline}, so it went to ${to ? approvers(to) : "the escalation approvers"}`, "warning"];
    }
    case "expired":
      return [`Nobody decided by ${deadline}: the run stopped there`, "failed"];
    default:
      return ["The approval closed unanswered when the run stopped", "stopped"];
  }
}

function doneSentence(s: StoryStep, out: Record<string, unknown>, config: Record<string, unknown>, email: StoryEmail | null, clock: StoryClock): [string, StoryTone] {
  switch (s.kind) {
    case "model_draft": {
      const usage = rec(out.usage);
      const tokens = num(usage.input) !== null && num(usage.output) !== null ? `${(num(usage.input) as number) + (num(usage.output) as number)} tokens` : "tokens not reported";
      const cost = num(out.costMicros);
      return [`Draft by ${str(out.model) ?? "the model"}, ${tokens}${cost !== null ? `, ${usd(cost)}` : ""}`, "done"];
    }
    case "send_email": {
      const to = str(out.to) ?? "the contact";
      if (out.skipped === true) return [`Email to ${to} not sent: ${str(out.reason) ?? "not allowed"}`, "warning"];
      const subject = email?.nodeId === s.nodeId && email.subject ? ` ${quote(email.subject)}` : "";
      const rejected = Array.isArray(out.rejected) && out.rejected.length ? `, refused for ${out.rejected.join(", ")}` : "";
      // A test run's email is built, not sent (run/connectors/simulate.ts); a copy may have gone to the tester.
      if (out.simulated === true) {
        const copy = rec(out.sentToTester);
        const toTester = str(copy.to) ? (str(copy.error) ? `; the copy to ${str(copy.to)} failed: ${str(copy.error)}` : `; a copy went to ${str(copy.to)}, marked [Test]`) : "";
        return [`Email to ${to}${subject} built at ${clock.when(s.settledAt ?? s.createdAt)}, not sent (test run: nothing is sent, so the frequency cap neither counts nor holds it)${toTester}`, "done"];
      }
      return [`Email to ${to}${subject} accepted by the server at ${clock.when(s.settledAt ?? s.createdAt)}${rejected}`, "done"];
    }
    case "crm_upsert": {
      const id = str(out.id) ?? (num(out.id) !== null ? String(out.id) : null);
      if (out.testRun === true) return [`CRM ${str(config.object) ?? "record"} update recorded, the CRM not called (test run)`, "done"];
      return [`CRM ${str(config.object) ?? "record"}${id ? ` ${id}` : ""} created or updated`, "done"];
    }
    case "http_request": {
      const status = num(out.status);
      if (out.testRun === true) return [`${str(config.method) ?? "POST"} ${hostOf(str(config.url))} recorded, not called (test run): the answer chosen was ${status ?? "a success"}`, "done"];
      return [`${str(config.method) ?? "POST"} ${hostOf(str(config.url))} ${status !== null ? answeredWords(status) : "answered"}`, "done"];
    }
    default:
      return [`${kindOf(s.kind)?.label ?? s.kind} "${s.nodeId}" done`, "done"];
  }
}

function hostOf(url: string | null): string {
  if (!url) return "the address";
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return url;
  }
}
