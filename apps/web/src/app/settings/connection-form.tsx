"use client";

import { type ConnectionKindModule, connectionIssueWords, type FieldSpec, fieldValue } from "@holdfast/core/kinds";
import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { type FieldErrors, type Resolver, type UseFormGetValues, type UseFormRegister, type UseFormTrigger, useForm } from "react-hook-form";
import { useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { described, Field, Labelled } from "./connection-fields";
import { type ConnectionFormValues as FormValues, connectionFormSchema, scaled } from "./connection-values";

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

type TestResult = { ok: boolean; message: string };

const nameHelp = "Steps pick the connection by this name: lowercase letters, digits, - or _.";

interface ConnectionFormProps {
  orgSlug: string;
  kind: ConnectionKindModule;
  saved: SavedConnection | null;
  /** Saved: the sentence to show, and the connection's name as saved. */
  onDone: (message: string, name: string) => void;
  onCancel: () => void;
}

export function ConnectionForm({ orgSlug, kind, saved, onDone, onCancel }: ConnectionFormProps) {
  const ids = useId();
  const schema = useMemo(() => connectionFormSchema(kind, saved?.hasSecret ?? false), [kind, saved?.hasSecret]);
  const form = useForm<FormValues>({
    resolver: zodResolver(schema, { error: connectionIssueWords }) as unknown as Resolver<FormValues>,
    defaultValues: { name: saved?.name ?? "", config: scaled(kind.fields, { ...kind.defaults, ...(saved?.config ?? {}) }, "shown"), secret: "" },
    mode: "onTouched",
  });
  const { register, getValues, formState } = form;
  const errors = formState.errors;
  // What is tested and saved: the stored units, parsed by the kind's schema when it can be.
  const settings = () => {
    const stored = scaled(kind.fields, getValues("config"), "stored");
    const parsed = kind.config.safeParse(stored);
    return (parsed.success ? parsed.data : stored) as Record<string, unknown>;
  };
  const tester = useConnectionTest(orgSlug, kind, saved, form.trigger, getValues, settings);
  const { onSubmit, serverError } = useConnectionSave(orgSlug, kind, saved, onDone, form.handleSubmit, settings);
  const configErrors = (errors.config ?? {}) as FieldErrors<Record<string, unknown>>;
  const fieldError = (f: FieldSpec) => fieldValue(configErrors, f.name) as { message?: string } | undefined;
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
      <ConnectionFields ids={ids} kind={kind} saved={saved} register={register} secretError={errors.secret?.message} fieldError={fieldError} />
      <FormOutcome result={tester.result} serverError={serverError} />
      <div style={{ display: "flex", gap: "0.6rem", flexWrap: "wrap" }}>
        <button type="button" onClick={tester.runTest} disabled={tester.testing}>
          {tester.testing ? "Testing…" : "Test connection"}
        </button>
        <SubmitButton className="primary" pending={formState.isSubmitting}>
          {saved ? "Save changes" : "Save connection"}
        </SubmitButton>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The kind's basic fields, the secret, then the advanced fields folded under "More settings" (open when one is wrong). */
function ConnectionFields({
  ids,
  kind,
  saved,
  register,
  secretError,
  fieldError,
}: {
  ids: string;
  kind: ConnectionKindModule;
  saved: SavedConnection | null;
  register: UseFormRegister<FormValues>;
  secretError: string | undefined;
  fieldError: (f: FieldSpec) => { message?: string } | undefined;
}) {
  const basic = kind.fields.filter((f) => !f.advanced);
  const advanced = kind.fields.filter((f) => f.advanced);
  return (
    <>
      {basic.map((f) => (
        <Field key={f.name} field={f} register={register} error={fieldError(f)} />
      ))}
      {kind.secret && (
        <Labelled id={`${ids}-secret`} label={kind.secret.label} required={kind.secret.required} help={kind.secret.help} error={secretError}>
          <input
            {...described(`${ids}-secret`, kind.secret.required, kind.secret.help, secretError)}
            {...register("secret")}
            type="password"
            autoComplete="new-password"
            placeholder={saved?.hasSecret ? "saved – type to replace" : ""}
          />
        </Labelled>
      )}
      {advanced.length > 0 && (
        <details open={advanced.some((f) => fieldError(f) !== undefined)}>
          <summary className="small">More settings</summary>
          <div className="stack" style={{ marginTop: "0.6rem" }}>
            {advanced.map((f) => (
              <Field key={f.name} field={f} register={register} error={fieldError(f)} />
            ))}
          </div>
        </details>
      )}
    </>
  );
}

/** The test's result and the server's refusal of a save. */
function FormOutcome({ result, serverError }: { result: TestResult | null; serverError: string | null }) {
  return (
    <>
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
    </>
  );
}

/** "Test connection": the settings as typed (and the saved connection's secret unless a new one is typed). */
function useConnectionTest(
  orgSlug: string,
  kind: ConnectionKindModule,
  saved: SavedConnection | null,
  trigger: UseFormTrigger<FormValues>,
  getValues: UseFormGetValues<FormValues>,
  settings: () => Record<string, unknown>,
) {
  const trpc = useTRPC();
  const test = useMutation(trpc.connections.test.mutationOptions());
  const [result, setResult] = useState<TestResult | null>(null);
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
  return { runTest, result, testing: test.isPending };
}

/** Save: create the connection, or update the saved one (its name and secret only when changed). */
function useConnectionSave(
  orgSlug: string,
  kind: ConnectionKindModule,
  saved: SavedConnection | null,
  onDone: (message: string, name: string) => void,
  handleSubmit: ReturnType<typeof useForm<FormValues>>["handleSubmit"],
  settings: () => Record<string, unknown>,
) {
  const trpc = useTRPC();
  const create = useMutation(trpc.connections.create.mutationOptions());
  const update = useMutation(trpc.connections.update.mutationOptions());
  const [serverError, setServerError] = useState<string | null>(null);
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
  return { onSubmit, serverError };
}
