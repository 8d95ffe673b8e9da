import { fireableWaitKinds, fireWaitConfirmation, fireWaitRoleWords, mayFireWaits } from "@holdfast/core/run";
import type { StoryGraph } from "@holdfast/core/story";
import { fireWaitAction } from "./actions";

interface WaitingStep {
  id: string;
  nodeId: string;
  kind: string;
  status: string;
}

/**
 * "Fire this wait now" (issue 40): on each step the run waits at (a Wait, a Wait for reply), owners get a control
 * that opens to the sentence saying what happens at once, a reason (required) and the confirming button. The outcome
 * comes back as the page's message. Others are told who can.
 */
export function FireWaitControls(props: {
  run: { id: string; orgId: string; status: string };
  steps: WaitingStep[];
  timers: { stepId: string; firedAt: Date | null }[];
  graph: StoryGraph | null;
  role: string | undefined;
}) {
  const { run, graph } = props;
  if (run.status !== "running" || !graph) return null;
  const waits = props.steps.filter(
    (s) => s.status === "waiting" && fireableWaitKinds.includes(s.kind) && props.timers.some((t) => t.stepId === s.id && t.firedAt === null),
  );
  if (waits.length === 0) return null;
  if (!mayFireWaits(props.role)) {
    return (
      <p className="muted small" data-fire-wait-unavailable="1">
        {fireWaitRoleWords}
      </p>
    );
  }
  return (
    <>
      {waits.map((s) => (
        <details key={s.id} className="fire-wait" data-fire-wait={s.nodeId}>
          <summary>Fire this wait now{waits.length > 1 ? ` (${s.nodeId})` : ""}</summary>
          <form action={fireWaitAction} className="stack">
            <input type="hidden" name="runId" value={run.id} />
            <input type="hidden" name="orgId" value={run.orgId} />
            <input type="hidden" name="stepId" value={s.id} />
            <p data-fire-wait-confirm="1">{fireWaitConfirmation(graph, s.nodeId)}</p>
            <label>
              Why (required; on the run's timeline and the automation's history)
              <textarea name="reason" required maxLength={500} rows={2} />
            </label>
            <button type="submit" className="primary">
              Fire it now
            </button>
          </form>
        </details>
      ))}
    </>
  );
}
