"use client";

import { actionWords, type Lifecycle } from "./use-lifecycle";

type HistoryEntry = NonNullable<Lifecycle["state"]["data"]>["history"][number];

/** The history of the automation's changes (and of waits fired now), newest first, folded away. */
export function LifecycleHistory({ history }: { history: HistoryEntry[] }) {
  return (
    <details className="small">
      <summary>History ({history.length})</summary>
      {history.length === 0 ? (
        <p className="muted">No changes yet: active since it was created.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {history.map((h) => (
              <tr key={h.id} data-history={h.action}>
                <td>{new Date(h.at).toLocaleString()}</td>
                <td>{h.by.replace(/^user:/, "")}</td>
                <td>
                  <HistoryWhat h={h} />
                </td>
                <td>{h.reason ?? <span className="muted">-</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}

/** One change in words: the action, from which status to which (or, for a wait fired now, which run and where). */
function HistoryWhat({ h }: { h: HistoryEntry }) {
  return (
    <>
      {actionWords[h.action]}
      {h.action === "fire_wait" ? (
        // A run's wait, not a change of the automation: which run and where.
        <>
          {" "}
          at &quot;{String((h.detail as { nodeId?: string } | null)?.nodeId ?? "?")}&quot; in{" "}
          <a href={`/runs/${String((h.detail as { runId?: string } | null)?.runId ?? "")}`}>{String((h.detail as { runId?: string } | null)?.runId ?? "a run")}</a>
        </>
      ) : (
        ` (${h.fromStatus} → ${h.toStatus})`
      )}
      {h.action === "pause" ? `: ${h.words}` : ""}
      {h.action === "stop_runs" && h.detail ? ` (${String((h.detail as { cancelled?: number }).cancelled ?? 0)} cancelled)` : ""}
    </>
  );
}
