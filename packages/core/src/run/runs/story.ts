import { type Condition, conditionSentence } from "../../versions/kinds/branch";
import { splitConfig, splitWeights } from "../../versions/kinds/split";
import { pathTaken } from "./path-taken";
import { sentEmail } from "./sent-email";
import { statusOf } from "./story-status";
import { stepSentences } from "./story-steps";
import type { Story, StoryInput, StoryTone } from "./story-types";
import { storyClock } from "./story-clock";
import { actorWords, quote, stepNames, usd } from "./story-words";
import { num, rec, str } from "./values";
import { errorPhrase, parkedWhy, type StepErrorLike } from "./why";

/**
 * A run's story for people: one sentence per step taken ("Waited until Mon 1 Dec 09:00 Europe/Berlin (your time
 * 08:00 UTC), fired 0.1 s late"), the status sentence with what to do, the path taken through the graph, and the
 * email it sent. Pure: it reads the rows the run page already loads (run, steps, timeline, timers, approvals,
 * signals, effects, the version's graph) and formats instants in the viewer's zone with the contact's beside. No
 * clock: every time comes from a row. Told in parts: story-steps.ts (a sentence per step), story-status.ts (the
 * run's last word), story-clock.ts and story-words.ts (how instants and small things read), story-types.ts (the shape).
 */

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
    } else if (e.type === "split.chosen" && e.nodeId) {
      const split = splitConfig.safeParse(config(e.nodeId));
      const weights = split.success ? ` (weights ${splitWeights(split.data)})` : "";
      say(e.nodeId, e.at, `Took path ${str(e.data?.path) ?? "?"} of the A/B split at "${e.nodeId}"${weights}`, "done");
    } else if (e.type === "step.parked" && e.stepId) {
      // An earlier hold of a step that went on (its own sentence tells where it is now).
      const s = input.steps.find((x) => x.id === e.stepId);
      const latestHold = input.timeline.filter((x) => x.type === "step.parked" && x.stepId === e.stepId).at(-1);
      if (s && !(s.status === "parked" && latestHold === e)) say(s.nodeId, e.at, `${stepName(s)} was on hold: ${parkedWhy(e.data as StepErrorLike, usd, clock.when).what}`, "warning");
    } else if (e.type === "approval.edited") {
      // Before the approval it was made with (the same instant): the edit, then the decision on it.
      sentences.unshift({ stepId: null, nodeId: e.nodeId ?? "", at: e.at, text: editSentence(e, clock.when(e.at)), tone: "working" });
    } else if (e.type === "approval.refused" && e.data?.mine === true) {
      // A repeated click of the person's own decision: harmless, said as such.
      const via = e.data?.via === "slack" ? "in Slack" : "in the inbox";
      say(e.nodeId ?? "", e.at, `${str(e.data?.by) ?? actorWords(e.worker)} clicked again ${via} at ${clock.when(e.at)}: already recorded, nothing changed`, "done");
    } else if (e.type === "approval.refused") {
      const via = e.data?.via === "slack" ? "in Slack" : "in the inbox";
      const what = e.data?.action === "edit" ? "edit" : e.data?.decision === "rejected" ? "rejection" : "approval";
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

// The door `@holdfast/core/story` (package.json) is this file: the story's shape, its clock and the words the run
// page uses are told in their own files and offered here too.
export type {
  Story,
  StoryAction,
  StoryApproval,
  StoryClock,
  StoryEmail,
  StoryEvent,
  StoryGraph,
  StoryInput,
  StoryRun,
  StorySentence,
  StorySignal,
  StoryState,
  StoryStatus,
  StoryStep,
  StoryTimer,
  StoryTone,
} from "./story-types";
export { storyClock } from "./story-clock";
export { actorWords, attemptWords, latenessWords, stepNames, usd } from "./story-words";

/** "Sam edited the email before approving, in the inbox at ...: the subject and the text (the HTML version is no longer sent)". */
function editSentence(e: StoryInput["timeline"][number], at: string): string {
  const changed = [e.data?.subjectChanged === true ? "the subject" : null, e.data?.textChanged === true ? "the text" : null].filter((c) => c !== null);
  const via = e.data?.via === "slack" ? "in Slack" : "in the inbox";
  const html = e.data?.htmlDropped === true ? " (the HTML version is no longer sent: an edit is plain text)" : "";
  return `${str(e.data?.by) ?? actorWords(e.worker)} edited the email before approving, ${via} at ${at}: changed ${changed.join(" and ") || "nothing"}${html}`;
}
