import { describeOutcome, type TimelineEntry } from "@holdfast/core";
import { attemptWords, buildStory, type Story, type StoryAction } from "@holdfast/core/story";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { db } from "../../../server/db";
import { mayActOnRuns, runDetail, type StepView } from "../../../server/runs";
import { requireUser } from "../../../server/session";
import { orUnavailable, unavailable } from "../../../server/unavailable";
import { viewerZone } from "../../../server/viewer-zone";
import { AutoRefresh } from "../../auto-refresh";
import { InlineJson, Json, RunStatusBadge, StatusBadge } from "../../ui";
import { Unavailable } from "../../unavailable";
import { ViewerZone } from "../../viewer-zone";
import { GraphView } from "../graph-view";
import { cancelAction, resolveAction, resumeAction, reviewStoppedAction } from "./actions";
import { FireWaitControls } from "./fire-wait";
import { TestRunPanel } from "./test-run-panel";
import { RetryActions } from "./run-actions";

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

/** A time in the viewer's zone, short (the Details tables); the exact instant is the tooltip. */
function timeIn(zone: string) {
  const format = new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return (at: Date | null | undefined) => {
    if (!at) return <span className="muted">-</span>;
    return (
      <time dateTime={at.toISOString()} title={at.toISOString()}>
        {format.format(at)}
      </time>
    );
  };
}

/** Repeated deliveries of the run's start key: counted on the run (the timeline keeps only the first few). */
function repeatsWords(n: number): string {
  return n === 1
    ? "The trigger delivered this event twice; the repeat started nothing new."
    : `The trigger delivered this event ${(n + 1).toLocaleString("en")} times; the ${n.toLocaleString("en")} repeats started nothing new.`;
}

const toneMark: Record<string, string> = { done: "✓", waiting: "◷", working: "…", warning: "!", failed: "✗", stopped: "■" };

/**
 * The run page for people: the summary first (what state the run is in, why, and the one button that fixes it), the
 * path taken on the graph, the story as sentences, the email it sent; everything operators had (timeline, JSON,
 * attempts, effects, timers, signals, approvals) under Details. The sentences come from core (runs/story.ts), with
 * times in the viewer's zone (a cookie the browser sets, app/viewer-zone.tsx) and the contact's zone beside.
 */
export default async function RunPage({ params, searchParams }: Props) {
  const { id } = await params;
  const { done, error } = await searchParams;
  const loaded = await orUnavailable(async () => {
    const user = await requireUser(`/runs/${id}`);
    return { user, detail: await runDetail(db, user.memberships.map((m) => m.orgId), id) };
  });
  if (loaded === unavailable) return <Unavailable />;
  const { user, detail } = loaded;
  if (!detail) notFound();
  const { run, steps, timeline, approvals, effects, timers, signals, graph, uncertain } = detail;
  const zone = await viewerZone();
  const story = buildStory({
    run,
    steps,
    timeline,
    timers,
    approvals,
    signals,
    graph,
    contact: detail.contact ? { email: detail.contact, timeZone: detail.contactZone, ...(detail.contactId ? { id: detail.contactId } : {}), ...(detail.contactConsent ? { consent: detail.contactConsent } : {}) } : null,
    viewerZone: zone ?? "UTC",
    uncertain,
  });
  const when = timeIn(story.clock.viewer);
  const live = run.status === "running";
  const role = user.memberships.find((m) => m.orgId === run.orgId)?.role;
  const mayAct = mayActOnRuns(role);
  const canAct = mayAct && live;
  const latest = new Map<string, string>();
  for (const s of steps) latest.set(s.nodeId, s.status);
  const review = steps.filter((s) => s.status === "parked" && s.error?.code === "needs_review");
  const hidden = { runId: run.id, orgId: run.orgId };
  const status = story.status;

  return (
    <>
      <ViewerZone current={zone} />
      {live && <AutoRefresh ms={2_000} />}
      <p>
        <Link href="/">&larr; Runs</Link>
      </p>
      <h1>
        Run <span className="mono">{run.id}</span> <RunStatusBadge status={run.displayStatus} />
        {run.test ? (
          <>
            {" "}
            <span className="badge badge-ready">Test run</span>
          </>
        ) : null}
      </h1>
      <p className="run-sub">
        <strong>{detail.automationName}</strong>{" "}
        <span className="muted">
          ({detail.orgSlug} / {detail.automationSlug}, version {detail.version})
        </span>{" "}
        · {detail.contact ?? <span className="muted">no contact</span>}
        {detail.contactZone ? <span className="muted"> ({detail.contactZone})</span> : null} · started {story.clock.when(run.createdAt)}
      </p>
      {run.test ? (
        <>
          <p className="muted small" data-test-run="1">
            Test run: started from the editor's trigger panel with the automation's sample payload (its timeline says by whom).
          </p>
          <TestRunPanel orgSlug={detail.orgSlug} runId={run.id} canAct={role === "owner" || role === "editor"} />
        </>
      ) : null}
      {run.duplicateDeliveries > 0 ? (
        <p className="muted small" data-duplicates={run.duplicateDeliveries}>
          {repeatsWords(run.duplicateDeliveries)}
          {run.lastDuplicateAt ? ` The latest came ${story.clock.when(run.lastDuplicateAt)}.` : ""}
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
           * RETRY ACTIONS (issue 16, item 2): <RetryActions> from ./run-actions.tsx renders here for failed runs
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
          <div key={s.id} className="review" data-review={s.id}>
            <strong>Needs review: {s.nodeId}</strong>
            {canAct ? (
              <form action={resolveAction} className="stack">
                <input type="hidden" name="runId" value={hidden.runId} />
                <input type="hidden" name="orgId" value={hidden.orgId} />
                <input type="hidden" name="stepId" value={s.id} />
                <label>
                  What you found at the provider (required)
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
          </div>
        ))}
        {run.status === "cancelled"
          ? uncertain.map((u) => (
              <div key={u.key} className="review" data-review-stopped={u.key}>
                <strong>Needs review: {u.nodeId ?? u.key}</strong>
                <p className="muted small">
                  The run was cancelled while this call's outcome was unknown. Nothing is sent again: check at the provider and say what you
                  found.
                </p>
                {mayAct ? (
                  <form action={reviewStoppedAction} className="stack">
                    <input type="hidden" name="runId" value={hidden.runId} />
                    <input type="hidden" name="orgId" value={hidden.orgId} />
                    <input type="hidden" name="key" value={u.key} />
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
            ))
          : null}
        <p className="muted small zone-note">
          Times are in {zone ? "your time zone" : "UTC until your browser tells us its zone"} ({story.clock.viewer})
          {story.clock.contact && story.clock.contact !== story.clock.viewer ? `, with the contact's (${story.clock.contact}) beside` : ""}.
          {live ? " This page refreshes every 2 seconds while the run is running." : ""}
        </p>
      </section>

      {graph && (
        <section aria-label="path taken">
          <h2>Path taken</h2>
          <div className="graph-wrap">
            <GraphView graph={graph} latest={latest} path={story.path} />
          </div>
        </section>
      )}

      <section aria-label="what happened">
        <h2>What happened</h2>
        {story.sentences.length === 0 ? (
          <p className="empty muted">Nothing yet: the run has just started.</p>
        ) : (
          <ol className="story">
            {story.sentences.map((s) => (
              <li key={`${s.at.toISOString()} ${s.text}`} className={`tone-${s.tone}`} data-node={s.nodeId || undefined}>
                <span className="tone-mark" aria-hidden="true">
                  {toneMark[s.tone]}
                </span>{" "}
                {s.text}
              </li>
            ))}
          </ol>
        )}
      </section>

      {story.email ? <EmailCard email={story.email} story={story} test={run.test} /> : null}

      <details className="run-details">
        <summary>Details: timeline, steps and attempts, effects, timers, signals, approvals, input</summary>
        <dl className="facts">
          <dt>Start key</dt>
          <dd className="mono small wrap">{run.startKey}</dd>
          <dt>Started</dt>
          <dd>
            {when(run.createdAt)}
          </dd>
          <dt>Finished</dt>
          <dd>
            {when(run.finishedAt)}
          </dd>
          <dt>Budgets</dt>
          <dd>
            {steps.length} of {run.maxSteps ?? "∞"} steps · expires {when(run.expiresAt)}
          </dd>
          {run.cancelRequestedAt && (
            <>
              <dt>Cancel requested</dt>
              <dd>
                {when(run.cancelRequestedAt)} {run.cancelReason}
              </dd>
            </>
          )}
        </dl>

        <h2>Input</h2>
        <Json value={run.input} />
        {run.error !== null && (
          <>
            <h2>Why it stopped (as recorded)</h2>
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
                    <span data-attempts="1">{attemptWords(s)}</span>
                    {s.deferrals > 0 ? <span className="muted"> ({s.deferrals} deferred for a free connection slot)</span> : null}
                    <ul className="attempts">
                      {attemptsOf(s, timeline).map((e) => (
                        <li key={String(e.id)}>
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
                      {when(t.dueAt)}
                    </td>
                    <td>
                      {when(t.firedAt)}
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
                      {when(g.receivedAt)}
                    </td>
                    <td>{g.unmatchedReason ? <span className="field-error">Ignored: {g.unmatchedReason}</span> : when(g.consumedAt)}</td>
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
        )}

        <h2>Timeline</h2>
        <table className="timeline">
          <thead>
            <tr>
              <th>Time ({story.clock.viewer})</th>
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
                  {when(e.at)}
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
      </details>
    </>
  );
}

/** The button (or link) for one of the status sentence's actions; people who may not act are told who can. */
function ActionFor({ action, canAct, mayAct, hidden }: { action: StoryAction; canAct: boolean; mayAct: boolean; hidden: { runId: string; orgId: string } }) {
  switch (action) {
    case "resume":
      return canAct ? (
        <form action={resumeAction}>
          <input type="hidden" name="runId" value={hidden.runId} />
          <input type="hidden" name="orgId" value={hidden.orgId} />
          <button type="submit" className="primary">
            Resume
          </button>
        </form>
      ) : (
        <span className="muted small">An owner or editor can resume it.</span>
      );
    case "raise_budget":
      return mayAct ? (
        <Link className="button-link" href="/settings">
          Raise the model budget (Settings)
        </Link>
      ) : null;
    case "reconnect":
      return mayAct ? (
        <Link className="button-link" href="/settings">
          Fix the connection (Settings)
        </Link>
      ) : null;
    case "decide":
      return (
        <Link className="button-link" href="/approvals">
          Open the approvals inbox
        </Link>
      );
    case "resolve":
      return null; // the review form below the sentence
    case "retry":
      return null; // the RETRY ACTIONS slot
  }
}

function EmailCard({ email, story, test }: { email: NonNullable<Story["email"]>; story: Story; test: boolean }) {
  if (email.source === "erased") {
    return (
      <section aria-label="the email it sent" className="sent-email">
        <h2>{test ? "The email it would send" : "The email it sent"}</h2>
        <p className="muted" data-email-source="erased">
          Sent{email.sentAt ? ` ${story.clock.when(email.sentAt)}` : ""}; its content was erased with the contact.
        </p>
      </section>
    );
  }
  return (
    <section aria-label="the email it sent" className="sent-email">
      <h2>{test ? "The email it would send" : "The email it sent"}</h2>
      <div className="card" data-email-source={email.source}>
        <dl className="facts">
          <dt>To</dt>
          <dd>{email.to}</dd>
          {email.from ? (
            <>
              <dt>From</dt>
              <dd data-email-from="1">{email.from}</dd>
            </>
          ) : null}
          {email.replyTo ? (
            <>
              <dt>Reply-To</dt>
              <dd className="mono small wrap" data-email-reply-to="1">
                {email.replyTo}
              </dd>
            </>
          ) : null}
          <dt>Subject</dt>
          <dd data-email-subject="1">{email.subject}</dd>
          <dt>Sent</dt>
          <dd>{email.sentAt ? story.clock.when(email.sentAt) : "-"}</dd>
          {email.messageId ? (
            <>
              <dt>Message-ID</dt>
              <dd className="mono small wrap" data-email-message-id="1">
                {email.messageId}
              </dd>
            </>
          ) : null}
        </dl>
        <pre className="content email-body">{email.body}</pre>
        {email.html !== null && email.html !== email.body ? (
          <details>
            <summary>HTML version (source)</summary>
            <pre className="content email-html" style={{ maxHeight: "14rem" }}>
              {email.html}
            </pre>
          </details>
        ) : null}
        {test ? (
          <p className="muted small" data-email-simulated="1">
            Test run: this is the message exactly as it would go out (its headers are in the step's output); it was not sent to anyone.
          </p>
        ) : email.source === "recorded" ? (
          <p className="muted small">As sent: recorded by the step when the mail server took it.</p>
        ) : (
          <p className="muted small" data-email-reconstructed="1">
            Reconstructed: this run was sent before emails were recorded, so the subject and body are the step's templates
            rendered again with this run's data (the contact as stored now), and may differ from what was sent.
          </p>
        )}
      </div>
    </section>
  );
}
