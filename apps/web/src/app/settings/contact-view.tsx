"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { SubmitButton } from "../submit-button";
import { ContactAttributes } from "./contact-attributes";
import { useFlash } from "./flash";

type Detail = inferRouterOutputs<AppRouter>["contactView"]["get"];
type Contact = NonNullable<Detail["contact"]>;
type Attempt = ReturnType<typeof useFlash>["attempt"];

const when = (d: Date | string | null) =>
    d ? new Date(d).toLocaleString("en-GB", { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" }) : "-";

const runs = (n: number) => `run${n === 1 ? "" : "s"}`;

/**
 * One contact: consent, suppression, time zone (a change moves the contact's waiting runs) and its runs; Erase
 * counts the runs it would cancel first and erases only after the owner confirms that count.
 */
export function ContactView({
  orgSlug,
  contactId,
  canEdit,
  canEditFields = canEdit,
  onClose,
}: {
  orgSlug: string;
  contactId: string;
  canEdit: boolean;
  /** Name, company and kept fields: editors too. */
  canEditFields?: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const detail = useQuery(trpc.contactView.get.queryOptions({ orgSlug, contactId }));
  const { attempt, view, clear } = useFlash();
  const refresh = async () => {
    await reloadAfterWrite(qc, trpc.contactView.get.queryKey({ orgSlug, contactId }));
    await reloadAfterWrite(qc, trpc.contacts.list.pathKey());
  };
  const c = detail.data?.contact;
  const target = { orgSlug, contactId, attempt, refresh };

  return (
    <section className="contact-view card" aria-label="Contact">
      <div className="row-inline" style={{ justifyContent: "space-between", alignItems: "center" }}>
        <h3 className="card-title">{c ? (c.erased ? "Erased contact" : c.email) : "Contact"}</h3>
        <button type="button" onClick={onClose} style={{ width: "auto" }}>
          Close
        </button>
      </div>
      {detail.error && <p className="flash flash-error">{detail.error.message}</p>}
      {view}
      {c && (
        <>
          <ContactFacts c={c} />
          {canEdit && !c.erased && <ZoneForm {...target} timeZone={c.timeZone} />}

          {!c.erased && (
            <>
              <h4>Name, company and other fields</h4>
              <ContactAttributes orgSlug={orgSlug} contactId={contactId} attributes={c.attributes ?? {}} canEdit={canEditFields} />
            </>
          )}

          <h4>Runs</h4>
          <ContactRuns runs={detail.data?.runs} />

          {canEdit && <EraseContact {...target} clear={clear} />}
        </>
      )}
    </section>
  );
}

function ContactFacts({ c }: { c: Contact }) {
  return (
    <dl className="facts">
      <dt>Consent</dt>
      <dd>
        {c.consent === "granted" ? "granted" : c.consent === "withdrawn" ? "withdrawn: nothing is sent" : "unknown"}
        {c.consentChangedAt && <span className="muted small"> since {when(c.consentChangedAt)}</span>}
      </dd>
      <dt>Suppressed</dt>
      <dd>{c.suppressed ? <span className="warn">yes: {c.suppressed}</span> : "no"}</dd>
      <dt>Time zone</dt>
      <dd data-testid="contact-zone">{c.timeZone ?? <span className="muted">none (waits use the trigger's zone, the wait's own, or UTC)</span>}</dd>
    </dl>
  );
}

interface ContactTarget {
  orgSlug: string;
  contactId: string;
  attempt: Attempt;
  refresh: () => Promise<void>;
}

/** The contact moved: its waiting runs are recomputed in the new zone. */
function ZoneForm({ orgSlug, contactId, attempt, refresh, timeZone }: ContactTarget & { timeZone: string | null }) {
  const trpc = useTRPC();
  const setZone = useMutation(trpc.contactView.setZone.mutationOptions());
  return (
    <form
      className="filters"
      onSubmit={async (e) => {
        e.preventDefault();
        const zone = (e.currentTarget.elements.namedItem("zone") as HTMLInputElement).value.trim();
        await attempt(async () => {
          const r = await setZone.mutateAsync({ orgSlug, contactId, zone });
          await refresh();
          return r.message;
        });
      }}
    >
      <label>
        Time zone
        <input name="zone" list="contact-zones" placeholder="Europe/Berlin" defaultValue={timeZone ?? ""} key={timeZone ?? ""} />
      </label>
      <datalist id="contact-zones">
        {(typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []).map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <SubmitButton pending={setZone.isPending}>Change time zone</SubmitButton>
    </form>
  );
}

function ContactRuns({ runs }: { runs: Detail["runs"] | undefined }) {
  if (runs?.length === 0) return <p className="empty muted">No runs about this contact.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Run</th>
          <th>Automation</th>
          <th>Status</th>
          <th>Started</th>
        </tr>
      </thead>
      <tbody>
        {runs?.map((r) => (
          <tr key={r.id}>
            <td>
              <Link href={`/runs/${r.id}`} className="mono small">
                {r.id.slice(0, 12)}…
              </Link>
            </td>
            <td>{r.automation}</td>
            <td>
              <span className={`badge badge-${r.status}`}>{r.status}</span>
              {r.waiting && <span className="muted small"> waiting</span>}
            </td>
            <td className="small">{when(r.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Erase: first the count of runs it would cancel, then the erase, refused if that count changed meanwhile. */
function EraseContact({ orgSlug, contactId, attempt, refresh, clear }: ContactTarget & { clear: () => void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const erase = useMutation(trpc.contactView.erase.mutationOptions());
  const [confirming, setConfirming] = useState<{ running: number; total: number } | null>(null);
  const ask = async () => {
    clear();
    try {
      setConfirming(await qc.fetchQuery(trpc.contactView.eraseCount.queryOptions({ orgSlug, contactId }, { staleTime: 0 })));
    } catch (error) {
      await attempt(async () => {
        throw error;
      });
    }
  };
  const confirm = async (running: number) => {
    await attempt(async () => {
      const r = await erase.mutateAsync({ orgSlug, contactId, confirmRunning: running });
      await refresh();
      return r.message;
    });
    setConfirming(null);
  };
  return (
    <div style={{ marginTop: "1rem" }}>
      {!confirming ? (
        <button type="button" className="danger" onClick={ask}>
          Erase contact…
        </button>
      ) : (
        <div className="flash flash-error" role="alertdialog" aria-label="Confirm erase">
          <p style={{ marginTop: 0 }} data-testid="erase-count">
            Erasing cancels <strong>{confirming.running}</strong> running {runs(confirming.running)} and removes this person's data from all{" "}
            {confirming.total} {runs(confirming.total)} (inputs, step outputs, timeline details). The contact is kept only as a hash of the
            address with consent withdrawn, and a suppression of the address stays (as the hash). This cannot be undone.
          </p>
          <div className="row-inline">
            <button type="button" className="danger" disabled={erase.isPending} onClick={() => confirm(confirming.running)}>
              Erase and cancel {confirming.running} {runs(confirming.running)}
            </button>
            <button type="button" onClick={() => setConfirming(null)}>
              Keep the contact
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
