"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { useFlash } from "./flash";

type Unit = "hours" | "days" | "weeks";
const unitHours: Record<Unit, number> = { hours: 1, days: 24, weeks: 168 };

/** A period as it was most likely set: whole weeks, whole days, else hours. */
function periodParts(hours: number): { amount: number; unit: Unit } {
  if (hours % 168 === 0) return { amount: hours / 168, unit: "weeks" };
  if (hours % 24 === 0) return { amount: hours / 24, unit: "days" };
  return { amount: hours, unit: "hours" };
}

export function capSentence(cap: { count: number; periodHours: number }): string {
  const { amount, unit } = periodParts(cap.periodHours);
  const every = amount === 1 ? unit.slice(0, -1) : `${amount} ${unit}`;
  return `at most ${cap.count} email${cap.count === 1 ? "" : "s"} per contact every ${every}`;
}

/**
 * Settings -> Frequency cap: at most N emails to one address in any period, across every automation but the ones
 * marked transactional (on the automation's page, with what its capped sends do). Owners change it; others read.
 */
export function FrequencyCap({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const view = useQuery(trpc.frequencyCap.get.queryOptions({ orgSlug }));
  const { attempt, view: flash } = useFlash();
  const d = view.data;
  return (
    <section className="frequency-cap" id="frequency-cap" aria-label="Frequency cap">
      <h2>Frequency cap</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        Limits how many emails one contact receives from all your automations together. Counted when each email is about to go out; an automation marked
        transactional (receipts, password resets) is neither limited nor counted. A send over the cap waits until the cap allows it, or is skipped, as its
        automation says. Test runs send nothing, so they are never counted.
      </p>
      {view.isError && <p className="field-error">Could not load the frequency cap: {view.error.message}</p>}
      {d && (
        <p data-frequency-cap={d.cap ? `${d.cap.count}/${d.cap.periodHours}h` : "off"}>
          <strong>{d.cap ? `On: ${capSentence(d.cap)}.` : "Off: no limit on how many emails a contact receives."}</strong>
          {d.updatedBy && d.updatedAt && (
            <span className="small muted">
              {" "}
              Last changed by {d.updatedBy.replace(/^user:/, "")} on {new Date(d.updatedAt).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" })}.
            </span>
          )}
        </p>
      )}
      {flash}
      {d && canEdit && <CapForm orgSlug={orgSlug} cap={d.cap} attempt={attempt} />}
      {d && !canEdit && <p className="small muted">Only owners change the frequency cap.</p>}
    </section>
  );
}

function CapForm({ orgSlug, cap, attempt }: { orgSlug: string; cap: { count: number; periodHours: number } | null; attempt: ReturnType<typeof useFlash>["attempt"] }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const set = useMutation(trpc.frequencyCap.set.mutationOptions());
  const [on, setOn] = useState(cap !== null);
  const period = periodParts(cap?.periodHours ?? 24);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const get = (n: string) => (form.elements.namedItem(n) as HTMLInputElement | HTMLSelectElement).value;
    await attempt(async () => {
      let next: { count: number; periodHours: number } | null = null;
      if (on) {
        const count = Number(get("count"));
        const amount = Number(get("amount"));
        const hours = amount * unitHours[get("unit") as Unit];
        if (!Number.isInteger(count) || count < 1 || count > 100) throw new Error("Enter the number of emails as a whole number from 1 to 100.");
        if (!Number.isInteger(amount) || amount < 1) throw new Error("Enter the period as a whole number, such as 1 day or 12 hours.");
        if (hours > 720) throw new Error("The period can be at most 30 days (720 hours, about 4 weeks); choose a shorter one.");
        next = { count, periodHours: hours };
      }
      await set.mutateAsync({ orgSlug, cap: next });
      await reloadAfterWrite(qc, trpc.frequencyCap.get.queryKey({ orgSlug }));
      return next ? `Frequency cap saved: ${capSentence(next)}.` : "Frequency cap turned off.";
    });
  };
  return (
    <form className="stack small" onSubmit={submit} aria-label="Change the frequency cap">
      <label className="check">
        <input type="radio" name="on" checked={!on} onChange={() => setOn(false)} /> Off
      </label>
      <div className="filters">
        <label className="check">
          <input type="radio" name="on" checked={on} onChange={() => setOn(true)} /> At most
        </label>
        <input name="count" aria-label="Most emails per contact" inputMode="numeric" size={4} defaultValue={cap?.count ?? 1} disabled={!on} />
        <span>emails per contact every</span>
        <input name="amount" aria-label="Period" inputMode="numeric" size={4} defaultValue={period.amount} disabled={!on} />
        <select name="unit" aria-label="Period unit" defaultValue={period.unit} disabled={!on}>
          <option value="hours">hours</option>
          <option value="days">days</option>
          <option value="weeks">weeks</option>
        </select>
      </div>
      <div>
        <SubmitButton className="primary" pending={set.isPending}>
          Save frequency cap
        </SubmitButton>
      </div>
    </form>
  );
}
