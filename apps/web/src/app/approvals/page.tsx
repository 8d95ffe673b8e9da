import { describeOutcome } from "@holdfast/core/people";
import Link from "next/link";
import { inboxFor } from "../../server/approvals";
import { db } from "../../server/db";
import { requireUser } from "../../server/session";
import { orUnavailable, unavailable } from "../../server/unavailable";
import { viewerClock } from "../../server/viewer-zone";
import { At, StatusBadge } from "../ui";
import { Unavailable } from "../unavailable";
import { ViewerZone } from "../viewer-zone";
import { decideAction } from "./actions";
import { EditDraft } from "./edit-draft";

export const dynamic = "force-dynamic";

function approversText(a: { approvers: { users: string[]; role?: string } }): string {
  const parts = [...a.approvers.users];
  if (a.approvers.role) parts.push(`anyone with role ${a.approvers.role}`);
  return parts.join(", ");
}

export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<{ done?: string; error?: string }> }) {
  const { done, error } = await searchParams;
  const inbox = await orUnavailable(async () => inboxFor(db, await requireUser("/approvals")));
  if (inbox === unavailable) return <Unavailable />;
  const { pending, decided } = inbox;
  // Times in the viewer's zone (their browser's, told by a cookie), UTC until it is known.
  const { zone, clock } = await viewerClock();
  return (
    <>
      <ViewerZone current={zone} />
      <h1>Approvals</h1>
      {done ? (
        <p className="flash flash-ok" role="status">
          {done}
        </p>
      ) : null}
      {error ? (
        <p className="flash flash-error" role="alert">
          {error}
        </p>
      ) : null}
      <h2>Waiting for you ({pending.length})</h2>
      {pending.length === 0 ? (
        <p className="empty muted">Nothing is waiting for your decision. Approvals that runs ask you for appear here, and in Slack when the step posts there.</p>
      ) : (
        <ul className="cards">
          {pending.map((a) => (
            <PendingApproval key={a.id} a={a} clock={clock} />
          ))}
        </ul>
      )}
      <h2>Decided</h2>
      {decided.length === 0 ? <p className="empty muted">No decisions yet.</p> : <DecidedTable decided={decided} clock={clock} />}
    </>
  );
}

type Inbox = Awaited<ReturnType<typeof inboxFor>>;
type Clock = Awaited<ReturnType<typeof viewerClock>>["clock"];

/** An approval waiting for the viewer: its content, deadline and approvers, and Approve / Reject. */
function PendingApproval({ a, clock }: { a: Inbox["pending"][number]; clock: Clock }) {
  return (
    <li className="card" data-approval={a.id}>
      <div className="card-head">
        <strong className="card-title">{a.title}</strong>
        <span className="muted small">
          {a.orgName} · <Link href={`/runs/${a.runId}`}>run {a.runId}</Link> · step {a.nodeId}
          {a.stage > 1 ? " · escalated" : ""}
        </span>
      </div>
      {a.lastEdit ? (
        <p className="small" data-last-edit="1">
          <strong>{a.lastEdit.editedByName} edited this draft</strong> {a.lastEdit.via === "slack" ? "in Slack on" : "in the inbox on"}{" "}
          <At at={a.lastEdit.createdAt} clock={clock} />: below is the edited version.
        </p>
      ) : null}
      <pre className="content">{a.content}</pre>
      <p className="small muted">
        Decide by <At at={a.deadlineAt} clock={clock} /> · approvers: {approversText(a)}
      </p>
      <details className="small muted">
        <summary>Details</summary>
        Your decision applies to exactly this content (content digest <code>{a.digest.slice(0, 12)}</code>): if it changes, you are asked again.
      </details>
      <EditDraft a={a} />
      <form action={decideAction} className="decide">
        <input type="hidden" name="approvalId" value={a.id} />
        <input type="hidden" name="orgId" value={a.orgId} />
        <input type="hidden" name="digest" value={a.digest} />
        <button type="submit" name="decision" value="approved" className="primary">
          Approve
        </button>
        <button type="submit" name="decision" value="rejected" className="danger">
          Reject
        </button>
      </form>
    </li>
  );
}

function DecidedTable({ decided, clock }: { decided: Inbox["decided"]; clock: Clock }) {
  return (
    <table className="decided">
      <thead>
        <tr>
          <th>Approval</th>
          <th>Outcome</th>
          <th>By</th>
          <th>When</th>
          <th>Run</th>
        </tr>
      </thead>
      <tbody>
        {decided.map((a) => (
          <tr key={a.id} data-approval={a.id}>
            <td>{a.title}</td>
            <td>
              <StatusBadge status={a.status} />
              {a.decidedVia === "deadline" || a.decidedVia === "run" ? <span className="small muted"> {describeOutcome(a)}</span> : null}
            </td>
            <td>{a.decidedByName ?? "-"}{a.decidedVia ? <span className="muted small"> via {a.decidedVia}</span> : null}</td>
            <td><At at={a.decidedAt} clock={clock} /></td>
            <td>
              <Link href={`/runs/${a.runId}`} className="mono small">
                {a.runId}
              </Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
