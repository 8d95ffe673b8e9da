"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { numberOrNull, useFlash } from "./flash";

const days = (seconds: number) => (seconds % 86_400 === 0 ? `${seconds / 86_400} days` : seconds % 3600 === 0 ? `${seconds / 3600} hours` : `${seconds} seconds`);

/**
 * Run budgets: the most steps one run may execute and how long it may live, as the organisation's defaults and per
 * automation (empty = the default). A run that reaches either stops with that reason. New runs only.
 */
export function RunBudgets({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const view = useQuery(trpc.budgets.runs.queryOptions({ orgSlug }));
  const set = useMutation(trpc.budgets.setRuns.mutationOptions());
  const { attempt, view: flash } = useFlash();
  const d = view.data;

  const save = (automationSlug: string | null) => async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const get = (n: string) => (form.elements.namedItem(n) as HTMLInputElement).value;
    await attempt(async () => {
      const maxSteps = numberOrNull(get("maxSteps"));
      const ageDays = numberOrNull(get("maxAgeDays"));
      if ((maxSteps !== null && !Number.isInteger(maxSteps)) || (ageDays !== null && !(ageDays > 0))) {
        throw new Error("Steps are a whole number (such as 1000) and the age a number of days (such as 90 or 0.5).");
      }
      const r = await set.mutateAsync({ orgSlug, automationSlug, maxSteps, maxAgeSeconds: ageDays === null ? null : Math.round(ageDays * 86_400) });
      await reloadAfterWrite(qc, trpc.budgets.runs.queryKey({ orgSlug }));
      return r.message;
    });
  };

  return (
    <section className="run-budgets">
      <h2>Run budgets</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        A run stops (failed, with the reason) when it has executed the most steps allowed or is older than its age limit: a loop or a forgotten wait cannot run
        for ever. Changes apply to runs that start afterwards.
      </p>
      {flash}
      {d && (
        <table>
          <thead>
            <tr>
              <th>For</th>
              <th>Most steps per run</th>
              <th>Longest age (days)</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            <RunBudgetRow
              label="Organisation default"
              steps={d.org.maxSteps}
              ageSeconds={d.org.maxAgeSeconds}
              placeholderSteps=""
              placeholderAge=""
              canEdit={canEdit}
              onSubmit={save(null)}
              pending={set.isPending}
            />
            {d.automations.map((a) => (
              <RunBudgetRow
                key={a.id}
                label={a.name}
                steps={a.maxSteps}
                ageSeconds={a.maxAgeSeconds}
                placeholderSteps={`${d.org.maxSteps ?? ""} (default)`}
                placeholderAge={d.org.maxAgeSeconds ? `${d.org.maxAgeSeconds / 86_400} (default)` : ""}
                canEdit={canEdit}
                onSubmit={save(a.slug)}
                pending={set.isPending}
              />
            ))}
          </tbody>
        </table>
      )}
      {d && !canEdit && (
        <p className="small muted">
          Default: {d.org.maxSteps ?? "-"} steps, {d.org.maxAgeSeconds ? days(d.org.maxAgeSeconds) : "-"}. Only owners change budgets.
        </p>
      )}
    </section>
  );
}

function RunBudgetRow(p: {
  label: string;
  steps: number | null;
  ageSeconds: number | null;
  placeholderSteps: string;
  placeholderAge: string;
  canEdit: boolean;
  onSubmit: (e: React.FormEvent<HTMLFormElement>) => void;
  pending: boolean;
}) {
  const formId = `run-budget-${p.label.replace(/\W+/g, "-")}`;
  const age = p.ageSeconds === null ? "" : String(Math.round((p.ageSeconds / 86_400) * 1000) / 1000);
  return (
    <tr>
      <td>{p.label}</td>
      <td>
        {p.canEdit ? (
          <input form={formId} name="maxSteps" aria-label={`Most steps per run for ${p.label}`} inputMode="numeric" size={10} defaultValue={p.steps ?? ""} placeholder={p.placeholderSteps} key={`s${p.steps}`} />
        ) : (
          (p.steps ?? <span className="muted">default</span>)
        )}
      </td>
      <td>
        {p.canEdit ? (
          <input form={formId} name="maxAgeDays" aria-label={`Longest age in days for ${p.label}`} inputMode="decimal" size={10} defaultValue={age} placeholder={p.placeholderAge} key={`a${age}`} />
        ) : (
          (age || <span className="muted">default</span>)
        )}
      </td>
      <td>
        {p.canEdit && (
          <form id={formId} onSubmit={p.onSubmit}>
            <SubmitButton pending={p.pending}>Save</SubmitButton>
          </form>
        )}
      </td>
    </tr>
  );
}
