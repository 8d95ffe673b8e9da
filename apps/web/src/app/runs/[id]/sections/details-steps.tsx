import type { TimelineEntry } from "@holdfast/core/store";
import { attemptWords } from "@holdfast/core/story";
import type { StepView } from "../../../../server/runs";
import { Json, StatusBadge } from "../../../ui";
import type { When } from "./time";
import { attemptsOf } from "./words";

/** Details: each step with its status, "attempt 2 of 3", each attempt's timeline rows, lane and output or error. */
export function StepsTable({ steps, timeline, when }: { steps: StepView[]; timeline: TimelineEntry[]; when: When }) {
  return (
    <>
      <h2>Steps</h2>
      {steps.length === 0 ? (
        <p className="empty muted">No steps yet.</p>
      ) : (
        <table className="steps">
          <thead>
            <tr>
              <th>Node</th>
              <th>Status</th>
              <th>Attempts</th>
              <th>Lane</th>
              <th>Output / error</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => (
              <tr key={s.id} data-step={s.nodeId}>
                <td className="mono">
                  {s.nodeId}
                  {s.iteration > 1 ? <span className="muted"> #{s.iteration}</span> : null}
                  <div className="small muted">{s.kind}</div>
                </td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td className="small">
                  <span data-attempts="1">{attemptWords(s)}</span>
                  {s.deferrals > 0 ? <span className="muted"> ({s.deferrals} deferred for a free connection slot)</span> : null}
                  <ul className="attempts">
                    {attemptsOf(s, timeline).map((e) => (
                      <li key={`${e.id}:${e.type}`}>
                        {when(e.at)} {e.type.replace(/^step\./, "")}
                        {e.attempt ? ` #${e.attempt}` : ""}
                        {e.worker ? <span className="muted"> {e.worker}</span> : null}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{s.lane}</td>
                <td>
                  {s.error !== null ? (
                    <div className="error">
                      <Json value={s.error} />
                    </div>
                  ) : (
                    <Json value={s.output} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
