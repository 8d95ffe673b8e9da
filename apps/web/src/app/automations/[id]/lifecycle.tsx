"use client";

import { LifecycleHistory } from "./lifecycle/lifecycle-history";
import { ArchivePanel, LifecycleButtons, PauseForm, StopRunsForm } from "./lifecycle/lifecycle-panels";
import { useLifecycle } from "./lifecycle/use-lifecycle";

type Status = "active" | "paused" | "archived";
/** What the badge shows: an automation never published is a Draft, whatever its status. */
type Shown = Status | "draft";

const badgeClass: Record<Shown, string> = { draft: "badge-ready", active: "badge-done", paused: "badge-waiting", archived: "badge-cancelled" };
const label: Record<Shown, string> = { draft: "Draft", active: "Active", paused: "Paused", archived: "Archived" };

/** A never-published automation, active or paused, is shown as a Draft (an archived one stays Archived). */
export function shownStatus(status: Status, published: boolean | undefined): Shown {
  return published === false && status !== "archived" ? "draft" : status;
}

/** Said next to a Draft badge: what a delivery gets and what to do. */
export const draftWords = "Draft: not published yet; deliveries are refused until you publish.";

/** The automation's status as a badge (the list and the editor bar). */
export function LifecycleBadge({ status, title }: { status: Shown; title?: string }) {
  return (
    <span className={`badge ${badgeClass[status]}`} data-lifecycle={status} title={title}>
      {label[status]}
    </span>
  );
}

/**
 * The editor bar's lifecycle controls: status, Pause (with both choices in words), Resume, Archive, Restore, Stop all
 * runs (count first, a reason, then a confirm) and the history of changes. Owners and editors act; others read.
 * The state is in lifecycle/use-lifecycle.ts, the panels and the history beside it.
 */
export function LifecycleBar({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const l = useLifecycle(orgSlug, automationId);
  const { state, message } = l;
  if (state.isPending) return <p className="muted small">Loading status…</p>;
  if (state.isError) return <p className="flash flash-error">{state.error.message}</p>;
  const s = state.data;
  // The editor reloads the published versions after a Publish: a Draft becomes its status at once.
  const shown = shownStatus(s.status, s.published || (l.versions.data ?? []).length > 0);

  return (
    <section className="card lifecycle" aria-label="Automation status" data-status={s.status}>
      <div className="filters" style={{ marginBottom: 0, alignItems: "center" }}>
        <LifecycleBadge status={shown} />
        <span className="small" data-lifecycle-words="1">
          {shown === "draft" ? draftWords : s.words}
        </span>
        {canEdit && <LifecycleButtons l={l} status={s.status} />}
      </div>
      {s.status === "archived" && <p className="small muted">Archived: the editor is read-only and deliveries are refused. Restore to change or run it again.</p>}
      {message && (
        <p className={`flash ${message.ok ? "flash-ok" : "flash-error"}`} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
      {l.panel === "pause" && <PauseForm l={l} paused={s.status === "paused"} />}
      {l.panel === "archive" && <ArchivePanel l={l} />}
      {l.panel === "stop" && <StopRunsForm l={l} />}
      <LifecycleHistory history={s.history} />
    </section>
  );
}
