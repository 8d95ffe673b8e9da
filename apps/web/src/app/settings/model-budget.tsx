"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { SubmitButton } from "../submit-button";
import { useFlash } from "./flash";

const usd = (n: number) => `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

type Budget = inferRouterOutputs<AppRouter>["budgets"]["model"];

/** The organisation's model budget: what may be spent on AI model calls, spent and reserved so far; owners set it. */
export function ModelBudget({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const budget = useQuery(trpc.budgets.model.queryOptions({ orgSlug }));
  const { attempt, view } = useFlash();
  const b = budget.data;
  return (
    <section className="model-budget" id="model-budget">
      <h2>Model budget</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        What Draft (AI model) steps may spend each calendar month; the spend starts again at $0 on the first of the month. A new organisation starts with{" "}
        {usd(b?.defaultUsd ?? 20)} a month. A draft that would go over the budget waits until it is raised; raising it resumes the drafts that wait.
      </p>
      {view}
      {b && <ModelSpend b={b} />}
      {b && b.models.length > 0 && <ModelPrices models={b.models} />}
      {canEdit && <BudgetForm orgSlug={orgSlug} b={b} attempt={attempt} />}
    </section>
  );
}

function ModelSpend({ b }: { b: Budget }) {
  const left = Math.max(0, b.allowedUsd - b.spentUsd - b.reservedUsd);
  return (
    <dl className="facts" aria-label="Model spend">
      <dt>Budget</dt>
      <dd data-testid="budget-allowed">{b.set ? `${usd(b.allowedUsd)} a month` : "not set: Draft steps wait until one is set"}</dd>
      <dt>Spent this month</dt>
      <dd data-testid="budget-spent">{usd(b.spentUsd)}</dd>
      <dt>Reserved by calls in progress</dt>
      <dd>{usd(b.reservedUsd)}</dd>
      <dt>Left this month</dt>
      <dd data-testid="budget-left">{usd(left)}</dd>
      {b.parkedSteps > 0 && (
        <>
          <dt>Drafts waiting for budget</dt>
          <dd className="warn">
            {b.parkedSteps} step{b.parkedSteps === 1 ? "" : "s"}
          </dd>
        </>
      )}
    </dl>
  );
}

/** What each model connection's calls cost, as the budget counts them. */
function ModelPrices({ models }: { models: Budget["models"] }) {
  return (
    <table className="small model-prices" aria-label="Model prices">
      <thead>
        <tr>
          <th>Model connection</th>
          <th>Input</th>
          <th>Output</th>
        </tr>
      </thead>
      <tbody>
        {models.map((m) => (
          <tr key={m.name} data-model-connection={m.name}>
            <td>
              {m.name}
              {m.model ? <span className="muted"> ({m.model})</span> : null}
            </td>
            <td>{m.inputUsdPerMTok === null ? "not set" : `${usd(m.inputUsdPerMTok)} per million tokens`}</td>
            <td>{m.outputUsdPerMTok === null ? "not set" : `${usd(m.outputUsdPerMTok)} per million tokens`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Owners set the monthly budget; raising it resumes the drafts that wait. */
function BudgetForm({ orgSlug, b, attempt }: { orgSlug: string; b: Budget | undefined; attempt: ReturnType<typeof useFlash>["attempt"] }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const set = useMutation(trpc.budgets.setModel.mutationOptions());
  return (
    <form
      className="filters"
      onSubmit={async (e) => {
        e.preventDefault();
        const raw = (e.currentTarget.elements.namedItem("usd") as HTMLInputElement).value;
        await attempt(async () => {
          const n = Number(raw);
          if (raw.trim() === "" || !Number.isFinite(n) || n < 0) throw new Error("Enter the budget as a number of US dollars, such as 25 or 12.50.");
          const r = await set.mutateAsync({ orgSlug, usd: n });
          await reloadAfterWrite(qc, trpc.budgets.model.queryKey({ orgSlug }));
          return r.message;
        });
      }}
    >
      <label>
        Budget in US dollars a month
        <input name="usd" inputMode="decimal" placeholder="25.00" defaultValue={b?.set ? String(b.allowedUsd) : ""} key={b?.allowedUsd ?? "none"} />
      </label>
      <SubmitButton className="primary" pending={set.isPending}>
        Save budget
      </SubmitButton>
    </form>
  );
}
