"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../server/trpc/client";

/**
 * The fields of a quiet-hours window (issue 44), shared by Settings and an automation's page: the days sends may go
 * out, from and to (the contact's local time), and the spread of held sends; with the sentence the window reads as,
 * from core (the words the run page uses), or what is wrong with it.
 */
export interface WindowDraft {
  days: number[];
  start: string;
  end: string;
  spreadMinutes: string;
  /** The zone for contacts without one ("" = UTC). */
  zone: string;
}

export const dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const;
export const defaultDraft: WindowDraft = { days: [1, 2, 3, 4, 5], start: "08:00", end: "20:00", spreadMinutes: "30", zone: "" };

export const draftOf = (w: { days: number[]; start: string; end: string; spreadMinutes: number; zone?: string } | null | undefined): WindowDraft =>
  w ? { days: w.days, start: w.start, end: w.end, spreadMinutes: String(w.spreadMinutes), zone: w.zone ?? "" } : defaultDraft;

/** What is sent: the spread as a number (empty: 0; not a number stays as typed so the check says so). */
export const windowOf = (d: WindowDraft) => ({
  days: [...d.days].sort((a, b) => a - b),
  start: d.start,
  end: d.end,
  spreadMinutes: d.spreadMinutes.trim() === "" ? 0 : Number(d.spreadMinutes),
  ...(d.zone.trim() === "" ? {} : { zone: d.zone.trim() }),
});

const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];

export function WindowFields({ draft, onChange, disabled, name }: { draft: WindowDraft; onChange: (d: WindowDraft) => void; disabled: boolean; name: string }) {
  const toggle = (day: number, on: boolean) => onChange({ ...draft, days: on ? [...draft.days.filter((d) => d !== day), day] : draft.days.filter((d) => d !== day) });
  return (
    <div className="stack" data-quiet-window={name}>
      <fieldset className="row-inline" disabled={disabled} style={{ border: "none", padding: 0, margin: 0 }}>
        <legend className="small" style={{ padding: 0, marginBottom: "0.25rem" }}>
          Days when emails may go out
        </legend>
        {dayNames.map((label, i) => (
          <label key={label} className="check">
            <input type="checkbox" name={`${name}-day-${i + 1}`} checked={draft.days.includes(i + 1)} onChange={(e) => toggle(i + 1, e.target.checked)} />
            {label}
          </label>
        ))}
      </fieldset>
      <div className="filters" style={{ marginBottom: 0 }}>
        <label>
          From
          <input type="time" name={`${name}-start`} value={draft.start} disabled={disabled} onChange={(e) => onChange({ ...draft, start: e.target.value })} required />
        </label>
        <label>
          To
          <input type="time" name={`${name}-end`} value={draft.end} disabled={disabled} onChange={(e) => onChange({ ...draft, end: e.target.value })} required />
        </label>
        <label>
          Spread held emails over (minutes)
          <input name={`${name}-spread`} inputMode="numeric" size={5} value={draft.spreadMinutes} disabled={disabled} onChange={(e) => onChange({ ...draft, spreadMinutes: e.target.value })} />
        </label>
        <label>
          Time zone for contacts without one
          <input name={`${name}-zone`} list={`${name}-zones`} placeholder="UTC" value={draft.zone} disabled={disabled} onChange={(e) => onChange({ ...draft, zone: e.target.value })} />
        </label>
        <datalist id={`${name}-zones`}>
          {zones.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
      </div>
      <p className="small muted">
        In each contact's own time zone (for a contact with none: the zone above, or UTC when it is empty). An email due outside these hours waits for the next opening; the spread sends the
        ones held overnight over the first minutes of the window instead of all at once (0 for none).
      </p>
    </div>
  );
}

/** The sentence the window reads as, or what is wrong with it, as it is filled in. */
export function WindowPreview({ orgSlug, window }: { orgSlug: string; window: ReturnType<typeof windowOf> | null }) {
  const trpc = useTRPC();
  const preview = useQuery({ ...trpc.quietHours.preview.queryOptions({ orgSlug, window }), placeholderData: (previous) => previous });
  // A line held for the sentence while it is read: the form below it does not move when it comes.
  if (!preview.data)
    return (
      <p className="small muted" aria-busy="true">
        Reading the hours…
      </p>
    );
  return (
    <p className={preview.data.ok ? "small" : "field-error"} data-quiet-preview={preview.data.ok ? "ok" : "error"} aria-live="polite">
      {preview.data.sentence}
    </p>
  );
}
