"use client";

import {
  commonIdFields,
  type Condition,
  detectIdFields,
  type DeclaredField,
  durationWords,
  type FieldSpec,
  fieldRoles,
  fieldRoleWords,
  fieldTypes,
  fieldTypeWords,
  opWords,
  payloadPaths,
  type Variable,
  weekdayNames,
} from "@holdfast/core/kinds";
import { useEffect, useRef, useState } from "react";
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
}

const emptyToUndefined = (v: string) => (v === "" ? undefined : v);

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

/** Text with {{variables}}: the picker inserts at the cursor. */
export function TemplateWidget({ field, id, value, onChange, onBlur, ctx, invalid }: WidgetProps<string | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "template" }>;
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const insert = (path: string) => {
    const el = ref.current;
    // What is on screen: the form's value can be a render behind the last keystroke.
    const text = el?.value ?? value ?? "";
    const at = el && document.activeElement !== null ? (el.selectionStart ?? text.length) : text.length;
    const end = el?.selectionEnd ?? at;
    const next = `${text.slice(0, at)}{{${path}}}${text.slice(end)}`;
    onChange(next);
    requestAnimationFrame(() => {
      el?.focus();
      const caret = at + path.length + 4;
      el?.setSelectionRange(caret, caret);
    });
  };
  const common = {
    id,
    name: field.name,
    ref,
    value: value ?? "",
    placeholder: w.placeholder,
    "aria-invalid": invalid,
    disabled: !ctx.canEdit,
    onBlur,
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

let zoneList: string[] | null = null;
function zones(): string[] {
  if (!zoneList) {
    const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
    zoneList = [...(intl.supportedValuesOf?.("timeZone") ?? []), "UTC"];
  }
  return zoneList;
}

/** Text typed or picked from a list of suggestions (the browser's own searchable datalist). */
function SuggestInput({
  field,
  id,
  value,
  onChange,
  onBlur,
  ctx,
  invalid,
  placeholder,
  options,
}: WidgetProps<string | undefined> & { placeholder: string; options: { value: string; hint?: string }[] }) {
  const listId = `${id}-list`;
  return (
    <>
      <input
        id={id}
        name={field.name}
        list={listId}
        placeholder={placeholder}
        value={value ?? ""}
        aria-invalid={invalid}
        disabled={!ctx.canEdit}
        onChange={(e) => onChange(emptyToUndefined(e.target.value))}
        onBlur={onBlur}
        autoComplete="off"
      />
      <datalist id={listId}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.hint}
          </option>
        ))}
      </datalist>
    </>
  );
}

/** A searchable IANA zone: type a city or region and pick from the list. */
export function ZoneWidget(props: WidgetProps<string | undefined>) {
  return <SuggestInput {...props} placeholder="Type a city, e.g. Berlin" options={zones().map((z) => ({ value: z }))} />;
}

/** A path into the payload, picked from the declared fields and the sample's (or typed). */
export function PayloadPathWidget(props: WidgetProps<string | undefined>) {
  const w = props.field.widget as Extract<FieldSpec["widget"], { type: "payload-path" }>;
  const paths = props.ctx.variables
    .filter((v) => v.group === "Payload")
    .map((p) => ({ value: w.prefix === "input." ? p.path : p.path.slice("input.".length), ...(p.example ? { hint: p.example } : {}) }));
  const placeholder = w.placeholder ?? (paths.length ? "Pick a field of the payload" : w.prefix === "input." ? "input.timezone" : "email");
  return <SuggestInput {...props} placeholder={placeholder} options={paths} />;
}

/**
 * The payload's field that tells submissions apart: the common id fields the sample has come first (with their
 * value), then the other common names; any path can be typed. Below, in words, what the sample says.
 */
export function IdFieldWidget(props: WidgetProps<string | undefined>) {
  const detected = detectIdFields(props.ctx.sample);
  const options = [
    ...detected.map((d) => ({ value: d.path, hint: `in your sample: ${d.example}` })),
    ...commonIdFields.filter((f) => !detected.some((d) => d.path === f)).map((f) => ({ value: f })),
  ];
  const words =
    props.ctx.sample === null || props.ctx.sample === undefined
      ? "No sample yet: once a submission arrives, the id fields it has are listed first."
      : detected.length > 0
        ? `Your sample has ${detected.map((d) => d.path).join(", ")}: choose the one your form tool sets anew for each submission.`
        : "Your sample has none of the usual id fields: identical submissions are compared instead (below).";
  return (
    <>
      <SuggestInput {...props} placeholder="id, submission_id, response_id…" options={options} />
      <span className="small muted" data-id-fields={detected.map((d) => d.path).join(",")}>
        {words}
      </span>
    </>
  );
}

const roleType: Partial<Record<DeclaredField["role"], DeclaredField["type"]>> = { email: "email", time_zone: "time_zone" };
const examplePlaceholder: Record<DeclaredField["type"], string> = {
  text: "Lumen Ltd",
  email: "maya@example.com",
  number: "42",
  time_zone: "Europe/Berlin",
  phone: "+49 30 1234567",
  url: "https://example.com",
  date: "2026-12-24",
};

/**
 * The fields a trigger's form sends, as a small table: the name the form tool sends, its type, an example, and what
 * it is to the contact. Steps can use them at once; the examples make a sample before any delivery.
 */
export function DeclaredFieldsWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<DeclaredField[] | undefined>) {
  const rows = value ?? [];
  const set = (next: DeclaredField[]) => onChange(next.length ? next : undefined);
  const edit = (i: number, patch: Partial<DeclaredField>) => set(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const hasEmail = rows.some((r) => r.role === "email");
  return (
    <div id={id} className="declared-fields" aria-invalid={invalid}>
      {rows.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
        <fieldset key={i} className="declared-field" data-declared-field={r.name}>
          <legend className="sr-only">Field {i + 1}</legend>
          <label className="declared-field-cell">
            <span className="small">Field name</span>
            <input
              className="declared-field-input"
              name={`${field.name}.${i}.name`}
              placeholder="company"
              value={r.name ?? ""}
              disabled={!ctx.canEdit}
              onChange={(e) => edit(i, { name: e.target.value })}
            />
          </label>
          <label className="declared-field-cell">
            <span className="small">It is</span>
            <select
              className="declared-field-input"
              name={`${field.name}.${i}.role`}
              value={r.role ?? "other"}
              disabled={!ctx.canEdit}
              onChange={(e) => {
                const role = e.target.value as DeclaredField["role"];
                const { keep: _keep, ...rest } = r;
                set(rows.map((x, j) => (j === i ? { ...rest, role, ...(roleType[role] ? { type: roleType[role] } : {}) } : x)));
              }}
            >
              {fieldRoles.map((role) => (
                <option key={role} value={role}>
                  {fieldRoleWords[role]}
                </option>
              ))}
            </select>
          </label>
          <label className="declared-field-cell">
            <span className="small">Type</span>
            <select
              className="declared-field-input"
              name={`${field.name}.${i}.type`}
              value={r.type ?? "text"}
              disabled={!ctx.canEdit}
              onChange={(e) => edit(i, { type: e.target.value as DeclaredField["type"] })}
            >
              {fieldTypes.map((t) => (
                <option key={t} value={t}>
                  {fieldTypeWords[t]}
                </option>
              ))}
            </select>
          </label>
          <label className="declared-field-cell">
            <span className="small">Example</span>
            <input
              className="declared-field-input"
              name={`${field.name}.${i}.example`}
              placeholder={examplePlaceholder[r.type ?? "text"]}
              value={r.example ?? ""}
              disabled={!ctx.canEdit}
              onChange={(e) => {
                const { example: _old, ...rest } = r;
                set(rows.map((x, j) => (j === i ? (e.target.value === "" ? rest : { ...rest, example: e.target.value }) : x)));
              }}
            />
          </label>
          <div className="row-inline declared-field-foot">
            {r.role === "other" ? (
              <label className="check small">
                <input
                  type="checkbox"
                  name={`${field.name}.${i}.keep`}
                  checked={r.keep === true}
                  disabled={!ctx.canEdit}
                  onChange={(e) => {
                    const { keep: _keep, ...rest } = r;
                    set(rows.map((x, j) => (j === i ? (e.target.checked ? { ...rest, keep: true } : rest) : x)));
                  }}
                />
                Keep on the contact
              </label>
            ) : (
              <span className="small muted">{r.role === "name" || r.role === "company" ? `Kept on the contact as contact.${r.role}` : ""}</span>
            )}
            {ctx.canEdit && (
              <button type="button" className="small" aria-label={`Remove field ${r.name || i + 1}`} onClick={() => set(rows.filter((_, j) => j !== i))}>
                Remove
              </button>
            )}
          </div>
        </fieldset>
      ))}
      {rows.length > 0 && !hasEmail && <p className="small muted">No field is the contact's email: runs have no contact unless the payload has "email".</p>}
      {ctx.canEdit && (
        <button
          type="button"
          className="small"
          onClick={() =>
            set([...rows, hasEmail ? { name: "", type: "text", role: "other" } : { name: "email", type: "email", example: "maya@example.com", role: "email" }])
          }
        >
          + Add field
        </button>
      )}
    </div>
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

const ops = Object.keys(opWords);

/** One comparison: a value, how to compare, and with what. Combined conditions stay under Advanced. */
export function ConditionWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<Condition | undefined>) {
  const listId = `${id}-vars`;
  if (value && !("path" in value)) {
    return <p className="small muted">This condition combines several parts: edit it under Advanced.</p>;
  }
  const c = (value ?? { path: "input.", op: "eq", value: "" }) as Condition & { path: string; op: string; value?: unknown };
  const set = (next: { path?: string; op?: string; value?: unknown }) => {
    const op = next.op ?? c.op;
    const path = next.path ?? c.path;
    const raw = "value" in next ? next.value : c.value;
    if (op === "exists" || op === "truthy") return onChange({ path, op } as Condition);
    const text = Array.isArray(raw) ? raw.join(", ") : raw === undefined || raw === null ? "" : String(raw);
    if (["gt", "gte", "lt", "lte"].includes(op)) return onChange({ path, op, value: Number(text) } as Condition);
    if (op === "in") return onChange({ path, op, value: text.split(",").map((s) => s.trim()).filter(Boolean) } as Condition);
    return onChange({ path, op, value: typeof raw === "number" || typeof raw === "boolean" ? raw : text } as Condition);
  };
  const shownValue = Array.isArray(c.value) ? c.value.join(", ") : c.value === undefined || c.value === null ? "" : String(c.value);
  return (
    <span id={id} className="condition" aria-invalid={invalid}>
      <input aria-label="value to test" name={`${field.name}.path`} list={listId} value={c.path} disabled={!ctx.canEdit} onChange={(e) => set({ path: e.target.value })} />
      <datalist id={listId}>
        {ctx.variables
          .filter((v) => v.path.startsWith("input.") || v.path.startsWith("steps."))
          .map((v) => (
            <option key={v.path} value={v.path}>
              {v.label}
            </option>
          ))}
      </datalist>
      <select aria-label="comparison" name={`${field.name}.op`} value={c.op} disabled={!ctx.canEdit} onChange={(e) => set({ op: e.target.value })}>
        {ops.map((o) => (
          <option key={o} value={o}>
            {opWords[o]}
          </option>
        ))}
      </select>
      {c.op !== "exists" && c.op !== "truthy" && (
        <input
          aria-label="compared with"
          name={`${field.name}.value`}
          value={shownValue}
          placeholder={c.op === "in" ? "a, b, c" : ""}
          disabled={!ctx.canEdit}
          onChange={(e) => set({ value: e.target.value })}
        />
      )}
    </span>
  );
}

/** Named values: CRM fields, headers. Each value may be a template. */
export function KeyValuesWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<Record<string, string> | undefined>) {
  const w = field.widget as Extract<FieldSpec["widget"], { type: "key-values" }>;
  const [rows, setRows] = useState<[string, string][]>(() => Object.entries(value ?? {}));
  // Rows are kept as typed (a half-typed key may collide); the value is the rows with a key.
  useEffect(() => {
    const next = Object.fromEntries(rows.filter(([k]) => k.trim() !== ""));
    if (JSON.stringify(next) !== JSON.stringify(value ?? {})) onChange(next);
  }, [rows, onChange, value]);
  const edit = (i: number, at: 0 | 1, text: string) => setRows(rows.map((r, j) => (j === i ? (at === 0 ? [text, r[1]] : [r[0], text]) : r)));
  return (
    <div id={id} className="key-values" aria-invalid={invalid}>
      {rows.map(([k, v], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
        <div className="row-inline" key={i}>
          <input aria-label={w.keyLabel ?? "Name"} name={`${field.name}.${i}.key`} placeholder={w.keyLabel ?? "Name"} value={k} disabled={!ctx.canEdit} onChange={(e) => edit(i, 0, e.target.value)} />
          {w.value === "template" ? (
            <TemplateWidget
              field={{ ...field, name: `${field.name}.${i}.value`, widget: { type: "template" } }}
              id={`${id}-${i}`}
              value={v}
              onChange={(t) => edit(i, 1, t ?? "")}
              onBlur={() => {}}
              ctx={ctx}
              invalid={false}
            />
          ) : (
            <input aria-label={w.valueLabel ?? "Value"} name={`${field.name}.${i}.value`} placeholder={w.valueLabel ?? "Value"} value={v} disabled={!ctx.canEdit} onChange={(e) => edit(i, 1, e.target.value)} />
          )}
          {ctx.canEdit && (
            <button type="button" className="small" aria-label={`remove ${k || "row"}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          )}
        </div>
      ))}
      {ctx.canEdit && (
        <button type="button" className="small" onClick={() => setRows([...rows, ["", ""]])}>
          + Add {w.keyLabel?.toLowerCase() ?? "row"}
        </button>
      )}
    </div>
  );
}

/** The odd setting no widget covers, as JSON. */
export function JsonWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<unknown>) {
  const [text, setText] = useState(() => (value === undefined ? "" : JSON.stringify(value, null, 2)));
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <textarea
        id={id}
        name={field.name}
        rows={4}
        spellCheck={false}
        value={text}
        aria-invalid={invalid || error !== null}
        disabled={!ctx.canEdit}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === "") return (setError(null), onChange(undefined));
          try {
            onChange(JSON.parse(e.target.value));
            setError(null);
          } catch {
            setError("Not valid JSON yet: the last valid value is kept.");
          }
        }}
      />
      {error && <span className="field-error small">{error}</span>}
    </>
  );
}

export { weekdayNames };
