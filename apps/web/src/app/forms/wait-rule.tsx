"use client";

import { ruleWords, type WaitRule, weekdayNames, zoneWords } from "@holdfast/core/kinds";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../server/trpc/client";
import { ZoneWidget } from "./payload-widgets";
import { DurationWidget, type WidgetProps } from "./widgets";

const kinds: { value: WaitRule["kind"]; label: string }[] = [
  { value: "next_weekday", label: "Until a time on the next weekday" },
  { value: "next_weekdays", label: "Until a time on chosen days" },
  { value: "duration", label: "For a while" },
  { value: "local_datetime", label: "Until a date and time" },
];

const fresh: Record<WaitRule["kind"], WaitRule> = {
  duration: { kind: "duration", seconds: 3_600 },
  next_weekday: { kind: "next_weekday", at: "09:00" },
  next_weekdays: { kind: "next_weekdays", days: [1], at: "09:00" },
  local_datetime: { kind: "local_datetime", at: "2027-01-04T09:00" },
};

/**
 * The wait rule, written as a sentence ("Wait until 09:00 on the next weekday in the contact's time zone"), with the
 * next three due instants for a sample zone (from the database's clock), noting a clock change between them.
 */
export function WaitRuleWidget(props: WidgetProps<WaitRule | undefined> & { zone?: string | undefined; zoneFrom?: string | undefined }) {
  const { field, id, value, onChange, ctx, zone, zoneFrom } = props;
  const rule = value ?? fresh.next_weekday;
  const [previewZone, setPreviewZone] = useState<string | undefined>(undefined);
  const shownZone = previewZone ?? zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
  const trpc = useTRPC();
  const preview = useQuery(
    trpc.kinds.previewWait.queryOptions({ orgSlug: ctx.orgSlug, rule, zone: shownZone }, { enabled: value !== undefined, retry: false, staleTime: 30_000 }),
  );
  return (
    <div id={id} className="wait-rule stack">
      <select aria-label="kind of wait" name={`${field.name}.kind`} value={rule.kind} disabled={!ctx.canEdit} onChange={(e) => onChange(fresh[e.target.value as WaitRule["kind"]])}>
        {kinds.map((k) => (
          <option key={k.value} value={k.value}>
            {k.label}
          </option>
        ))}
      </select>
      {rule.kind === "duration" && (
        <DurationWidget {...props} field={{ ...field, name: `${field.name}.seconds` }} id={`${id}-seconds`} value={rule.seconds} onChange={(s) => onChange({ kind: "duration", seconds: s ?? 0 })} />
      )}
      {(rule.kind === "next_weekday" || rule.kind === "next_weekdays") && (
        <label className="row-inline">
          At
          <input type="time" name={`${field.name}.at`} value={rule.at} disabled={!ctx.canEdit} onChange={(e) => e.target.value && onChange({ ...rule, at: e.target.value })} />
        </label>
      )}
      {rule.kind === "next_weekdays" && <WeekdayPicker name={`${field.name}.days`} rule={rule} canEdit={ctx.canEdit} onChange={onChange} />}
      {rule.kind === "local_datetime" && (
        <input
          type="datetime-local"
          name={`${field.name}.at`}
          value={rule.at}
          disabled={!ctx.canEdit}
          onChange={(e) => e.target.value && onChange({ kind: "local_datetime", at: e.target.value.slice(0, 16) })}
        />
      )}
      <p className="rule-sentence" data-testid="rule-sentence">
        Wait {ruleWords(rule)}
        {rule.kind === "duration" ? "" : ` ${zoneWords({ zone, zoneFrom }) || "(pick a time zone below)"}`}.
      </p>
      {rule.kind !== "duration" && (
        <div className="rule-preview small">
          <label className="row-inline" htmlFor={`${id}-preview-zone`}>
            Next times for a contact in
            <ZoneWidget
              {...props}
              field={{ ...field, name: "previewZone", label: "Preview zone" }}
              id={`${id}-preview-zone`}
              value={shownZone}
              onChange={(z) => setPreviewZone(z)}
              ctx={{ ...ctx, canEdit: true }}
            />
          </label>
          {preview.isError && <span className="muted">No preview: pick a valid time zone.</span>}
          {preview.data && <NextTimes times={preview.data} />}
        </div>
      )}
    </div>
  );
}

/** The days of a wait on chosen days: at least one stays checked. */
function WeekdayPicker({
  name,
  rule,
  canEdit,
  onChange,
}: {
  name: string;
  rule: Extract<WaitRule, { kind: "next_weekdays" }>;
  canEdit: boolean;
  onChange: (rule: WaitRule) => void;
}) {
  return (
    <fieldset className="row-inline days">
      <legend className="sr-only">Days</legend>
      {weekdayNames.map((d, i) => (
        <label key={d} className="check">
          <input
            type="checkbox"
            name={name}
            value={i + 1}
            checked={rule.days.includes(i + 1)}
            disabled={!canEdit}
            onChange={(e) => {
              const days = e.target.checked ? [...rule.days, i + 1].sort() : rule.days.filter((x) => x !== i + 1);
              if (days.length) onChange({ ...rule, days });
            }}
          />
          {d.slice(0, 3)}
        </label>
      ))}
    </fieldset>
  );
}

/** The next due instants in the preview zone, with a clock change between them noted. */
function NextTimes({ times }: { times: { at: string; local: string; clockChange?: string | null | undefined }[] }) {
  return (
    <ol className="preview-list" data-testid="rule-preview">
      {times.map((p) => (
        <li key={p.at}>
          {p.local}
          {p.clockChange ? <span className="warn"> — {p.clockChange}</span> : null}
        </li>
      ))}
    </ol>
  );
}
