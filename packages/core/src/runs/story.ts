import { DateTime } from "luxon";
import { type Condition, conditionSentence } from "../kinds/branch";
import { kindOf } from "../kinds/registry";
import { durationWords, listWords } from "../kinds/words";
import { isValidZone } from "../kinds/wait-rule";
import { pathTaken } from "./path-taken";
import { sentEmail } from "./sent-email";
import { heldWords } from "./status-words";
import { rec, str } from "./values";
import { answeredWords, errorPhrase, failureWhy, parkedWhy, type StepErrorLike } from "./why";

/**
 * A run's story for people: one sentence per step taken ("Waited until Mon 1 Dec 09:00 Europe/Berlin (your time
 * 08:00 UTC), fired 0.1 s late"), the status sentence with what to do, the path taken through the graph, and the
 * email it sent. Pure: it reads the rows the run page already loads (run, steps, timeline, timers, approvals,
 * signals, effects, the version's graph) and formats instants in the viewer's zone with the contact's beside. No
 * clock: every time comes from a row.
 */

export interface StoryRun {
  id: string;
  status: string;
  /** Its automation is paused with its runs held (runs.held_at). */
  held?: boolean;
  input?: unknown;
  error: unknown;
  cancelRequestedAt: Date | null;
  cancelReason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}
export interface StoryStep {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  status: string;
  attempt: number;
  maxAttempts: number;
  /** Times given back unstarted (no connection slot): not attempts. */
  deferrals?: number;
  availableAt: Date;
  output: unknown;
  error: StepErrorLike | null;
  createdAt: Date;
  settledAt: Date | null;
}
export interface StoryEvent {
  at: Date;
  type: string;
  stepId: string | null;
  nodeId: string | null;
  attempt: number | null;
  worker: string | null;
  data: Record<string, unknown> | null;
}
export interface StoryTimer {
  stepId: string;
  rule: unknown;
  zone: string;
  dueAt: Date;
  firedAt: Date | null;
  /** Who fired it: a person's "Fire this wait now" names them (with the reason on its timer.fired event). */
  firedBy?: string | null;
  latenessMs: number | null;
}
export interface StoryApproval {
  stepId: string;
  nodeId: string;
  stage: number;
  title: string;
  approvers: { users?: string[]; role?: string };
  onDeadline: unknown;
  status: string;
  decidedByName: string | null;
  decidedVia: string | null;
  decidedAt: Date | null;
  deadlineAt: Date;
}
export interface StorySignal {
  kind: string;
  stepId: string | null;
  receivedAt: Date;
  consumedAt: Date | null;
  payload: unknown;
  unmatchedReason: string | null;
}
export interface StoryGraph {
  nodes: { id: string; kind: string; name?: string | undefined; config?: unknown }[];
  edges: { from: string; to: string; label?: string | undefined }[];
}
export interface StoryInput {
  run: StoryRun;
  steps: StoryStep[];
  timeline: StoryEvent[];
  timers: StoryTimer[];
  approvals: StoryApproval[];
  signals: StorySignal[];
  graph: StoryGraph | null;
  contact: { email: string; timeZone: string | null; id?: string; consent?: string } | null;
  /** The viewer's IANA zone (their browser's); an unknown one reads as UTC. */
  viewerZone: string;
  /** Calls whose outcome nobody knows (effectsUncertainOfRun): a cancelled run with any still needs a person. */
  uncertain?: { key: string; stepId: string | null; nodeId: string | null }[];
}

export type StoryTone = "done" | "waiting" | "working" | "warning" | "failed" | "stopped";
export interface StorySentence {
  stepId: string | null;
  nodeId: string;
  at: Date;
  text: string;
  tone: StoryTone;
}
export type StoryState = "completed" | "running" | "held" | "waiting" | "parked" | "needs_review" | "failed" | "cancelled";
/** The buttons that fix it: the page maps each to a form or a link. */
export type StoryAction = "resume" | "resolve" | "raise_budget" | "reconnect" | "retry" | "decide";
export interface StoryStatus {
  state: StoryState;
  text: string;
  todo: string | null;
  actions: StoryAction[];
  /** The step the status is about (a parked or failed step). */
  stepId: string | null;
}
export interface StoryEmail {
  nodeId: string;
  /**
   * recorded: as sent (the step's output); reconstructed: a run sent before outputs recorded the email, rendered
   * again from the step's templates; erased: the contact was erased, nothing of it is left.
   */
  source: "recorded" | "reconstructed" | "erased";
  to: string;
  from: string | null;
  replyTo: string | null;
  messageId: string | null;
  subject: string;
  /** The text body (the HTML one when there is no text). */
  body: string;
  html: string | null;
  sentAt: Date | null;
}
export interface Story {
  status: StoryStatus;
  sentences: StorySentence[];
  /** Nodes and edges ("from->to") the run went through, in order. */
  path: { nodes: string[]; edges: string[] };
  email: StoryEmail | null;
  clock: StoryClock;
}

export interface StoryClock {
  viewer: string;
  contact: string | null;
  /** In the viewer's zone, with the contact's beside: "Mon 1 Dec 08:00 UTC (contact's time 09:00 Europe/Berlin)". */
  when(at: Date): string;
  /** In `zone` first, with the viewer's beside: "Mon 1 Dec 09:00 Europe/Berlin (your time 08:00 UTC)". */
  whenIn(at: Date, zone: string): string;
}

const day = "ccc d LLL";
const hm = "HH:mm";
const fmt = (at: Date, zone: string, format = `${day} ${hm}`) => `${DateTime.fromJSDate(at, { zone }).setLocale("en-GB").toFormat(format)} ${zone}`;
/** The other zone's reading: only the time when it is the same calendar day, else the day too. */
function beside(at: Date, main: string, other: string): string {
  const a = DateTime.fromJSDate(at, { zone: main });
  const b = DateTime.fromJSDate(at, { zone: other });
  return fmt(at, other, a.toISODate() === b.toISODate() ? hm : `${day} ${hm}`);
}
const sameClock = (at: Date, a: string, b: string) => a === b || DateTime.fromJSDate(at, { zone: a }).offset === DateTime.fromJSDate(at, { zone: b }).offset;

export function storyClock(viewerZone: string, contactZone: string | null): StoryClock {
  const viewer = isValidZone(viewerZone) ? viewerZone : "UTC";
  const contact = contactZone && isValidZone(contactZone) ? contactZone : null;
  return {
    viewer,
    contact,
    when: (at) => (contact && !sameClock(at, viewer, contact) ? `${fmt(at, viewer)} (contact's time ${beside(at, viewer, contact)})` : fmt(at, viewer)),
    whenIn: (at, zone) => {
      const z = isValidZone(zone) ? zone : "UTC";
      return sameClock(at, z, viewer) ? fmt(at, z) : `${fmt(at, z)} (your time ${beside(at, z, viewer)})`;
    },
  };
}

/** "$0.000027", "$0.0013", "$1.25" from micro-dollars: two significant digits under a dollar (a draft costs little). */
export function usd(micros: number): string {
  const v = micros / 1e6;
  if (v <= 0) return "$0";
  return v >= 1 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(2))}`;
}

/** Seconds late, as words: "fired 0.1 s late", "fired on time". */
export function latenessWords(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "fired";
  if (ms < 50) return "fired on time";
  if (ms < 60_000) return `fired ${(ms / 1000).toFixed(1)} s late`;
  return `fired ${durationWords(Math.round(ms / 1000))} late`;
}

/** Real attempts (the claim token less deferrals) of the most: "attempt 2 of 3". */
export function attemptWords(step: Pick<StoryStep, "attempt" | "maxAttempts" | "deferrals">): string {
  const real = Math.max(1, step.attempt - (step.deferrals ?? 0));
  return `attempt ${real} of ${Math.max(step.maxAttempts, real)}`;
}

/** "user:sam@acme.test" -> "sam@acme.test"; "slack:usr_1" -> "Slack user usr_1". */
export function actorWords(worker: string | null | undefined): string {
  if (!worker) return "someone";
  const [kind, ...rest] = worker.split(":");
  const who = rest.join(":");
  if (!who) return worker;
  if (kind === "user" || kind === "inbox") return who;
  if (kind === "cli") return `${who} (CLI)`;
  if (kind === "slack") return `${who} (Slack)`;
  return worker;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const date = (v: unknown): Date | null => (v instanceof Date ? v : typeof v === "string" && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);
const quote = (s: string) => `"${s.length > 80 ? `${s.slice(0, 79)}…` : s}"`;

/** A step as people call it: the name its author gave ("Update the CRM"), else its kind and id (Update CRM "crm"). */
export const stepNames = (graph: StoryGraph | null) => (s: Pick<StoryStep, "nodeId" | "kind">) => {
  const named = graph?.nodes.find((n) => n.id === s.nodeId)?.name?.trim();
  return named ? `"${named}"` : `${kindOf(s.kind)?.label ?? s.kind} "${s.nodeId}"`;
};

export function buildStory(input: StoryInput): Story {
  const stepName = stepNames(input.graph);
  const clock = storyClock(input.viewerZone, input.contact?.timeZone ?? null);
  const email = sentEmail(input);
  const config = (id: string) => rec(input.graph?.nodes.find((n) => n.id === id)?.config);
  const sentences = stepSentences(input, input.steps, clock, email);
  const say = (nodeId: string, at: Date, text: string, tone: StoryTone) => sentences.push({ stepId: null, nodeId, at, text, tone });
  for (const e of input.timeline) {
    if (e.type === "branch.evaluated" && e.nodeId) {
      const condition = rec(config(e.nodeId)).condition as Condition | undefined;
      const result = e.data?.result === true;
      say(e.nodeId, e.at, `Took the ${result ? "true" : "false"} path at "${e.nodeId}"${condition ? ` (${conditionSentence(condition)}${result ? "" : " did not hold"})` : ""}`, "done");
    } else if (e.type === "step.parked" && e.stepId) {
      // An earlier hold of a step that went on (its own sentence tells where it is now).
      const s = input.steps.find((x) => x.id === e.stepId);
      const latestHold = input.timeline.filter((x) => x.type === "step.parked" && x.stepId === e.stepId).at(-1);
      if (s && !(s.status === "parked" && latestHold === e)) say(s.nodeId, e.at, `${stepName(s)} was on hold: ${parkedWhy(e.data as StepErrorLike, usd, clock.when).what}`, "warning");
    } else if (e.type === "approval.refused") {
      const via = e.data?.via === "slack" ? "in Slack" : "in the inbox";
      const what = e.data?.decision === "rejected" ? "rejection" : "approval";
      say(e.nodeId ?? "", e.at, `${str(e.data?.by) ?? actorWords(e.worker)}'s ${what} ${via} at ${clock.when(e.at)} was not recorded: ${str(e.data?.message) ?? "refused"}`, "warning");
    } else if (e.type === "timer.zone_unknown") {
      say(e.nodeId ?? "", e.at, str(e.data?.message) ?? `The contact's time zone is unknown: the wait counts in ${str(e.data?.fallback) ?? "UTC"}`, "warning");
    } else if (e.type === "run.retried") {
      // The retried step keeps one row: its failure before the retry is told here, where it happened in time.
      const s = input.steps.find((x) => x.id === e.stepId);
      const previous = e.data?.previousError as StepErrorLike | null | undefined;
      const failed = previous ? `${s ? stepName(s) : "The step"} ${errorPhrase(previous)} and the run failed; ` : "";
      say(e.nodeId ?? "", e.at, `${failed}retried from that step by ${actorWords(e.worker)} at ${clock.when(e.at)}`, "working");
    } else if (e.type === "step.resumed") {
      say(e.nodeId ?? "", e.at, `Resumed by ${actorWords(e.worker)} at ${clock.when(e.at)}`, "working");
    } else if (e.type.startsWith("review.")) {
      const did =
        e.type === "review.marked_done"
          ? "Marked as done"
          : e.type === "review.retry"
            ? "Sent again (marked as the same request)"
            : e.type === "review.not_performed"
              ? "Checked: it did not happen,"
              : "Abandoned";
      const note = str(e.data?.note);
      say(e.nodeId ?? "", e.at, `${did} by ${actorWords(e.worker)} at ${clock.when(e.at)}${note ? `: ${quote(note)}` : ""}`, "working");
    } else if (e.type === "timeline.removed") {
      // The sweeper's retention took the rows this story is partly told from (branches, retries, holds): say so.
      const days = num(e.data?.retentionDays);
      say("", e.at, `The timeline of this run was removed after ${days ?? "some"} days (retention).`, "done");
    } else if (e.type === "run.cancel_requested") {
      const reason = str(e.data?.reason);
      say("", e.at, `Cancel requested by ${actorWords(e.worker)} at ${clock.when(e.at)}${reason ? `: ${quote(reason)}` : ""}`, "stopped");
    }
  }
  for (const g of input.signals) {
    if (g.unmatchedReason) say("", g.receivedAt, `A ${g.kind} arrived at ${clock.when(g.receivedAt)} and was ignored: ${g.unmatchedReason}`, "warning");
  }
  // Stable: steps written in one instant keep their order.
  sentences.sort((a, b) => a.at.getTime() - b.at.getTime());
  return { status: statusOf(input, clock, email), sentences, path: pathTaken(input), email, clock };
}

/** One sentence per step, in the order given. */
function stepSentences(input: StoryInput, steps: StoryStep[], clock: StoryClock, email: StoryEmail | null): StorySentence[] {
  const name = stepNames(input.graph);
  const config = (id: string) => rec(input.graph?.nodes.find((n) => n.id === id)?.config);
  const eventsOf = (stepId: string, type: string) => input.timeline.filter((e) => e.stepId === stepId && e.type === type);
  const sentences: StorySentence[] = [];
  const say = (s: StoryStep, nodeId: string, at: Date, text: string, tone: StoryTone) => sentences.push({ stepId: s.id, nodeId, at, text, tone });
  for (const s of steps) {
    const at = s.settledAt ?? s.createdAt;
    const out = rec(s.output);
    const timer = input.timers.find((t) => t.stepId === s.id);
    const due = timer?.dueAt ?? date(out.dueAt);
    // A person fired the wait before its time ("Fire this wait now"): who, when and why, from its timer.fired event.
    const early = eventsOf(s.id, "timer.fired").find((e) => e.data?.early === true);
    const earlyWords = early
      ? `${actorWords(early.worker)} fired it early at ${clock.when(early.at)}${str(early.data?.reason) ? `: ${quote(str(early.data?.reason) as string)}` : ""}`
      : "";
    if (s.status === "failed") {
      say(s, s.nodeId, at, `${name(s)} failed on ${attemptWords(s)}: ${failureWhy(s.error).what}`, "failed");
      continue;
    }
    if (s.status === "parked") {
      say(s, s.nodeId, at, `${name(s)} is on hold: ${parkedWhy(s.error, usd, clock.when).what}`, "warning");
      continue;
    }
    if (s.status === "ready" || s.status === "running") {
      const retries = eventsOf(s.id, "step.retry_scheduled").length;
      const text =
        s.status === "running"
          ? `${name(s)} is running (${attemptWords(s)})`
          : s.error
            ? `${name(s)}: attempt ${retries} ${errorPhrase(s.error)}; trying again at ${clock.when(s.availableAt)} (attempt ${retries + 1} of ${s.maxAttempts})`
            : `${name(s)} is queued`;
      say(s, s.nodeId, s.createdAt, text, s.error ? "warning" : "working");
      continue;
    }
    switch (s.kind) {
      case "wait": {
        const zone = timer?.zone ?? "UTC";
        const rule = rec(timer?.rule);
        const lead = rule.kind === "duration" && num(rule.seconds) !== null ? `${durationWords(num(rule.seconds) as number)}, until` : "until";
        // A time of day is in the zone it was computed in, the viewer's beside; a duration is nobody's local time.
        const until = due ? (rule.kind === "duration" ? clock.when(due) : clock.whenIn(due, zone)) : "its time";
        const scheduled = eventsOf(s.id, "timer.scheduled")[0];
        const fallback = rule.kind !== "duration" && scheduled?.data?.zoneSource === "default" ? " (no time zone known for the contact: UTC was used)" : "";
        const moved = eventsOf(s.id, "timer.recomputed").map((e) => {
          const old = date(e.data?.oldDueAt);
          return old ? `; moved from ${clock.whenIn(old, zone)} (${str(e.data?.reason) ?? "recomputed"})` : "";
        });
        if (s.status === "waiting") say(s, s.nodeId, s.createdAt, `Waiting ${lead} ${until}${fallback}${moved.join("")}`, "waiting");
        else if (s.status === "done" && early) say(s, s.nodeId, at, `Was to wait ${lead} ${until}; ${earlyWords}`, "done");
        else if (s.status === "done") say(s, s.nodeId, at, `Waited ${lead} ${until}, ${latenessWords(timer?.latenessMs ?? num(out.latenessMs))}${fallback}${moved.join("")}`, "done");
        else say(s, s.nodeId, at, `Was waiting ${lead} ${until} when the run stopped`, "stopped");
        break;
      }
      case "wait_for_reply": {
        const signal = input.signals.find((g) => g.stepId === s.id && g.consumedAt !== null);
        const reply = rec(out.reply);
        if (s.status === "waiting") say(s, s.nodeId, s.createdAt, `Waiting for a reply${email ? ` from ${email.to}` : ""} until ${due ? clock.when(due) : "the deadline"}`, "waiting");
        else if (s.status === "done" && out.outcome === "reply") {
          const subject = str(reply.subject);
          say(s, s.nodeId, at, `Reply received from ${str(reply.from) ?? "the contact"} at ${clock.when(signal?.receivedAt ?? at)}${subject ? `: ${quote(subject)}` : ""}`, "done");
        } else if (s.status === "done" && eventsOf(s.id, "reply.not_expected").length) {
          const why = str(eventsOf(s.id, "reply.not_expected")[0]?.data?.reason);
          say(s, s.nodeId, at, `Took the timeout path at once: no email was sent${why ? ` (${why})` : ""}, so no reply can come`, "done");
        } else if (s.status === "done" && early) {
          say(s, s.nodeId, at, `Stopped waiting for a reply (due by ${due ? clock.when(due) : "the deadline"}) and took the timeout path: ${earlyWords}`, "done");
        } else if (s.status === "done") say(s, s.nodeId, at, `Took the timeout path because no reply came by ${due ? clock.when(due) : "the deadline"}`, "done");
        else say(s, s.nodeId, at, "Was waiting for a reply when the run stopped", "stopped");
        break;
      }
      case "approval":
        say(s, s.nodeId, s.status === "waiting" ? s.createdAt : at, ...approvalSentence(s, input.approvals.find((a) => a.stepId === s.id), clock));
        break;
      default: {
        if (s.status === "cancelled") {
          say(s, s.nodeId, at, `${name(s)} was stopped with the run`, "stopped");
          break;
        }
        const retries = eventsOf(s.id, "step.retry_scheduled");
        const tries = retries.length
          ? ` on ${attemptWords(s)} (${retries.map((e, i) => `attempt ${i + 1} ${errorPhrase(e.data as StepErrorLike)}`).join("; ")})`
          : "";
        const [text, tone] = doneSentence(s, out, config(s.nodeId), email, clock);
        say(s, s.nodeId, at, `${text}${tries}`, tone);
      }
    }
  }
  return sentences;
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
      // A test run's email is built, not sent (connectors/simulate.ts); a copy may have gone to the tester.
      if (out.simulated === true) {
        const copy = rec(out.sentToTester);
        const toTester = str(copy.to) ? (str(copy.error) ? `; the copy to ${str(copy.to)} failed: ${str(copy.error)}` : `; a copy went to ${str(copy.to)}, marked [Test]`) : "";
        return [`Email to ${to}${subject} built at ${clock.when(s.settledAt ?? s.createdAt)}, not sent (test run)${toTester}`, "done"];
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

/** The run's last word: what state it is in, why, and what to do. */
function statusOf(input: StoryInput, clock: StoryClock, email: StoryEmail | null): StoryStatus {
  const name = stepNames(input.graph);
  const { run, steps, timeline } = input;
  const latest = (type: string) => timeline.filter((e) => e.type === type).at(-1);
  const base = { todo: null, actions: [] as StoryAction[], stepId: null };
  if (run.status === "completed") {
    const took = run.finishedAt ? ` after ${durationWords(Math.max(1, Math.round((run.finishedAt.getTime() - run.createdAt.getTime()) / 1000)))}` : "";
    return { ...base, state: "completed", text: `Completed${run.finishedAt ? ` ${clock.when(run.finishedAt)}` : ""}${took}.` };
  }
  if (run.status === "cancelled") {
    const asked = latest("run.cancel_requested");
    const by = asked ? actorWords(asked.worker) : "someone";
    const reason = run.cancelReason ?? str(asked?.data?.reason);
    const uncertain = input.uncertain ?? [];
    if (uncertain.length > 0) {
      const calls = uncertain.map((u) => {
        const s = steps.find((x) => x.id === u.stepId);
        return s ? name(s) : u.key;
      });
      return {
        ...base,
        state: "needs_review",
        text: `Cancelled by ${by}${run.finishedAt ? ` ${clock.when(run.finishedAt)}` : ""}${reason ? `: ${quote(reason)}` : ""}: the call at ${calls.join(", ")} may or may not have happened (its outcome was unknown when the run stopped).`,
        todo: "Check at the provider whether it happened, then say what you found (nothing is sent again).",
        actions: ["resolve"],
        stepId: uncertain[0]?.stepId ?? null,
      };
    }
    return {
      ...base,
      state: "cancelled",
      text: `Cancelled by ${by}${run.finishedAt ? ` ${clock.when(run.finishedAt)}` : ""}${reason ? `: ${quote(reason)}` : ""}.`,
      todo: "Nothing was undone: what the run had already sent or written stays as it is.",
    };
  }
  if (run.status === "failed") {
    const err = rec(run.error);
    const reason = str(err.reason) ?? "no reason recorded";
    const nodeId = str(err.nodeId);
    if (err.budget === "steps" || err.budget === "age") {
      return {
        ...base,
        state: "failed",
        text: `Stopped by its ${err.budget === "steps" ? "step" : "age"} budget: ${reason.replace(/^(step|age) budget: /, "")}.`,
        todo: "If the run should go further, raise the automation's run budget, then run it again.",
        actions: ["retry"],
      };
    }
    const failed = steps.filter((s) => s.status === "failed" && (nodeId === null || s.nodeId === nodeId)).at(-1);
    if (failed) {
      const why = failureWhy(failed.error);
      return { state: "failed", text: `Failed at ${name(failed)} on ${attemptWords(failed)}: ${why.what}.`, todo: `${capital(why.todo)}.`, actions: ["retry"], stepId: failed.id };
    }
    const approval = input.approvals.filter((a) => a.status === "expired" && (nodeId === null || a.nodeId === nodeId)).at(-1);
    if (approval) {
      return { ...base, state: "failed", text: `Stopped: nobody decided ${quote(approval.title)} by ${clock.when(approval.deadlineAt)}.`, todo: "Run it again to ask again.", actions: ["retry"] };
    }
    return { ...base, state: "failed", text: `Failed: ${reason}.`, todo: "Check the Details below, then run it again.", actions: ["retry"] };
  }
  const cancelling = run.cancelRequestedAt
    ? ` Cancel requested ${clock.when(run.cancelRequestedAt)}: it stops as soon as the call in flight settles.`
    : "";
  const review = steps.find((s) => s.status === "parked" && s.error?.code === "needs_review");
  const parked = review ?? steps.find((s) => s.status === "parked");
  if (run.held && !review) {
    return {
      ...base,
      state: "held",
      stepId: null,
      text: `${heldWords}: it takes no next step until the automation is resumed, then goes on from where it is.${cancelling}`,
      todo: "Resume the automation (on its page) to release its held runs.",
    };
  }
  if (parked) {
    const why = parkedWhy(parked.error, usd, clock.when);
    const code = parked.error?.code;
    const actions: StoryAction[] = review ? ["resolve"] : code === "budget_exhausted" ? ["raise_budget", "resume"] : code === "needs_reconnect" ? ["reconnect", "resume"] : ["resume"];
    return { state: review ? "needs_review" : "parked", text: `${review ? "Needs review" : "On hold"} at ${name(parked)}: ${why.what}.${cancelling}`, todo: `${capital(why.todo)}.`, actions, stepId: parked.id };
  }
  const open = steps.filter((s) => s.status === "waiting" || s.status === "ready" || s.status === "running").at(-1);
  if (!open) return { ...base, state: "running", text: `Running: moving to its next step.${cancelling}` };
  const waitingSentence = stepSentences(input, [open], clock, email)[0]?.text ?? `Running ${open.nodeId}`;
  if (open.status === "waiting") {
    return {
      ...base,
      state: "waiting",
      text: `${waitingSentence}.${cancelling}`,
      todo: open.kind === "approval" ? "Decide in the approvals inbox (or in Slack where it was posted)." : null,
      actions: open.kind === "approval" ? ["decide"] : [],
      stepId: open.id,
    };
  }
  return { ...base, state: "running", text: `${waitingSentence}.${cancelling}`, stepId: open.id };
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
