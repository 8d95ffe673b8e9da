"use client";

import type { FieldSpec } from "@holdfast/core/kinds";
import { useId } from "react";
import type { UseFormRegister } from "react-hook-form";
import type { ConnectionFormValues as FormValues } from "./connection-values";
import { numberValue, textValue } from "./connection-values";

/** The inputs of a connection form: a labelled field per widget (text, number, boolean, select and secret). */

/** A field: its label (the input's accessible name), the input, then its help and error (described by). */
export function Labelled({
  id,
  label,
  required,
  help,
  error,
  children,
}: { id: string; label: string; required?: boolean | undefined; help?: string | undefined; error?: string | undefined; children: React.ReactNode }) {
  return (
    <div style={{ display: "flex", flexDirection: "column", gap: "0.25rem", fontSize: "0.9rem" }}>
      <span>
        <label htmlFor={id} style={{ display: "inline" }}>
          {label}
        </label>
        {required && (
          <span aria-hidden="true" title="required" style={{ color: "#9b1c1c", marginLeft: "0.2rem" }}>
            *
          </span>
        )}
      </span>
      {children}
      {help && (
        <span id={`${id}-help`} className="small muted">
          {help}
        </span>
      )}
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      )}
    </div>
  );
}

/** What an input needs besides its registration: required, and its help and error as its description. */
export const described = (id: string, required: boolean | undefined, help: string | undefined, error: string | undefined) => ({
  id,
  "aria-required": required ? true : undefined,
  "aria-invalid": error ? true : undefined,
  "aria-describedby": [help ? `${id}-help` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined,
});

export function Field({ field, register, error }: { field: FieldSpec; register: UseFormRegister<FormValues>; error: { message?: string } | undefined }) {
  const name = `config.${field.name}` as `config.${string}`;
  const id = `${useId()}-${field.name}`;
  const w = field.widget;
  const common = { id, label: field.label, required: field.required, help: field.help, error: error?.message };
  const a11y = described(id, field.required, field.help, error?.message);
  switch (w.type) {
    case "number":
      return (
        <Labelled {...common}>
          <span style={{ display: "flex", gap: "0.4rem", alignItems: "center" }}>
            <input {...a11y} {...register(name, { setValueAs: numberValue })} type="number" inputMode="decimal" min={w.min} max={w.max} step={w.step ?? "any"} />
            {w.unit && <span className="small muted">{w.unit}</span>}
          </span>
        </Labelled>
      );
    case "boolean":
      return (
        <div style={{ display: "flex", alignItems: "flex-start", gap: "0.5rem", fontSize: "0.9rem" }}>
          <input {...a11y} {...register(name)} type="checkbox" style={{ marginTop: "0.25rem" }} />
          <div>
            <label htmlFor={id} style={{ display: "inline" }}>
              {field.label}
            </label>
            {field.help && (
              <span id={`${id}-help`} className="small muted" style={{ display: "block" }}>
                {field.help}
              </span>
            )}
            {error?.message && (
              <span id={`${id}-error`} className="field-error">
                {error.message}
              </span>
            )}
          </div>
        </div>
      );
    case "select":
      return (
        <Labelled {...common}>
          <select {...a11y} {...register(name)} style={{ font: "inherit", padding: "0.4rem 0.5rem", border: "1px solid var(--line)", borderRadius: 6 }}>
            {w.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </Labelled>
      );
    case "secret":
      return (
        <Labelled {...common}>
          <input {...a11y} {...register(name, { setValueAs: textValue(!!field.required) })} type="password" autoComplete="new-password" placeholder={w.placeholder} />
        </Labelled>
      );
    case "text":
      return (
        <Labelled {...common}>
          <input
            {...a11y}
            {...register(name, { setValueAs: textValue(!!field.required) })}
            type={w.format === "url" ? "url" : "text"}
            inputMode={w.format === "url" ? "url" : w.format === "email" ? "email" : undefined}
            placeholder={w.placeholder}
            autoComplete="off"
            spellCheck={false}
          />
        </Labelled>
      );
    default:
      // Connection kinds use only the widgets above; anything else is a kind module this form was not built for.
      return <p className="field-error">{field.label}: this form cannot show a "{w.type}" field yet.</p>;
  }
}
