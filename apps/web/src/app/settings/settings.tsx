"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { type FormEvent, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { SubmitButton } from "../submit-button";
import { AddToSlack } from "./add-to-slack";
import { ConnectionLimitsSection } from "./connection-limits";
import { Connections } from "./connections";
import { FrequencyCap } from "./frequency-cap";
import { ContactView } from "./contact-view";
import { Members } from "./members";
import { QuietHours } from "./quiet-hours";
import { ModelBudget } from "./model-budget";
import { RunBudgets } from "./run-budgets";
import { SlackLinks } from "./slack-links";

/**
 * Connections (secrets are write-only: set or replaced, never shown) and their limits, model and run budgets,
 * contacts (one contact's view: consent, suppression, time zone, runs, erase), the suppression list, members and
 * roles with the owner's invitations (members.tsx), members' Slack users. Owners change connections, limits, budgets,
 * members and invitations and a contact's zone or erase it; editors contacts and suppressions.
 */
export function Settings({ orgSlug, role, invitesByEmail }: { orgSlug: string; role: string; invitesByEmail: boolean }) {
  const owner = role === "owner";
  const editor = owner || role === "editor";
  return (
    <>
      <Connections orgSlug={orgSlug} canEdit={owner} />
      <AddToSlack orgSlug={orgSlug} canEdit={owner} />
      <ConnectionLimitsSection orgSlug={orgSlug} canEdit={owner} />
      <ModelBudget orgSlug={orgSlug} canEdit={owner} />
      <RunBudgets orgSlug={orgSlug} canEdit={owner} />
      <QuietHours orgSlug={orgSlug} canEdit={owner} />
      <FrequencyCap orgSlug={orgSlug} canEdit={owner} />
      <Contacts orgSlug={orgSlug} canEdit={editor} canManage={owner} />
      <Suppressions orgSlug={orgSlug} canEdit={editor} canRemove={owner} />
      <Members orgSlug={orgSlug} canEdit={owner} invitesByEmail={invitesByEmail} />
      <SlackLinks orgSlug={orgSlug} canEdit={owner} />
    </>
  );
}

/**
 * An address as a person reads it: an erased contact's is kept only as a one-way fingerprint (so a new delivery for
 * that address is still recognised and suppressed); the page says so, the fingerprint itself is under Details.
 */
function EmailShown({ email }: { email: string }) {
  if (!email.startsWith("sha256:")) return <>{email}</>;
  return (
    <>
      <span className="muted">An erased contact</span>
      <details className="small muted">
        <summary>Details</summary>
        address kept only as a one-way fingerprint: <code>{email.slice(0, 19)}…</code>
      </details>
    </>
  );
}

function useSubmit() {
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const run = (work: (get: (name: string) => string) => Promise<string>) => async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const get = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "";
    if (pending) return;
    setError(null);
    setDone(null);
    setPending(true);
    try {
      setDone(await work(get));
      form.reset();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setPending(false);
    }
  };
  const note = (
    <>
      {done && <span className="small ok-note">{done}</span>}
      {error && <span className="field-error">{error}</span>}
    </>
  );
  return { run, note, pending };
}

function Contacts({ orgSlug, canEdit, canManage }: { orgSlug: string; canEdit: boolean; canManage: boolean }) {
  const trpc = useTRPC();
  const [query, setQuery] = useState("");
  const [viewing, setViewing] = useState<string | null>(null);
  const list = useQuery(trpc.contacts.list.queryOptions({ orgSlug, query }));
  return (
    <section>
      <h2>Contacts</h2>
      <input className="search" placeholder="search by email" value={query} onChange={(e) => setQuery(e.target.value)} />
      {list.data?.length === 0 ? (
        <p className="empty muted">{query ? "No contact matches." : "No contacts yet: runs create them from their trigger's email."}</p>
      ) : (
        <ContactsTable rows={list.data} onView={setViewing} />
      )}
      {viewing && <ContactView key={viewing} orgSlug={orgSlug} contactId={viewing} canEdit={canManage} canEditFields={canEdit} onClose={() => setViewing(null)} />}
      {canEdit && <AddContact orgSlug={orgSlug} query={query} />}
    </section>
  );
}

type ContactRow = inferRouterOutputs<AppRouter>["contacts"]["list"][number];

function ContactsTable({ rows, onView }: { rows: ContactRow[] | undefined; onView: (id: string) => void }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Email</th>
          <th>Name</th>
          <th>Time zone</th>
          <th>Consent</th>
          <th>
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows?.map((c) => (
          <tr key={c.id}>
            <td>
              <EmailShown email={c.email} />
            </td>
            <td data-contact-name>{[c.name, c.company].filter(Boolean).join(", ") || <span className="muted">-</span>}</td>
            <td>{c.timeZone ?? <span className="muted">-</span>}</td>
            <td>{c.consent}</td>
            <td>
              <button type="button" onClick={() => onView(c.id)} aria-label={`View ${c.email}`}>
                View
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Add (or update) a contact by email; it shows in the list being searched at once. */
function AddContact({ orgSlug, query }: { orgSlug: string; query: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const upsert = useMutation(trpc.contacts.upsert.mutationOptions());
  const { run, note, pending } = useSubmit();
  return (
    <form
      className="filters"
      onSubmit={run(async (get) => {
        const row = { email: get("email"), timeZone: get("tz") || null, consent: get("consent") as "granted" };
        const saved = await upsert.mutateAsync({ orgSlug, ...row });
        const key = trpc.contacts.list.queryKey({ orgSlug, query });
        // The saved contact shows at once, whatever its list's reload takes; the reload then shows what is stored.
        const id = saved.id;
        if (id) qc.setQueryData(key, (old) => (old?.some((c) => c.id === id) ? old : [...(old ?? []), { id, name: null, company: null, ...row }]));
        await reloadAfterWrite(qc, key);
        return "contact saved";
      })}
    >
      <label>
        Email
        <input name="email" type="email" required />
      </label>
      <label>
        Time zone
        <input name="tz" placeholder="Europe/Berlin" />
      </label>
      <label>
        Consent
        <select name="consent">
          <option value="unknown">unknown</option>
          <option value="granted">granted</option>
          <option value="withdrawn">withdrawn</option>
        </select>
      </label>
      <SubmitButton pending={pending}>Save contact</SubmitButton>
      {note}
    </form>
  );
}

function Suppressions({ orgSlug, canEdit, canRemove }: { orgSlug: string; canEdit: boolean; canRemove: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.suppressions.list.queryOptions({ orgSlug }));
  const add = useMutation(trpc.suppressions.add.mutationOptions());
  const remove = useMutation(trpc.suppressions.remove.mutationOptions());
  const { run, note, pending } = useSubmit();
  const refresh = () => reloadAfterWrite(qc, trpc.suppressions.list.queryKey({ orgSlug }));
  return (
    <section>
      <h2>Suppression list</h2>
      {list.data?.length === 0 ? (
        <p className="empty muted">Nobody is suppressed. Unsubscribes, bounces and erasures land here; nothing is ever sent to them.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Email</th>
              <th>Reason</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.map((s) => (
              <tr key={s.email}>
                <td>
                  <EmailShown email={s.email} />
                </td>
                <td>{s.reason}</td>
                <td>
                  {canRemove && (
                    <button type="button" onClick={async () => (await remove.mutateAsync({ orgSlug, email: s.email }), await refresh())}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {canEdit && (
        <form
          className="filters"
          onSubmit={run(async (get) => {
            await add.mutateAsync({ orgSlug, email: get("email"), reason: get("reason") });
            await refresh();
            return "suppressed";
          })}
        >
          <label>
            Email
            <input name="email" type="email" required />
          </label>
          <label>
            Reason
            <input name="reason" required defaultValue="asked not to be contacted" />
          </label>
          <SubmitButton pending={pending}>Suppress</SubmitButton>
          {note}
        </form>
      )}
    </section>
  );
}
