"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { SubmitButton } from "../../submit-button";

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

const actionWords: Record<string, string> = { pause: "Paused", resume: "Resumed", archive: "Archived", restore: "Restored", stop_runs: "Stopped all runs", fire_wait: "Fired a wait now" };

/**
 * The editor bar's lifecycle controls: status, Pause (with both choices in words), Resume, Archive, Restore, Stop all
 * runs (count first, a reason, then a confirm) and the history of changes. Owners and editors act; others read.
 */
export function LifecycleBar({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const state = useQuery(trpc.lifecycle.get.queryOptions({ orgSlug, automationId }));
  const versions = useQuery(trpc.versions.list.queryOptions({ orgSlug, automationId }));
  const change = useMutation(trpc.lifecycle.change.mutationOptions());
  const stop = useMutation(trpc.lifecycle.stopRuns.mutationOptions());
  const [panel, setPanel] = useState<"none" | "pause" | "archive" | "stop">("none");
  const [mode, setMode] = useState<"refuse" | "hold">("refuse");
  const [runs, setRuns] = useState<"continue" | "hold">("continue");
  const [version, setVersion] = useState<number | null>(null);
  const [reason, setReason] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const count = useQuery({ ...trpc.lifecycle.countRuns.queryOptions({ orgSlug, automationId, version }), enabled: panel === "stop" });

  const refresh = () => reloadAfterWrite(queryClient, trpc.lifecycle.get.queryKey({ orgSlug, automationId }));
  const run = async (work: () => Promise<string>) => {
    setMessage(null);
    try {
      setMessage({ ok: true, text: await work() });
      setPanel("none");
    } catch (err) {
      setMessage({ ok: false, text: `Not done: ${(err as Error).message}` });
    }
    await refresh();
    // The editor's read-only state follows the status: reload the page after archive/restore.
  };
  const act = (c: Parameters<typeof change.mutateAsync>[0]["change"]) =>
    run(async () => {
      const out = await change.mutateAsync({ orgSlug, automationId, change: c });
      if (!out.changed) return "Nothing to change: it already is that way.";
      const held = out.heldRuns ? ` ${out.heldRuns} running run${out.heldRuns === 1 ? " is" : "s are"} held.` : "";
      const released = out.releasedRuns ? ` ${out.releasedRuns} held run${out.releasedRuns === 1 ? "" : "s"} released.` : "";
      if (c.action === "archive" || c.action === "restore") window.location.reload();
      return `${actionWords[c.action]}.${held}${released}`;
    });

  if (state.isPending) return <p className="muted small">Loading status…</p>;
  if (state.isError) return <p className="flash flash-error">{state.error.message}</p>;
  const s = state.data;
  const running = count.data?.running ?? null;
  // The editor reloads the published versions after a Publish: a Draft becomes its status at once.
  const shown = shownStatus(s.status, s.published || (versions.data ?? []).length > 0);

  return (
    <section className="card lifecycle" aria-label="Automation status" data-status={s.status}>
      <div className="filters" style={{ marginBottom: 0, alignItems: "center" }}>
        <LifecycleBadge status={shown} />
        <span className="small" data-lifecycle-words="1">
          {shown === "draft" ? draftWords : s.words}
        </span>
        {canEdit && s.status === "active" && (
          <button type="button" onClick={() => setPanel(panel === "pause" ? "none" : "pause")}>
            Pause…
          </button>
        )}
        {canEdit && s.status === "paused" && (
          <>
            <button type="button" className="primary" onClick={() => act({ action: "resume" })} disabled={change.isPending}>
              Resume
            </button>
            <button type="button" onClick={() => setPanel(panel === "pause" ? "none" : "pause")}>
              Change pause…
            </button>
          </>
        )}
        {canEdit && s.status !== "archived" && (
          <button type="button" onClick={() => setPanel(panel === "archive" ? "none" : "archive")}>
            Archive…
          </button>
        )}
        {canEdit && s.status === "archived" && (
          <button type="button" className="primary" onClick={() => act({ action: "restore" })} disabled={change.isPending}>
            Restore
          </button>
        )}
        {canEdit && (
          <button type="button" className="danger" onClick={() => setPanel(panel === "stop" ? "none" : "stop")}>
            Stop all runs…
          </button>
        )}
      </div>
      {s.status === "archived" && <p className="small muted">Archived: the editor is read-only and deliveries are refused. Restore to change or run it again.</p>}
      {message && (
        <p className={`flash ${message.ok ? "flash-ok" : "flash-error"}`} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}

      {panel === "pause" && (
        <form
          className="stack"
          style={{ marginTop: "0.75rem" }}
          aria-label="Pause"
          onSubmit={(e) => {
            e.preventDefault();
            void act({ action: "pause", mode, runs });
          }}
        >
          <fieldset>
            <legend>New deliveries while paused</legend>
            <label>
              <input type="radio" name="pause-mode" checked={mode === "refuse"} onChange={() => setMode("refuse")} /> Refuse them for now: the sender
              gets “503, try again later” (with Retry-After) and sends again; nothing is stored but a line in the delivery log.
            </label>
            <label>
              <input type="radio" name="pause-mode" checked={mode === "hold"} onChange={() => setMode("hold")} /> Accept and hold them: each run is
              created and waits before its first step until you resume.
            </label>
          </fieldset>
          <fieldset>
            <legend>Runs already going</legend>
            <label>
              <input type="radio" name="pause-runs" checked={runs === "continue"} onChange={() => setRuns("continue")} /> Let them continue.
            </label>
            <label>
              <input type="radio" name="pause-runs" checked={runs === "hold"} onChange={() => setRuns("hold")} /> Hold each before its next step (a step
              already under way finishes); Resume lets them go on.
            </label>
          </fieldset>
          <div>
            <SubmitButton className="primary" pending={change.isPending}>
              {s.status === "paused" ? "Save pause choices" : "Pause"}
            </SubmitButton>
          </div>
        </form>
      )}

      {panel === "archive" && (
        <section className="stack" aria-label="Archive">
          <p className="small">
            Archiving turns it off: deliveries are refused with 410 Gone (some senders stop sending on that), it leaves the automations list and its
            editor becomes read-only. Runs already going keep going (held ones stay held) unless you stop them. Restore brings it back as active.
          </p>
          <div>
            <button type="button" className="danger" onClick={() => act({ action: "archive" })} disabled={change.isPending}>
              Archive it
            </button>
          </div>
        </section>
      )}

      {panel === "stop" && (
        <form
          className="stack"
          style={{ maxWidth: 560, marginTop: "0.75rem" }}
          aria-label="Stop all runs"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              const out = await stop.mutateAsync({ orgSlug, automationId, version, reason, confirmCount: running ?? 0 });
              await count.refetch();
              const later = out.requested ? ` ${out.requested} stop as soon as their outside call settles.` : "";
              return `Stopped: ${out.cancelled} cancelled.${later} What they already sent or wrote stays as it is.`;
            });
          }}
        >
          <label>
            Which runs
            <select value={version ?? ""} onChange={(e) => setVersion(e.target.value ? Number(e.target.value) : null)}>
              <option value="">All versions</option>
              {(versions.data ?? []).map((v) => (
                <option key={v.version} value={v.version}>
                  Version {v.version} only
                </option>
              ))}
            </select>
          </label>
          <p data-stop-count={running ?? ""}>
            {running === null ? "Counting…" : running === 0 ? "No runs are running." : `${running} run${running === 1 ? " is" : "s are"} running and would be cancelled.`}
          </p>
          <label>
            Reason (kept on each run's timeline)
            <input name="stop-reason" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} required placeholder="Wrong list imported" />
          </label>
          <div>
            <SubmitButton className="danger" pending={stop.isPending} disabled={!running || !reason.trim()}>
              {running ? `Stop ${running} run${running === 1 ? "" : "s"}` : "Stop runs"}
            </SubmitButton>
          </div>
        </form>
      )}

      <details className="small">
        <summary>History ({s.history.length})</summary>
        {s.history.length === 0 ? (
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
              {s.history.map((h) => (
                <tr key={h.id} data-history={h.action}>
                  <td>{new Date(h.at).toLocaleString()}</td>
                  <td>{h.by.replace(/^user:/, "")}</td>
                  <td>
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
                  </td>
                  <td>{h.reason ?? <span className="muted">-</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </details>
    </section>
  );
}
