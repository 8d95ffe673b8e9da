"use server";

import { HoldfastError } from "@holdfast/core/base";
import { ActionRefusedError, fireWaitRoleWords, fireWaitWords, mayFireWaits, requestCancel, resolveNeedsReview, resumeRun, reviewStoppedRunEffect } from "@holdfast/core/run";
import { fireWaitNow, rerunRun, retryFromFailedStep } from "@holdfast/core/run";
import { redirect, unstable_rethrow } from "next/navigation";
import { z } from "zod";
import { db } from "../../../server/db";
import { formFailureSentence } from "../../../server/failure";
import { graphs } from "../../../server/graphs";
import { mayActOnRuns } from "../../../server/runs";
import { requireUser } from "../../../server/session";
import { viewerClock } from "../../../server/viewer-zone";

/**
 * The run page's actions. Each one: the signed-in user, their role in the run's organisation now (owners and editors
 * may act), zod on the form, the core action (which records who did it on the run's timeline), and the outcome back
 * on the page as a message that never claims an outside action was undone.
 */
const ids = z.object({ runId: z.string().regex(/^run_[0-9a-f]{32}$/), orgId: z.string().regex(/^org_[0-9a-f]{32}$/) });

async function actor(data: FormData) {
  const parsed = ids.safeParse({ runId: data.get("runId"), orgId: data.get("orgId") });
  if (!parsed.success) redirect("/?error=invalid+form");
  const user = await requireUser(`/runs/${parsed.data.runId}`);
  const role = user.memberships.find((m) => m.orgId === parsed.data.orgId)?.role;
  const back = (kind: "done" | "error", message: string): never => redirect(`/runs/${parsed.data.runId}?${kind}=${encodeURIComponent(message)}`);
  if (!role) redirect("/"); // not this user's organisation: as if the run did not exist
  if (!mayActOnRuns(role)) back("error", "Only owners and editors can act on runs.");
  return { ...parsed.data, role, by: `user:${user.email}`, back };
}

async function attempt(back: (kind: "done" | "error", message: string) => never, work: () => Promise<string>): Promise<never> {
  let message: string;
  try {
    message = await work();
  } catch (error) {
    unstable_rethrow(error); // Next's redirect and not-found
    if (error instanceof ActionRefusedError || error instanceof HoldfastError) back("error", `Not done: ${error.message}.`);
    back("error", `Not done: ${formFailureSentence(error, "run page action")}`);
  }
  return back("done", message);
}

export async function cancelAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  const reason = z.string().trim().max(500).catch("").parse(data.get("reason")) || "cancelled from the run page";
  await attempt(back, async () => {
    const out = await requestCancel(db, graphs, orgId, runId, reason, by);
    if (out.state === "already_finished") return `The run had already finished (${out.status}).`;
    if (out.state === "requested")
      return "Cancel requested: an outside call is in flight. The run stops as soon as it settles; what it did is recorded, not undone.";
    return "Cancelled. Waits and approvals are closed; anything already sent or written stays as it is.";
  });
}

export async function resumeAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  await attempt(back, async () => {
    const { resumed } = await resumeRun(db, { orgId, runId, by });
    return `Resumed ${resumed} parked step${resumed === 1 ? "" : "s"}. If the cause is still there it parks again, with the reason.`;
  });
}

const review = z.object({
  stepId: z.string().regex(/^stp_[0-9a-f]{32}$/),
  action: z.enum(["done", "retry", "abandon"]),
  note: z.string().max(2_000),
});

export async function resolveAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  const parsed = review.safeParse({ stepId: data.get("stepId"), action: data.get("action"), note: data.get("note") ?? "" });
  if (!parsed.success) back("error", "Not done: the form was not valid.");
  const { stepId, action, note } = parsed.data as z.infer<typeof review>;
  await attempt(back, async () => {
    const out = await resolveNeedsReview(db, graphs, { orgId, runId, stepId, action, note, by });
    return action === "done"
      ? `Marked as done with your note; the run goes on (${out.status}).`
      : action === "retry"
        ? "Sent again, marked as the same request as before: a service that recognises repeats does not act twice."
        : `Step abandoned; the run is ${out.status}.`;
  });
}

/** Retry from the failed step: the same run, the failed step's new attempt with the same effect key. */
export async function retryAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  await attempt(back, async () => {
    const out = await retryFromFailedStep(db, graphs, { orgId, runId, by });
    if (out.state === "already_running") return "The run is already running again (retried earlier).";
    return `Retrying from step ${out.nodeId}: sent again, marked as the same request as before, so a service that recognises repeats does not act twice.`;
  });
}

/**
 * Run again with the same input: a new run of the newest published version, linked to this one. The form carries
 * a key made when the page rendered, so a double submit finds the run the first one started.
 */
export async function rerunAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  const requestKey = z.string().regex(/^[0-9a-f-]{36}$/).safeParse(data.get("requestKey"));
  if (!requestKey.success) back("error", "Not done: the form was not valid.");
  let out: { runId: string; duplicate: boolean; version: number };
  try {
    out = await rerunRun(db, { orgId, runId, by, requestKey: requestKey.data as string });
  } catch (error) {
    unstable_rethrow(error);
    if (error instanceof HoldfastError) back("error", `Not done: ${error.message}.`);
    return back("error", `Not done: ${formFailureSentence(error, "run page action")}`);
  }
  const said = out.duplicate ? "This run was already started again" : `Started again with the same input on version ${out.version}`;
  redirect(`/runs/${out.runId}?done=${encodeURIComponent(`${said}; it repeats ${runId}.`)}`);
}

const stoppedReview = z.object({
  key: z.string().min(1).max(300),
  found: z.enum(["happened", "not_happened"]),
  note: z.string().max(2_000),
});

/** A cancelled run's call whose outcome was unknown: what the person found at the provider (nothing is sent again). */
export async function reviewStoppedAction(data: FormData): Promise<void> {
  const { runId, orgId, by, back } = await actor(data);
  const parsed = stoppedReview.safeParse({ key: data.get("key"), found: data.get("found"), note: data.get("note") ?? "" });
  if (!parsed.success) back("error", "Not done: the form was not valid.");
  const { key, found, note } = parsed.data as z.infer<typeof stoppedReview>;
  await attempt(back, async () => {
    await reviewStoppedRunEffect(db, { orgId, runId, key, happened: found === "happened", note, by });
    return found === "happened" ? "Recorded: it happened, with your note." : "Recorded: it did not happen, with your note. Nothing was sent again.";
  });
}

const fireWait = z.object({ stepId: z.string().regex(/^stp_[0-9a-f]{32}$/), reason: z.string().trim().min(1).max(500) });

/** "Fire this wait now": owners only (core's mayFireWaits); the wait ends through the sweeper's firing, once. */
export async function fireWaitAction(data: FormData): Promise<void> {
  const { runId, orgId, role, by, back } = await actor(data);
  if (!mayFireWaits(role)) back("error", `Not done: ${fireWaitRoleWords}`);
  const parsed = fireWait.safeParse({ stepId: data.get("stepId"), reason: data.get("reason") });
  if (!parsed.success) back("error", "Not done: say why the wait is fired early (a reason of up to 500 characters).");
  const { stepId, reason } = parsed.data as z.infer<typeof fireWait>;
  const { clock } = await viewerClock();
  await attempt(back, async () => fireWaitWords(await fireWaitNow(db, graphs, { orgId, runId, stepId, by, reason }), (d) => clock.when(d)));
}
