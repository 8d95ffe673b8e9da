import type { Story } from "@holdfast/core/story";
import type { RunDetail } from "../../../../server/runs";
import { cancelAction } from "../actions";
import { FireWaitControls } from "../fire-wait";
import { RetryActions } from "../run-actions";
import { ActionFor } from "./action-for";
import { NeedsReview, StoppedReview } from "./review";

interface Props {
  detail: RunDetail;
  story: Story;
  /** The viewer's zone as the browser told it (null until it has). */
  zone: string | null | undefined;
  role: string | undefined;
  mayAct: boolean;
  canAct: boolean;
}

/** The summary: the status sentence, what to do, the buttons that fix the run, the review forms and the times' zone. */
export function Summary({ detail, story, zone, role, mayAct, canAct }: Props) {
  const { run, steps, timers, graph, uncertain } = detail;
  const live = run.status === "running";
  const review = steps.filter((s) => s.status === "parked" && s.error?.code === "needs_review");
  const hidden = { runId: run.id, orgId: run.orgId };
  const status = story.status;
  return (
    <section className={`summary card summary-${status.state}`} aria-label="summary" data-state={status.state}>
      <p className="summary-status" data-status-sentence="1">
        {status.text}
      </p>
      {status.todo ? <p className="summary-todo">{status.todo}</p> : null}
      <div className="summary-actions">
        {status.actions.map((a) => (
          <ActionFor key={a} action={a} canAct={canAct} mayAct={mayAct} hidden={hidden} />
        ))}
        {/*
         * RETRY ACTIONS (issue 16, item 2): <RetryActions> from ../run-actions.tsx renders here for failed runs
         * ("Retry from the failed step", "Run again with the same input"). Keep this slot; it is inside the summary
         * so the button that fixes a failed run is above the fold.
         */}
        <RetryActions run={{ id: run.id, orgId: run.orgId, status: run.status }} canAct={mayAct} />
        {!run.test && <FireWaitControls run={{ id: run.id, orgId: run.orgId, status: run.status }} steps={steps} timers={timers} graph={graph} role={role} />}
        {canAct && !run.cancelRequestedAt && (
          <form action={cancelAction} className="cancel">
            <input type="hidden" name="runId" value={hidden.runId} />
            <input type="hidden" name="orgId" value={hidden.orgId} />
            <input name="reason" placeholder="Reason (optional)" maxLength={500} aria-label="Reason for cancelling" />
            <button type="submit" className="danger">
              Cancel run
            </button>
          </form>
        )}
      </div>
      {review.map((s) => (
        <NeedsReview key={s.id} step={s} canAct={canAct} hidden={hidden} />
      ))}
      {run.status === "cancelled" || run.status === "converted" ? uncertain.map((u) => <StoppedReview key={u.key} call={u} mayAct={mayAct} hidden={hidden} />) : null}
      <p className="muted small zone-note">
        Times are in {zone ? "your time zone" : "UTC until your browser tells us its zone"} ({story.clock.viewer})
        {story.clock.contact && story.clock.contact !== story.clock.viewer ? `, with the contact's (${story.clock.contact}) beside` : ""}.
        {live ? " This page refreshes every 2 seconds while the run is running." : ""}
      </p>
    </section>
  );
}
