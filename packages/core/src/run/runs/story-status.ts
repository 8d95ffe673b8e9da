import { durationWords } from "../../versions/kinds/words";
import { goalWords } from "../../base/types/goals";
import { heldWords } from "./status-words";
import { latestHold } from "./story-holds";
import { stepSentences } from "./story-steps";
import type { StoryAction, StoryClock, StoryEmail, StoryInput, StoryStatus } from "./story-types";
import { actorWords, attemptWords, capital, quote, stepNames, usd } from "./story-words";
import { rec, str } from "./values";
import { failureWhy, parkedWhy } from "./why";

/** The parts of a status most states leave empty (a fresh list of actions each time). */
const base = () => ({ todo: null, actions: [] as StoryAction[], stepId: null });

/** The run's last word: what state it is in, why, and what to do. */
export function statusOf(input: StoryInput, clock: StoryClock, email: StoryEmail | null): StoryStatus {
  const { run } = input;
  if (run.status === "completed") {
    const took = run.finishedAt ? ` after ${durationWords(Math.max(1, Math.round((run.finishedAt.getTime() - run.createdAt.getTime()) / 1000)))}` : "";
    return { ...base(), state: "completed", text: `Completed${run.finishedAt ? ` ${clock.when(run.finishedAt)}` : ""}${took}.` };
  }
  if (run.status === "cancelled") return cancelledStatus(input, clock);
  if (run.status === "converted") return convertedStatus(input, clock);
  if (run.status === "failed") return failedStatus(input, clock);
  return liveStatus(input, clock, email);
}

/** Cancelled: by whom and why, or needs review while a call's outcome is unknown. */
function cancelledStatus(input: StoryInput, clock: StoryClock): StoryStatus {
  const { run } = input;
  const asked = input.timeline.filter((e) => e.type === "run.cancel_requested").at(-1);
  const by = asked ? actorWords(asked.worker) : "someone";
  const reason = run.cancelReason ?? str(asked?.data?.reason);
  const cancelled = `Cancelled by ${by}${run.finishedAt ? ` ${clock.when(run.finishedAt)}` : ""}${reason ? `: ${quote(reason)}` : ""}`;
  return (
    uncertainStatus(input, cancelled) ?? {
      ...base(),
      state: "cancelled",
      text: `${cancelled}.`,
      todo: "Nothing was undone: what the run had already sent or written stays as it is.",
    }
  );
}

/** A stopped run (cancelled, or ended at its goal) with a call whose outcome was unknown when it stopped: a person checks. */
function uncertainStatus(input: StoryInput, stopped: string): StoryStatus | null {
  const name = stepNames(input.graph);
  const uncertain = input.uncertain ?? [];
  if (uncertain.length === 0) return null;
  const calls = uncertain.map((u) => {
    const s = input.steps.find((x) => x.id === u.stepId);
    return s ? name(s) : u.key;
  });
  return {
    ...base(),
    state: "needs_review",
    text: `${stopped}: the call at ${calls.join(", ")} may or may not have happened (its outcome was unknown when the run stopped).`,
    todo: "Check at the provider whether it happened, then say what you found (nothing is sent again).",
    actions: ["resolve"],
    stepId: uncertain[0]?.stepId ?? null,
  };
}

/** Converted: the automation's goal was met for the contact, so the run ended there (which goal, and when). */
function convertedStatus(input: StoryInput, clock: StoryClock): StoryStatus {
  const met = input.timeline.filter((e) => e.type === "run.goal_met").at(-1);
  const goal = str(met?.data?.goal);
  const words = goal === "replied" || goal === "clicked" || goal === "event" ? goalWords[goal] : (input.run.cancelReason ?? "its goal was met");
  const when = met ? ` ${clock.when(met.at)}` : "";
  const converted = `Converted: the automation's goal was met${when} (${words}), so the run ended${input.run.finishedAt ? ` ${clock.when(input.run.finishedAt)}` : ""}`;
  return uncertainStatus(input, converted) ?? { ...base(), state: "converted", text: `${converted}.`, todo: null };
}

/** Failed: by a budget, at a step, at an approval nobody decided, or for the reason recorded. */
function failedStatus(input: StoryInput, clock: StoryClock): StoryStatus {
  const name = stepNames(input.graph);
  const err = rec(input.run.error);
  const reason = str(err.reason) ?? "no reason recorded";
  const nodeId = str(err.nodeId);
  if (err.budget === "steps" || err.budget === "age") {
    return {
      ...base(),
      state: "failed",
      text: `Stopped by its ${err.budget === "steps" ? "step" : "age"} budget: ${reason.replace(/^(step|age) budget: /, "")}.`,
      todo: "If the run should go further, raise the automation's run budget, then run it again.",
      actions: ["retry"],
    };
  }
  const failed = input.steps.filter((s) => s.status === "failed" && (nodeId === null || s.nodeId === nodeId)).at(-1);
  if (failed) {
    const why = failureWhy(failed.error);
    return { state: "failed", text: `Failed at ${name(failed)} on ${attemptWords(failed)}: ${why.what}.`, todo: `${capital(why.todo)}.`, actions: ["retry"], stepId: failed.id };
  }
  const approval = input.approvals.filter((a) => a.status === "expired" && (nodeId === null || a.nodeId === nodeId)).at(-1);
  if (approval) {
    return { ...base(), state: "failed", text: `Stopped: nobody decided ${quote(approval.title)} by ${clock.when(approval.deadlineAt)}.`, todo: "Run it again to ask again.", actions: ["retry"] };
  }
  return { ...base(), state: "failed", text: `Failed: ${reason}.`, todo: "Check the Details below, then run it again.", actions: ["retry"] };
}

/** Still running: held, needing review, on hold, waiting, or working on its open step. */
function liveStatus(input: StoryInput, clock: StoryClock, email: StoryEmail | null): StoryStatus {
  const name = stepNames(input.graph);
  const { run, steps } = input;
  const goal = run.cancelReason?.startsWith("goal met") ?? false;
  const cancelling = run.cancelRequestedAt
    ? goal
      ? ` Its goal was met ${clock.when(run.cancelRequestedAt)}: it ends as converted as soon as the call in flight settles.`
      : ` Cancel requested ${clock.when(run.cancelRequestedAt)}: it stops as soon as the call in flight settles.`
    : "";
  const review = steps.find((s) => s.status === "parked" && s.error?.code === "needs_review");
  const parked = review ?? steps.find((s) => s.status === "parked");
  if (run.held && !review) {
    return {
      ...base(),
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
  if (!open) return { ...base(), state: "running", text: `Running: moving to its next step.${cancelling}` };
  const waitingSentence = stepSentences(input, [open], clock, email)[0]?.text ?? `Running ${open.nodeId}`;
  if (open.status === "waiting") {
    return {
      ...base(),
      state: "waiting",
      text: `${waitingSentence}.${cancelling}`,
      todo: open.kind === "approval" ? "Decide in the approvals inbox (or in Slack where it was posted)." : null,
      actions: open.kind === "approval" ? ["decide"] : [],
      stepId: open.id,
    };
  }
  // A send held by a sending rule (quiet hours, the frequency cap) is waiting, not working: its sentence says until when.
  const held = open.status === "ready" && !open.error && latestHold(input.timeline.filter((e) => e.stepId === open.id && e.type === "step.deferred"), clock);
  return { ...base(), state: held ? "waiting" : "running", text: `${waitingSentence}.${cancelling}`, stepId: open.id };
}
