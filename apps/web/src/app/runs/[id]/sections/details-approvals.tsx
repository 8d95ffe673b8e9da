import { describeOutcome } from "@holdfast/core/people";
import type { RunDetail } from "../../../../server/runs";
import { StatusBadge } from "../../../ui";
import { DraftEdits } from "./draft-edits";
import type { When } from "./time";

/** Details: the run's approvals with their outcome, deadline, content and Slack notice. */
export function ApprovalsTable({ approvals, edits, when }: { approvals: RunDetail["approvals"]; edits: RunDetail["approvalEdits"]; when: When }) {
  if (approvals.length === 0) return null;
  return (
    <>
      <h2>Approvals</h2>
      <table className="approvals">
        <thead>
          <tr>
            <th>Step</th>
            <th>Stage</th>
            <th>Status</th>
            <th>Outcome</th>
            <th>Deadline</th>
            <th>Content</th>
            <th>Slack</th>
          </tr>
        </thead>
        <tbody>
          {approvals.map((a) => (
            <tr key={a.id}>
              <td className="mono">{a.nodeId}</td>
              <td>{a.stage}</td>
              <td>
                <StatusBadge status={a.status} />
              </td>
              <td className="small">{describeOutcome(a)}</td>
              <td>
                {when(a.deadlineAt)}
              </td>
              <td>
                <pre className="content small">{a.content}</pre>
                <DraftEdits edits={edits.filter((e) => e.approvalId === a.id)} when={when} />
                <details className="small muted">
                  <summary>Details</summary>
                  content digest <code>{a.digest.slice(0, 12)}</code>: a decision applies to exactly this content
                </details>
              </td>
              <td className="small">{a.slack ? `${a.slack.channel}: ${a.notifyState}${a.notifyError ? ` (${a.notifyError})` : ""}` : "-"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
