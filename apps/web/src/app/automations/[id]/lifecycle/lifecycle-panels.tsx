"use client";

import { SubmitButton } from "../../../submit-button";
import type { Lifecycle } from "./use-lifecycle";

/** The status's buttons: Pause…, Resume and Change pause…, Archive…, Restore, Stop all runs…. */
export function LifecycleButtons({ l, status }: { l: Lifecycle; status: "active" | "paused" | "archived" }) {
  return (
    <>
      {status === "active" && (
        <button type="button" onClick={() => l.toggle("pause")}>
          Pause…
        </button>
      )}
      {status === "paused" && (
        <>
          <button type="button" className="primary" onClick={() => l.act({ action: "resume" })} disabled={l.change.isPending}>
            Resume
          </button>
          <button type="button" onClick={() => l.toggle("pause")}>
            Change pause…
          </button>
        </>
      )}
      {status !== "archived" && (
        <button type="button" onClick={() => l.toggle("archive")}>
          Archive…
        </button>
      )}
      {status === "archived" && (
        <button type="button" className="primary" onClick={() => l.act({ action: "restore" })} disabled={l.change.isPending}>
          Restore
        </button>
      )}
      <button type="button" className="danger" onClick={() => l.toggle("stop")}>
        Stop all runs…
      </button>
    </>
  );
}

/** Pause, with both choices in words: what new deliveries get and what runs already going do. */
export function PauseForm({ l, paused }: { l: Lifecycle; paused: boolean }) {
  const { mode, setMode, runs, setRuns } = l;
  return (
    <form
      className="stack"
      style={{ marginTop: "0.75rem" }}
      aria-label="Pause"
      onSubmit={(e) => {
        e.preventDefault();
        void l.act({ action: "pause", mode, runs });
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
        <SubmitButton className="primary" pending={l.change.isPending}>
          {paused ? "Save pause choices" : "Pause"}
        </SubmitButton>
      </div>
    </form>
  );
}

/** Archive, with what it does said first. */
export function ArchivePanel({ l }: { l: Lifecycle }) {
  return (
    <section className="stack" aria-label="Archive">
      <p className="small">
        Archiving turns it off: deliveries are refused with 410 Gone (some senders stop sending on that), it leaves the automations list and its
        editor becomes read-only. Runs already going keep going (held ones stay held) unless you stop them. Restore brings it back as active.
      </p>
      <div>
        <button type="button" className="danger" onClick={() => l.act({ action: "archive" })} disabled={l.change.isPending}>
          Archive it
        </button>
      </div>
    </section>
  );
}

/** Stop all runs: which versions, the count first, a reason, then the confirm. */
export function StopRunsForm({ l }: { l: Lifecycle }) {
  const running = l.count.data?.running ?? null;
  return (
    <form
      className="stack"
      style={{ maxWidth: 560, marginTop: "0.75rem" }}
      aria-label="Stop all runs"
      onSubmit={(e) => {
        e.preventDefault();
        void l.stopRuns();
      }}
    >
      <label>
        Which runs
        <select value={l.version ?? ""} onChange={(e) => l.setVersion(e.target.value ? Number(e.target.value) : null)}>
          <option value="">All versions</option>
          {(l.versions.data ?? []).map((v) => (
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
        <input name="stop-reason" value={l.reason} onChange={(e) => l.setReason(e.target.value)} maxLength={500} required placeholder="Wrong list imported" />
      </label>
      <div>
        <SubmitButton className="danger" pending={l.stop.isPending} disabled={!running || !l.reason.trim()}>
          {running ? `Stop ${running} run${running === 1 ? "" : "s"}` : "Stop runs"}
        </SubmitButton>
      </div>
    </form>
  );
}
