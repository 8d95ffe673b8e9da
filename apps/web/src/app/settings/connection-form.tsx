"use client";

import {
  type ConnectionKindModule,
  connectionIssueWords,
  connectionNameProblem,
  connectionSecretProblem,
  type FieldSpec,
  fieldValue,
} from "@holdfast/core/kinds";
import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { type FieldErrors, type Resolver, type UseFormRegister, useForm } from "react-hook-form";
import { z } from "zod";
import { useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";

/**
 * One connection's form, built from its kind's module (`@holdfast/core/kinds`): the kind's fields with their labels,
 * help and required marks, validated by the kind's own zod schema (react-hook-form + the zod resolver), the secret
 * write-only, "Test connection" (before or after saving) and Save. Renders the widgets connections use: text,
 * number, boolean, select and secret.
 */
export interface SavedConnection {
  id: string;
  name: string;
  config: Record<string, unknown>;
  hasSecret: boolean;
}

interface FormValues {
  name: string;
  config: Record<string, unknown>;
  secret: string;
}

type TestResult = { ok: boolean; message: string };

const nameHelp = "Steps pick the connection by this name: lowercase letters, digits, - or _.";

export function ConnectionForm({
  orgSlug,
  kind,
  saved,
  onDone,
  onCancel,
}: {
  orgSlug: string;
  kind: ConnectionKindModule;
  saved: SavedConnection | null;
  /** Saved: the sentence to show, and the connection's name as saved. */
  onDone: (message: string, name: string) => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const create = useMutation(trpc.connections.create.mutationOptions());
  const update = useMutation(trpc.connections.update.mutationOptions());
  const test = useMutation(trpc.connections.test.mutationOptions());
  const [result, setResult] = useState<TestResult | null>(null);
  const [serverError, setServerError] = useState<string | null>(null);
  const ids = useId();

  const schema = useMemo(
    () =>
      z
        .object({
          name: z.string().superRefine((v, ctx) => {
            const problem = connectionNameProblem(v);
            if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^Name: /, "") });
          }),
          config: kind.config,
          secret: z.string(),
        })
        .superRefine((v, ctx) => {
          const problem = connectionSecretProblem(kind, v.config, v.secret !== "" || (saved?.hasSecret ?? false));
          if (problem && kind.secret) ctx.addIssue({ code: "custom", path: ["secret"], message: problem.replace(`${kind.secret.label}: `, "") });
        }),
    [kind, saved?.hasSecret],
  );
  const {
    register,
    handleSubmit,
    trigger,
    getValues,
    formState: { errors, isSubmitting },
  } = useForm<FormValues>({
    resolver: zodResolver(schema, { error: connectionIssueWords }) as unknown as Resolver<FormValues>,
    defaultValues: { name: saved?.name ?? "", config: scaled(kind.fields, { ...kind.defaults, ...(saved?.config ?? {}) }, "shown"), secret: "" },
    mode: "onTouched",
  });

  const settings = () => {
    const stored = scaled(kind.fields, getValues("config"), "stored");
    const parsed = kind.config.safeParse(stored);
    return (parsed.success ? parsed.data : stored) as Record<string, unknown>;
  };

  async function runTest() {
    setResult(null);
    if (!(await trigger(["config", "secret"]))) {
      setResult({ ok: false, message: "Fix the fields marked in red first, then test again." });
      return;
    }
    const secret = getValues("secret");
    try {
      setResult(
        saved
          ? await test.mutateAsync({ orgSlug, connectionId: saved.id, config: settings(), ...(secret ? { secret } : {}) })
          : await test.mutateAsync({ orgSlug, kind: kind.kind, config: settings(), ...(secret ? { secret } : {}) }),
      );
    } catch (error) {
      setResult({ ok: false, message: (error as Error).message });
    }
  }

  const onSubmit = handleSubmit(async (values) => {
    setServerError(null);
    const config = settings();
    try {
      if (saved) {
        const r = await update.mutateAsync({
          orgSlug,
          connectionId: saved.id,
          config,
          ...(values.name !== saved.name ? { name: values.name } : {}),
          ...(values.secret ? { secret: values.secret } : {}),
        });
        onDone(r.message, values.name);
      } else {
        const r = await create.mutateAsync({ orgSlug, kind: kind.kind, name: values.name, config, ...(values.secret ? { secret: values.secret } : {}) });
        onDone(r.message, values.name);
      }
    } catch (error) {
      setServerError((error as Error).message);
    }
  });

  const basic = kind.fields.filter((f) => !f.advanced);
  const advanced = kind.fields.filter((f) => f.advanced);
  const configErrors = (errors.config ?? {}) as FieldErrors<Record<string, unknown>>;
  return (
    <form className="stack connection-form" onSubmit={onSubmit} noValidate style={{ maxWidth: "38rem" }} data-kind={kind.kind}>
      <h3 style={{ margin: 0 }}>
        {saved ? `Edit "${saved.name}"` : "New connection"}: {kind.label}
      </h3>
      <p className="small muted" style={{ margin: 0 }}>
        {kind.description}
      </p>
      <Labelled id={`${ids}-name`} label="Name" required help={nameHelp} error={errors.name?.message}>
        <input
          {...described(`${ids}-name`, true, nameHelp, errors.name?.message)}
          {...register("name")}
          autoComplete="off"
          placeholder={kind.kind === "smtp" ? "mailbox" : `${kind.kind}-main`}
        />
      </Labelled>
      {saved && <p className="small muted" style={{ margin: 0 }}>Renaming is refused while a published version uses the connection: those versions find it by name.</p>}
      {basic.map((f) => (
        <Field key={f.name} field={f} register={register} error={fieldValue(configErrors, f.name) as { message?: string } | undefined} />
      ))}
      {kind.secret && (
        <Labelled id={`${ids}-secret`} label={kind.secret.label} required={kind.secret.required} help={kind.secret.help} error={errors.secret?.message}>
          <input
            {...described(`${ids}-secret`, kind.secret.required, kind.secret.help, errors.secret?.message)}
            {...register("secret")}
            type="password"
            autoComplete="new-password"
            placeholder={saved?.hasSecret ? "saved – type to replace" : ""}
          />
        </Labelled>
      )}
      {advanced.length > 0 && (
        <details open={advanced.some((f) => fieldValue(configErrors, f.name) !== undefined)}>
          <summary className="small">More settings</summary>
          <div className="stack" style={{ marginTop: "0.6rem" }}>
            {advanced.map((f) => (
              <Field key={f.name} field={f} register={register} error={fieldValue(configErrors, f.name) as { message?: string } | undefined} />
            ))}
          </div>
        </details>
      )}
      {result && (
        <p className={`flash ${result.ok ? "flash-ok" : "flash-error"} test-result`} role="status" data-ok={result.ok}>
          {result.ok ? "✓ " : "✗ "}
          {result.message}
        </p>
      )}
      {serverError && (
        <p className="flash flash-error" role="alert">
          {serverError}
        </p>
      )}
      <div style={{ display: "flex", gap: "0.6rem", flexWrap: "wrap" }}>
        <button type="button" onClick={runTest} disabled={test.isPending}>
          {test.isPending ? "Testing…" : "Test connection"}
        </button>
        <SubmitButton className="primary" pending={isSubmitting}>
          {saved ? "Save changes" : "Save connection"}
        </SubmitButton>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A field: its label (the input's accessible name), the input, then its help and error (described by). */
function Labelled({
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
const described = (id: string, required: boolean | undefined, help: string | undefined, error: string | undefined) => ({
  id,
  "aria-required": required ? true : undefined,
  "aria-invalid": error ? true : undefined,
  "aria-describedby": [help ? `${id}-help` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined,
});

/**
 * Number fields with a `scale` are shown in the unit people use (dollars per million tokens) and stored in the
 * kind's (micro-dollars): the form holds shown values; what is tested and saved is converted back.
 */
function scaled(fields: readonly FieldSpec[], config: Record<string, unknown>, to: "shown" | "stored"): Record<string, unknown> {
  const out = { ...config };
  for (const f of fields) {
    const scale = f.widget.type === "number" ? f.widget.scale : undefined;
    const v = out[f.name];
    if (!scale || typeof v !== "number" || !Number.isFinite(v)) continue;
    out[f.name] = to === "stored" ? Math.round(v * scale) : v / scale;
  }
  return out;
}

/** Empty optional text is "not set" (undefined), so the schema's defaults and optionals apply. */
const textValue = (required: boolean) => (v: unknown) => (typeof v === "string" && v.trim() === "" && !required ? undefined : v);
const numberValue = (v: unknown) => (v === "" || v === null || v === undefined ? undefined : typeof v === "number" ? v : Number(v));

function Field({ field, register, error }: { field: FieldSpec; register: UseFormRegister<FormValues>; error: { message?: string } | undefined }) {
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
