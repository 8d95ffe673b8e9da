import type { StepView } from "../../../../server/runs";
import { resolveAction, reviewStoppedAction } from "../actions";
import type { RunRef } from "./words";

/** A step parked as needs review: the resolve form (mark done, send again marked as the same request, abandon). */
export function NeedsReview({ step, canAct, hidden }: { step: StepView; canAct: boolean; hidden: RunRef }) {
  return (
    <div className="review" data-review={step.id}>
      <strong>Needs review: {step.nodeId}</strong>
      {canAct ? (
        <form action={resolveAction} className="stack">
          <input type="hidden" name="runId" value={hidden.runId} />
          <input type="hidden" name="orgId" value={hidden.orgId} />
          <input type="hidden" name="stepId" value={step.id} />
          <label>
            What you found at the provider (required)
            <textarea name="note" required maxLength={2000} rows={2} />
          </label>
          <div className="decide">
            <button type="submit" name="action" value="done" className="primary">
              It happened: mark done
            </button>
            <button type="submit" name="action" value="retry">
              It did not: send again (marked as the same request)
            </button>
            <button type="submit" name="action" value="abandon" className="danger">
              Abandon the step
            </button>
          </div>
        </form>
      ) : (
        <p className="muted small">An owner or editor can resolve it.</p>
      )}
    </div>
  );
}

/** A call whose outcome was unknown when the run was cancelled: say what was found; nothing is sent again. */
export function StoppedReview({ call, mayAct, hidden }: { call: { key: string; nodeId: string | null }; mayAct: boolean; hidden: RunRef }) {
  return (
    <div className="review" data-review-stopped={call.key}>
      <strong>Needs review: {call.nodeId ?? call.key}</strong>
      <p className="muted small">
        The run was cancelled while this call's outcome was unknown. Nothing is sent again: check at the provider and say what you
        found.
      </p>
      {mayAct ? (
        <form action={reviewStoppedAction} className="stack">
          <input type="hidden" name="runId" value={hidden.runId} />
          <input type="hidden" name="orgId" value={hidden.orgId} />
          <input type="hidden" name="key" value={call.key} />
          <label>
            What you found at the provider (required)
            <textarea name="note" required maxLength={2000} rows={2} />
          </label>
          <div className="decide">
            <button type="submit" name="found" value="happened" className="primary">
              It happened
            </button>
            <button type="submit" name="found" value="not_happened">
              It did not happen
            </button>
          </div>
        </form>
      ) : (
        <p className="muted small">An owner or editor can resolve it.</p>
      )}
    </div>
  );
}
