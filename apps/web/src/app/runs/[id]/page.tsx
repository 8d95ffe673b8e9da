import { describeOutcome } from "@holdfast/core";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { db } from "../../../server/db";
import { runDetail } from "../../../server/runs";
import { AutoRefresh } from "../../auto-refresh";
import { Json, StatusBadge, Time } from "../../ui";

export const dynamic = "force-dynamic";

interface Props {
  params: Promise<{ id: string }>;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Run ${(await params).id} - Holdfast` };
}

export default async function RunPage({ params }: Props) {
  const { id } = await params;
  const detail = id.length <= 100 ? await runDetail(db, id) : null;
  if (!detail) notFound();
  const { run, steps, timeline, approvals } = detail;
  const live = run.status === "running";

  return (
    <>
      {live && <AutoRefresh ms={2_000} />}
      <p>
        <Link href="/">&larr; Recent runs</Link>
      </p>
      <h1>
        Run <span className="mono">{run.id}</span> <StatusBadge status={run.status} />
      </h1>
      {live && <p className="muted small">Running: this page refreshes every 2 seconds.</p>}
      <dl className="facts">
        <dt>Automation</dt>
        <dd>
          {detail.orgSlug} / {detail.automationSlug}
        </dd>
        <dt>Version</dt>
        <dd>{detail.version ?? "-"}</dd>
        <dt>Start key</dt>
        <dd className="mono small wrap">{run.startKey}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={run.createdAt} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time at={run.finishedAt} />
        </dd>
        {run.cancelRequestedAt && (
          <>
            <dt>Cancel requested</dt>
            <dd>
              <Time at={run.cancelRequestedAt} /> {run.cancelReason}
            </dd>
          </>
        )}
      </dl>

      <h2>Input</h2>
      <Json value={run.input} />
      {run.error !== null && (
        <>
          <h2>Error</h2>
          <div className="error">
            <Json value={run.error} />
          </div>
        </>
      )}

      <h2>Steps</h2>
      {steps.length === 0 ? (
        <p className="muted">No steps yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Node</th>
              <th>Iteration</th>
              <th>Status</th>
              <th>Attempt</th>
              <th>Lane</th>
              <th>Owner</th>
              <th>Lease until</th>
              <th>Output / error</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => (
              <tr key={s.id}>
                <td className="mono">{s.nodeId}</td>
                <td>{s.iteration}</td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>
                  {s.attempt}/{s.maxAttempts}
                </td>
                <td>{s.lane}</td>
                <td className="mono small">{s.owner ?? "-"}</td>
                <td>
                  <Time at={s.leaseUntil} />
                </td>
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

      {approvals.length > 0 && (
        <>
          <h2>Approvals</h2>
          <table>
            <thead>
              <tr>
                <th>Step</th>
                <th>Stage</th>
                <th>Status</th>
                <th>Outcome</th>
                <th>Deadline</th>
                <th>Content (digest)</th>
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
                    <Time at={a.deadlineAt} />
                  </td>
                  <td>
                    <pre className="content small">{a.content}</pre>
                    <code className="small muted">{a.digest.slice(0, 12)}</code>
                  </td>
                  <td className="small">
                    {a.slack ? `${a.slack.channel}: ${a.notifyState}${a.notifyError ? ` (${a.notifyError})` : ""}` : "-"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      <h2>Timeline</h2>
      <table>
        <thead>
          <tr>
            <th>Time</th>
            <th>Type</th>
            <th>Node</th>
            <th>Attempt</th>
            <th>Lane</th>
            <th>Worker</th>
            <th>Data</th>
          </tr>
        </thead>
        <tbody>
          {timeline.map((e) => (
            <tr key={String(e.id)}>
              <td>
                <Time at={e.at} />
              </td>
              <td className="mono">{e.type}</td>
              <td className="mono">{e.nodeId ?? "-"}</td>
              <td>{e.attempt ?? "-"}</td>
              <td>{e.lane ?? "-"}</td>
              <td className="mono small">{e.worker ?? "-"}</td>
              <td>
                <Json value={e.data} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
