"use client";

import { type Condition, type FieldSpec, opWords, type weekdayNames } from "@holdfast/core/kinds";
import { useState } from "react";
import { TemplateWidget, type WidgetProps } from "./widgets";

/** The widgets for values with structure: a branch's comparison, key-value pairs, and JSON under Advanced. */
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
  // Rows are kept as typed (a half-typed key may collide); the value is the rows with a key. Each edit hands the form
  // its new value in the same event, never later from an effect (an edit made just before another step is selected
  // must reach the draft).
  const change = (next: [string, string][]) => {
    setRows(next);
    const out = Object.fromEntries(next.filter(([k]) => k.trim() !== ""));
    if (JSON.stringify(out) !== JSON.stringify(value ?? {})) onChange(out);
  };
  const edit = (i: number, at: 0 | 1, text: string) => change(rows.map((r, j) => (j === i ? (at === 0 ? [text, r[1]] : [r[0], text]) : r)));
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
              ariaLabel={`${w.valueLabel ?? "Value"}${k ? ` of ${k}` : ""}`}
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
            <button type="button" className="small" aria-label={`remove ${k || "row"}`} onClick={() => change(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          )}
        </div>
      ))}
      {ctx.canEdit && (
        <button type="button" className="small" onClick={() => change([...rows, ["", ""]])}>
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

export type { weekdayNames };
