"use client";

import {
  durationWords,
  type FieldSpec,
  type Variable,
} from "@holdfast/core/kinds";
import { useLayoutEffect, useRef, useState } from "react";
import { VariablePicker } from "./variable-picker";

/** What a widget may need beyond its value: the node, what exists there, the organisation's connections and members. */
export interface FormContext {
  orgSlug: string;
  nodeId: string;
  graph: { nodes: { id: string; kind: string; name?: string }[] };
  variables: Variable[];
  sample: unknown;
  connections: { name: string; kind: string; status?: string }[];
  members: { email: string; name: string; role: string }[];
  canEdit: boolean;
  /** Opens "new connection" for a kind in place; resolves with the new connection's name (or null when cancelled). */
  newConnection?: (kind: string) => Promise<string | null>;
}

export interface WidgetProps<T = unknown> {
  field: FieldSpec;
  id: string;
  value: T;
  onChange: (value: T) => void;
  onBlur: () => void;
  ctx: FormContext;
  invalid: boolean;
  /** The field's name for assistive technology where no <label> names it (a value inside a list of rows). */
  ariaLabel?: string;
}

export const emptyToUndefined = (v: string) => (v === "" ? undefined : v);

export function TextWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "text" }>;
  return (
    <input
      id={id}
      name={field.name}
      type={w.format === "email" ? "email" : w.format === "url" ? "url" : "text"}
      placeholder={w.placeholder}
      value={value ?? ""}
      aria-invalid={invalid}
      disabled={!ctx.canEdit}
      onChange={(e) => onChange(emptyToUndefined(e.target.value))}
      onBlur={onBlur}
    />
  );
}

/**
 * Text with {{variables}}: the picker inserts at the caret (at the end when the caret was never in the field), into
 * the text on screen. The field takes the focus back in the pick's own click and its caret is placed in the commit
 * that shows the new text: a focus put off to a later frame would pull the caret back from the field the marketer
 * went on to meanwhile (a busy page paints late), and what they typed there would land here.
 */
export function TemplateWidget({ field, id, value, onChange, onBlur, ctx, invalid, ariaLabel }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "template" }>;
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const hadCaret = useRef(false);
  const caretAfterPick = useRef<{ text: string; caret: number } | null>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    const after = caretAfterPick.current;
    if (!el || !after || el.value !== after.text) return;
    caretAfterPick.current = null;
    el.setSelectionRange(after.caret, after.caret);
  });
  const insert = (path: string) => {
    const el = ref.current;
    // What is on screen: the form's value can be a render behind the last keystroke.
    const text = el?.value ?? value ?? "";
    const at = el && hadCaret.current ? (el.selectionStart ?? text.length) : text.length;
    const end = el && hadCaret.current ? (el.selectionEnd ?? at) : at;
    const next = `${text.slice(0, at)}{{${path}}}${text.slice(end)}`;
    caretAfterPick.current = { text: next, caret: at + path.length + 4 };
    el?.focus();
    onChange(next);
  };
  const common = {
    id,
    name: field.name,
    ref,
    value: value ?? "",
    placeholder: w.placeholder,
    ...(ariaLabel ? { "aria-label": ariaLabel } : {}),
    "aria-invalid": invalid,
    disabled: !ctx.canEdit,
    onBlur,
    onFocus: () => {
      hadCaret.current = true;
    },
    onChange: (e: { target: { value: string } }) => onChange(emptyToUndefined(e.target.value)),
  };
  return (
    <span className="template-field">
      {w.multiline ? <textarea rows={5} {...common} /> : <input type="text" {...common} />}
      {ctx.canEdit && <VariablePicker variables={ctx.variables} onPick={insert} />}
    </span>
  );
}

export function NumberWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<number | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "number" }>;
  return (
    <span className="row-inline">
      <input
        id={id}
        name={field.name}
        type="number"
        min={w.min}
        max={w.max}
        step={w.step ?? 1}
        value={value ?? ""}
        aria-invalid={invalid}
        disabled={!ctx.canEdit}
        onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
        onBlur={onBlur}
      />
      {w.unit ? <span className="small muted">{w.unit}</span> : null}
    </span>
  );
}

const durationUnits = [
  { seconds: 86_400, label: "days" },
  { seconds: 3_600, label: "hours" },
  { seconds: 60, label: "minutes" },
  { seconds: 1, label: "seconds" },
];

/** Seconds as a number and a unit; the unit is the largest that divides the value. */
export function DurationWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<number | undefined>) {
  const fit = durationUnits.find((u) => value !== undefined && value > 0 && value % u.seconds === 0) ?? durationUnits[1];
  const [unit, setUnit] = useState(fit?.seconds ?? 3_600);
  const amount = value === undefined ? "" : value / unit;
  return (
    <span className="row-inline">
      <input
        id={id}
        name={field.name}
        type="number"
        min={0}
        step="any"
        value={amount}
        aria-invalid={invalid}
        disabled={!ctx.canEdit}
        onChange={(e) => onChange(e.target.value === "" ? undefined : Math.round(Number(e.target.value) * unit))}
        onBlur={onBlur}
      />
      <select
        aria-label={`${field.label} unit`}
        name={`${field.name}-unit`}
        value={unit}
        disabled={!ctx.canEdit}
        onChange={(e) => {
          const next = Number(e.target.value);
          setUnit(next);
          if (value !== undefined) onChange(Math.round((value / unit) * next));
        }}
      >
        {durationUnits.map((u) => (
          <option key={u.seconds} value={u.seconds}>
            {u.label}
          </option>
        ))}
      </select>
      {value !== undefined ? <span className="small muted">{durationWords(value)}</span> : null}
    </span>
  );
}

export function BooleanWidget({ field, id, value, onChange, ctx }: WidgetProps<boolean | undefined>) {
  return (
    <input id={id} name={field.name} type="checkbox" checked={value === true} disabled={!ctx.canEdit} onChange={(e) => onChange(e.target.checked)} />
  );
}

export function SelectWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "select" }>;
  const chosen = w.options.find((o) => o.value === value);
  return (
    <>
      <select
        id={id}
        name={field.name}
        value={value ?? ""}
        aria-invalid={invalid}
        disabled={!ctx.canEdit}
        onChange={(e) => onChange(emptyToUndefined(e.target.value))}
        onBlur={onBlur}
      >
        {value === undefined && <option value="">Choose…</option>}
        {w.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {chosen?.help ? <span className="small muted">{chosen.help}</span> : null}
    </>
  );
}

const newConnectionOption = "__new__";
const connectionKindWords: Record<string, string> = { smtp: "email (SMTP)", model: "AI model", crm: "CRM", slack: "Slack", http: "HTTP API" };
const withArticle = (words: string) => `${/^[aeiouAEIOU]|^HTTP/.test(words) ? "an" : "a"} ${words}`;

/** The organisation's connections of the field's kind, and "New connection…" in place. */
export function ConnectionWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "connection" }>;
  const mine = ctx.connections.filter((c) => c.kind === w.kind);
  const missing = value !== undefined && !mine.some((c) => c.name === value);
  const words = connectionKindWords[w.kind] ?? w.kind;
  return (
    <>
      <select
        id={id}
        name={field.name}
        value={value ?? ""}
        aria-invalid={invalid || missing}
        disabled={!ctx.canEdit}
        onBlur={onBlur}
        onChange={async (e) => {
          if (e.target.value !== newConnectionOption) return onChange(emptyToUndefined(e.target.value));
          const created = (await ctx.newConnection?.(w.kind)) ?? null;
          if (created) onChange(created);
        }}
      >
        <option value="">{!field.required ? "None" : mine.length ? `Choose ${withArticle(words)} connection…` : `No ${words} connection yet`}</option>
        {missing && <option value={value}>{value} (does not exist)</option>}
        {mine.map((c) => (
          <option key={c.name} value={c.name}>
            {c.name}
            {c.status && c.status !== "ok" ? ` (${c.status.replace("_", " ")})` : ""}
          </option>
        ))}
        {ctx.newConnection && <option value={newConnectionOption}>+ New {words} connection…</option>}
      </select>
      {missing && <span className="field-error small">There is no {words} connection named "{value}": pick one or create it.</span>}
      {!ctx.newConnection && mine.length === 0 && field.required && (
        <span className="small muted">Ask an owner to add {withArticle(words)} connection in Settings → Connections.</span>
      )}
    </>
  );
}

const roles = [
  { value: "", label: "No role: only the people ticked" },
  { value: "approver", label: "Anyone who is an approver" },
  { value: "editor", label: "Anyone who is an editor" },
  { value: "owner", label: "Owners only" },
];

/** Members by email (ticked) and/or a role. */
export function ApproversWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<{ users?: string[]; role?: string } | undefined>) {
  const users = value?.users ?? [];
  const set = (next: { users: string[]; role?: string | undefined }) => onChange({ users: next.users, ...(next.role ? { role: next.role } : {}) });
  const unknown = users.filter((u) => !ctx.members.some((m) => m.email === u));
  return (
    <fieldset id={id} className="approvers" aria-invalid={invalid}>
      <legend className="sr-only">{field.label}</legend>
      {ctx.members.map((m) => (
        <label key={m.email} className="check">
          <input
            type="checkbox"
            name={`${field.name}.users`}
            value={m.email}
            checked={users.includes(m.email)}
            disabled={!ctx.canEdit}
            onChange={(e) => set({ users: e.target.checked ? [...users, m.email] : users.filter((u) => u !== m.email), role: value?.role })}
          />
          {m.name} <span className="small muted">{m.email} · {m.role}</span>
        </label>
      ))}
      {unknown.map((u) => (
        <label key={u} className="check field-error">
          <input type="checkbox" checked disabled={!ctx.canEdit} onChange={() => set({ users: users.filter((x) => x !== u), role: value?.role })} />
          {u} is not a member: untick, or add them in Settings → Members
        </label>
      ))}
      <select aria-label={`${field.label}: role`} name={`${field.name}.role`} value={value?.role ?? ""} disabled={!ctx.canEdit} onChange={(e) => set({ users, role: e.target.value || undefined })}>
        {roles.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
    </fieldset>
  );
}

/** Another step of this automation. */
export function StepWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "step" }>;
  const nodes = ctx.graph.nodes.filter((n) => n.id !== ctx.nodeId && (!w.kinds || w.kinds.includes(n.kind)));
  return (
    <select id={id} name={field.name} value={value ?? ""} aria-invalid={invalid} disabled={!ctx.canEdit} onChange={(e) => onChange(emptyToUndefined(e.target.value))} onBlur={onBlur}>
      <option value="">{nodes.length ? "Choose a step…" : "No such step yet: add one first"}</option>
      {value !== undefined && !nodes.some((n) => n.id === value) && <option value={value}>{value} (not in this automation)</option>}
      {nodes.map((n) => (
        <option key={n.id} value={n.id}>
          {n.name ? `${n.name} (${n.id})` : n.id}
        </option>
      ))}
    </select>
  );
}
