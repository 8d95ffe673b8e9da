import { describeOutcome, type TimelineEntry } from "@holdfast/core";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { db } from "../../../server/db";
import { mayActOnRuns, runDetail, type StepView } from "../../../server/runs";
import { requireUser } from "../../../server/session";
import { AutoRefresh } from "../../auto-refresh";
import { InlineJson, Json, StatusBadge, Time } from "../../ui";
import { GraphView } from "../graph-view";
import { cancelAction, resolveAction, resumeAction } from "./actions";

export const dynamic = "force-dynamic";

interface Props {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ done?: string; error?: string }>;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Run ${(await params).id} - Holdfast` };
}

/** Attempts of each step, from its timeline: who claimed it when, and how each attempt ended. */
function attemptsOf(step: StepView, timeline: TimelineEntry[]): TimelineEntry[] {
  return timeline.filter((e) => e.stepId === step.id && (e.type.startsWith("step.") || e.type.startsWith("effect.") || e.type.startsWith("review.")));
}

export default async function RunPage({ params, searchParams }: Props) {
  const { id } = await params;
  const { done, error } = await searchParams;
  const user = await requireUser(`/runs/${id}`);
  const detail = await runDetail(
    db,
    user.memberships.map((m) => m.orgId),
    id,
  );
  if (!detail) notFound();
  const { run, steps, timeline, approvals, effects, timers, signals, graph } = detail;
  const live = run.status === "running";
  const role = user.memberships.find((m) => m.orgId === run.orgId)?.role;
  const canAct = mayActOnRuns(role) && live;
  const latest = new Map<string, string>();
  for (const s of steps) latest.set(s.nodeId, s.status);
  const review = steps.filter((s) => s.status === "parked" && s.error?.code === "needs_review");
  const parked = steps.filter((s) => s.status === "parked" && s.error?.code !== "needs_review");
  const hidden = { runId: run.id, orgId: run.orgId };

  return (
    <>
      {live && <AutoRefresh ms={2_000} />}
      <p>
        <Link href="/">&larr; Runs</Link>
      </p>
      <h1>
        Run <span className="mono">{run.id}</span> <StatusBadge status={run.displayStatus} />
        {run.test ? (
          <>
            {" "}
            <span className="badge badge-ready">Test run</span>
          </>
        ) : null}
      </h1>
      {run.test ? (
        <p className="muted small" data-test-run="1">
          Test run: started from the editor's trigger panel with the automation's sample payload (its timeline says by whom).
        </p>
      ) : null}
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
      {live && <p className="muted small">Live: this page refreshes every 2 seconds while the run is running.</p>}
      <div className="run-head">
        <dl className="facts">
          <dt>Automation</dt>
          <dd>
            {detail.automationName} <span className="muted">({detail.orgSlug} / {detail.automationSlug}, version {detail.version})</span>
          </dd>
          <dt>Contact</dt>
          <dd>{detail.contact ?? <span className="muted">-</span>}</dd>
          <dt>Start key</dt>
          <dd className="mono small wrap">{run.startKey}</dd>
          <dt>Started</dt>
          <dd>
            <Time at={run.createdAt} />
          </dd>
          <dt>Finished</dt>
          <dd>
            <Time at={run.finishedAt} />
          </dd>
          <dt>Budgets</dt>
          <dd>
            {steps.length} of {run.maxSteps ?? "∞"} steps · expires <Time at={run.expiresAt} />
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
        {canAct && (
          <div className="actions">
            {parked.length > 0 && (
              <form action={resumeAction}>
                <input type="hidden" name="runId" value={hidden.runId} />
                <input type="hidden" name="orgId" value={hidden.orgId} />
                <button type="submit" className="primary">
                  Resume
                </button>
                <span className="small muted"> {parked.map((s) => `${s.nodeId}: ${s.error?.reason ?? s.error?.message ?? "parked"}`).join("; ")}</span>
              </form>
            )}
            {!run.cancelRequestedAt && (
              <form action={cancelAction} className="cancel">
                <input type="hidden" name="runId" value={hidden.runId} />
                <input type="hidden" name="orgId" value={hidden.orgId} />
                <input name="reason" placeholder="Reason (optional)" maxLength={500} />
                <button type="submit" className="danger">
                  Cancel run
                </button>
              </form>
            )}
          </div>
        )}
      </div>

      {review.map((s) => (
        <section key={s.id} className="review card" data-review={s.id}>
          <h2>Needs review: {s.nodeId}</h2>
          <p>
            {s.error?.message} Key <code>{s.error?.key}</code>. Check the provider, then say what you found.
          </p>
          {canAct ? (
            <form action={resolveAction} className="stack">
              <input type="hidden" name="runId" value={hidden.runId} />
              <input type="hidden" name="orgId" value={hidden.orgId} />
              <input type="hidden" name="stepId" value={s.id} />
              <label>
                Note (required)
                <textarea name="note" required maxLength={2000} rows={2} />
              </label>
              <div className="decide">
                <button type="submit" name="action" value="done" className="primary">
                  It happened: mark done
                </button>
                <button type="submit" name="action" value="retry">
                  It did not: send again (same key)
                </button>
                <button type="submit" name="action" value="abandon" className="danger">
                  Abandon the step
                </button>
              </div>
            </form>
          ) : (
            <p className="muted small">An owner or editor can resolve it.</p>
          )}
        </section>
      ))}

      {graph && (
        <>
          <h2>Where the run is</h2>
          <div className="graph-wrap">
            <GraphView graph={graph} latest={latest} />
          </div>
        </>
      )}

      <h2>Input</h2>
      <Json value={run.input} />
      {run.error !== null && (
        <>
          <h2>Why it stopped</h2>
          <div className="error">
            <Json value={run.error} />
          </div>
        </>
      )}

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
                  {s.attempt}/{s.maxAttempts}
                  <ul className="attempts">
                    {attemptsOf(s, timeline).map((e) => (
                      <li key={String(e.id)}>
                        <Time at={e.at} /> {e.type.replace(/^step\./, "")}
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

      {effects.length > 0 && (
        <>
          <h2>Effects</h2>
          <table className="effects">
            <thead>
              <tr>
                <th>Key</th>
                <th>Kind</th>
                <th>State</th>
                <th>Attempts</th>
                <th>Provider's answer</th>
              </tr>
            </thead>
            <tbody>
              {effects.map((e) => (
                <tr key={e.key}>
                  <td className="mono small wrap">{e.key}</td>
                  <td>{e.kind}</td>
                  <td>
                    <StatusBadge status={e.status} />
                    {e.providerIdempotent === false ? <div className="small muted">provider cannot deduplicate</div> : null}
                  </td>
                  <td>{e.attempts}</td>
                  <td>{e.error ? <Json value={e.error} /> : <Json value={e.result} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      {timers.length > 0 && (
        <>
          <h2>Timers</h2>
          <table className="timers">
            <thead>
              <tr>
                <th>Intent</th>
                <th>Zone</th>
                <th>Due</th>
                <th>Fired</th>
                <th>By / lateness</th>
              </tr>
            </thead>
            <tbody>
              {timers.map((t) => (
                <tr key={t.id}>
                  <td>
                    <Json value={t.rule} />
                  </td>
                  <td>{t.zone}</td>
                  <td>
                    <Time at={t.dueAt} />
                  </td>
                  <td>
                    <Time at={t.firedAt} />
                  </td>
                  <td className="small">
                    {t.firedBy ?? "-"}
                    {t.latenessMs !== null ? ` · ${Math.round(t.latenessMs)} ms late` : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      {signals.length > 0 && (
        <>
          <h2>Signals</h2>
          <table>
            <thead>
              <tr>
                <th>Kind</th>
                <th>Identity</th>
                <th>Received</th>
                <th>Consumed</th>
                <th>Payload</th>
              </tr>
            </thead>
            <tbody>
              {signals.map((g) => (
                <tr key={g.id}>
                  <td>{g.kind}</td>
                  <td className="mono small wrap">{g.identity}</td>
                  <td>
                    <Time at={g.receivedAt} />
                  </td>
                  <td>
                    {g.unmatchedReason ? <span className="field-error">Ignored: {g.unmatchedReason}</span> : <Time at={g.consumedAt} />}
                  </td>
                  <td>
                    <Json value={g.payload} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      {approvals.length > 0 && (
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
                  <td className="small">{a.slack ? `${a.slack.channel}: ${a.notifyState}${a.notifyError ? ` (${a.notifyError})` : ""}` : "-"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      <h2>Timeline</h2>
      <table className="timeline">
        <thead>
          <tr>
            <th>Time (UTC)</th>
            <th>What</th>
            <th>Step</th>
            <th>Attempt</th>
            <th>Lane</th>
            <th>Who</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {timeline.map((e) => (
            <tr key={String(e.id)} data-type={e.type}>
              <td>
                <Time at={e.at} />
              </td>
              <td className="mono">{e.type}</td>
              <td className="mono">{e.nodeId ?? "-"}</td>
              <td>{e.attempt ?? "-"}</td>
              <td>{e.lane ?? "-"}</td>
              <td className="mono small">{e.worker ?? "-"}</td>
              <td className="small">
                <InlineJson value={e.data} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
