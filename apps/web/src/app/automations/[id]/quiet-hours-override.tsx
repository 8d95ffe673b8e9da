"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { useFlash } from "../../settings/flash";
import { draftOf, type WindowDraft, WindowFields, WindowPreview, windowOf } from "../../settings/quiet-hours-window";
import { SubmitButton } from "../../submit-button";

type Mode = "organisation" | "off" | "own";

/**
 * An automation's quiet hours (issue 44), beside its email settings: the organisation's (named, with their hours),
 * none for this automation (receipts, password resets), or its own hours. Owners change it; others read the sentence.
 */
export function QuietHoursOverride({ orgSlug, automationId }: { orgSlug: string; automationId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const input = { orgSlug, automationId };
  const view = useQuery(trpc.quietHours.automation.queryOptions(input));
  const set = useMutation(trpc.quietHours.setAutomation.mutationOptions());
  const { attempt, view: flash } = useFlash();
  const v = view.data;
  if (!v) return view.isError ? <p className="field-error">Could not load the quiet hours: {view.error.message}</p> : null;
  const mode: Mode = v.override === null ? "organisation" : "off" in v.override ? "off" : "own";
  return (
    <section className="stack quiet-hours-override" aria-label="quiet hours of this automation">
      <h3>Quiet hours</h3>
      <p className="small" data-quiet-now>
        {v.sentence}
      </p>
      {flash}
      {v.canChange ? (
        <OverrideForm
          key={JSON.stringify(v.override)}
          orgSlug={orgSlug}
          mode={mode}
          initial={draftOf(v.override && !("off" in v.override) ? v.override : v.organisation)}
          orgWords={v.organisationWords}
          pending={set.isPending}
          save={(override) =>
            attempt(async () => {
              const r = await set.mutateAsync({ ...input, override });
              await reloadAfterWrite(qc, trpc.quietHours.automation.queryKey(input));
              return r.message;
            })
          }
        />
      ) : (
        <p className="small muted">Only owners change an automation's quiet hours.</p>
      )}
    </section>
  );
}

function OverrideForm(p: {
  orgSlug: string;
  mode: Mode;
  initial: WindowDraft;
  orgWords: string;
  pending: boolean;
  save: (o: null | { off: true } | ReturnType<typeof windowOf>) => Promise<boolean>;
}) {
  const [mode, setMode] = useState<Mode>(p.mode);
  const [draft, setDraft] = useState(p.initial);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void p.save(mode === "organisation" ? null : mode === "off" ? { off: true } : windowOf(draft));
  };
  const choice = (value: Mode, label: string) => (
    <label className="check">
      <input type="radio" name="automation-quiet" value={value} checked={mode === value} onChange={() => setMode(value)} />
      {label}
    </label>
  );
  return (
    <form className="stack" onSubmit={submit} aria-label="change this automation's quiet hours">
      {choice("organisation", `Use the organisation's quiet hours (${p.orgWords})`)}
      {choice("off", "No quiet hours for this automation")}
      {choice("own", "Custom hours for this automation")}
      {mode === "own" && (
        <>
          <WindowFields name="automation-quiet" draft={draft} onChange={setDraft} disabled={false} />
          <WindowPreview orgSlug={p.orgSlug} window={windowOf(draft)} />
        </>
      )}
      <div>
        <SubmitButton className="primary" pending={p.pending}>Save quiet hours</SubmitButton>
      </div>
    </form>
  );
}
